import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useRef, useState, type JSX } from 'react';
import type { SessionEvent } from '../../api/types.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { ErrorState, LoadingState } from '../../components/States.js';
import { formatClock } from '../../lib/format.js';
import { describeEvent } from './eventText.js';

/** Events per page (the contract's maximum). */
const PAGE = 5000;

/** A request to bring one event into view; `nonce` lets the same seq be asked for twice. */
export type FocusRequest = { seq: number; nonce: number };

/**
 * The original events a compaction replaced (`fromSeq`…`through`), loaded page by page and virtualized,
 * so tens of thousands of them scroll smoothly. `focus` scrolls to an event and marks it.
 */
export function ReplacedEvents({
  sessionId,
  fromSeq,
  through,
  expected,
  focus,
}: {
  sessionId: string;
  fromSeq: number;
  through: number;
  /** How many events the range holds (from compactions.inspect), for the progress line. */
  expected: number;
  focus: FocusRequest | undefined;
}): JSX.Element {
  const [events, setEvents] = useState<SessionEvent[]>([]);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());

  useEffect(() => {
    let cancelled = false;
    setEvents([]);
    setDone(false);
    setError(undefined);
    void (async () => {
      try {
        let next = fromSeq;
        for (;;) {
          const page = await call(
            keel().events.page({ sessionId, fromSeq: next, toSeq: through, limit: PAGE }),
          );
          if (cancelled) return;
          const fresh = page.events.filter((event) => event.seq >= next && event.seq <= through);
          if (fresh.length > 0) setEvents((previous) => [...previous, ...fresh]);
          const last = fresh.at(-1)?.seq;
          if (last === undefined || last >= through || !page.hasAfter) break;
          next = last + 1;
        }
        if (!cancelled) setDone(true);
      } catch (failure) {
        if (!cancelled) setError(describeError(failure));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [sessionId, fromSeq, through, attempt]);

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: events.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 64,
    getItemKey: (index) => events[index]?.seq ?? index,
    overscan: 6,
    paddingStart: 6,
    paddingEnd: 12,
  });

  const [marked, setMarked] = useState<number | undefined>();
  useEffect(() => {
    if (!focus) return;
    const index = events.findIndex((event) => event.seq === focus.seq);
    if (index < 0) return;
    setMarked(focus.seq);
    virtualizer.scrollToIndex(index, { align: 'center' });
    // Only a new request moves the list; events arriving later must not re-scroll it.
  }, [focus, events.length > 0]);

  const toggle = (seq: number) =>
    setExpanded((previous) => {
      const next = new Set(previous);
      if (next.has(seq)) next.delete(seq);
      else next.add(seq);
      return next;
    });

  return (
    <section className="replaced-events" aria-label="Replaced events">
      <header className="inspector-pane-header">
        <h3>
          Replaced events{' '}
          <span className="muted">
            #{fromSeq}–#{through}
          </span>
        </h3>
        <span className="muted" role="status">
          {error
            ? null
            : done
              ? `${events.length.toLocaleString()} events`
              : `Loading ${events.length.toLocaleString()} of ${expected.toLocaleString()}…`}
        </span>
      </header>
      {error ? <ErrorState message={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {events.length === 0 && !done && !error ? <LoadingState label="Reading the original events…" /> : null}
      <div
        ref={scrollRef}
        className="replaced-events-scroll"
        tabIndex={0}
        aria-label="Replaced events list"
        role="list"
      >
        <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((row) => {
            const event = events[row.index];
            if (!event) return null;
            return (
              <div
                key={row.key}
                data-index={row.index}
                ref={virtualizer.measureElement}
                className="virtual-row"
                style={{ transform: `translateY(${row.start}px)` }}
                role="listitem"
              >
                <ReplacedEventRow
                  event={event}
                  expanded={expanded.has(event.seq)}
                  marked={marked === event.seq}
                  onToggle={toggle}
                />
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}

const ReplacedEventRow = memo(function ReplacedEventRow({
  event,
  expanded,
  marked,
  onToggle,
}: {
  event: SessionEvent;
  expanded: boolean;
  marked: boolean;
  onToggle: (seq: number) => void;
}): JSX.Element {
  const line = describeEvent(event, expanded ? 200_000 : 600);
  const long = line.text.length > 280 || line.text.split('\n').length > 4;
  return (
    <article
      className={`replaced-event tone-${line.tone}${expanded ? ' is-expanded' : ''}${marked ? ' is-marked' : ''}`}
      data-seq={event.seq}
      aria-label={`Event ${event.seq}: ${line.who}`}
    >
      <header className="replaced-event-header">
        <span className="replaced-event-seq">#{event.seq}</span>
        <span className="replaced-event-who">{line.who}</span>
        <time dateTime={event.at}>{formatClock(event.at)}</time>
        {long || expanded ? (
          <button
            type="button"
            className="link-button"
            onClick={() => onToggle(event.seq)}
            aria-expanded={expanded}
          >
            {expanded ? 'Less' : 'More'}
          </button>
        ) : null}
      </header>
      {line.text ? <pre className="replaced-event-text">{line.text}</pre> : null}
    </article>
  );
});
