import './inspector.css';
import { useCallback, useState, type JSX } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { EmptyState, ErrorState, LoadingState } from '../../components/States.js';
import { formatTokens } from '../../lib/format.js';
import { CompactionDetail } from './CompactionDetail.js';

/**
 * The compaction inspector of one session: every compaction (in effect or superseded, oldest first) and
 * the selected one in full; "Compact now" summarizes the older part of the session now, "Re-run" makes a
 * new summary of the selected compaction's range (both stay in the log).
 */
export function CompactionInspector({
  sessionId,
  seq,
  onSelect,
  running,
  readOnly,
}: {
  sessionId: string;
  /** The compaction shown; absent: the one in effect (else the newest). */
  seq: number | undefined;
  onSelect: (seq: number) => void;
  running: boolean;
  readOnly: boolean;
}): JSX.Element {
  const list = useQuery(() => call(keel().compactions.list({ sessionId })), [sessionId]);
  const [version, setVersion] = useState(0);
  const [work, setWork] = useState<{ label: string } | undefined>();
  const [message, setMessage] = useState<{ text: string; tone: 'info' | 'error' } | undefined>();
  const { reload } = list;

  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (id !== sessionId) return;
    if (event.kind === 'compaction') reload();
    // Anything appended changes the current payload the rebuild view compares against.
    setVersion((n) => n + 1);
  });

  const compactions = list.data?.compactions ?? [];
  const selected =
    compactions.find((entry) => entry.seq === seq) ??
    [...compactions].reverse().find((entry) => entry.status === 'in_effect') ??
    compactions.at(-1);

  const run = useCallback(
    async (rerun?: number) => {
      setWork({
        label:
          rerun === undefined
            ? 'Summarizing the older part of the session…'
            : `Re-running compaction #${rerun}…`,
      });
      setMessage(undefined);
      try {
        const result = await call(
          keel().compactions.run(rerun === undefined ? { sessionId } : { sessionId, rerun }),
        );
        if (result.status === 'compacted') {
          setMessage({
            text: `Compaction #${result.compaction.seq} written: events #${result.compaction.fromSeq ?? '?'}–#${result.compaction.through}.`,
            tone: 'info',
          });
          reload();
          onSelect(result.compaction.seq);
        } else {
          setMessage({ text: `Nothing compacted: ${result.reason}`, tone: 'info' });
        }
      } catch (error) {
        setMessage({ text: describeError(error), tone: 'error' });
      } finally {
        setWork(undefined);
      }
    },
    [onSelect, reload, sessionId],
  );

  const blocked = readOnly
    ? 'This session is read-only here.'
    : running
      ? 'A turn is running; compact when it ends.'
      : undefined;

  return (
    <section className="compaction-inspector" aria-label="Compaction inspector">
      <header className="inspector-header">
        <div className="inspector-title-row">
          <h2>Compactions</h2>
          <div className="inspector-actions">
            {selected ? (
              <button
                type="button"
                className="button-secondary"
                disabled={work !== undefined || blocked !== undefined}
                title={
                  blocked ??
                  `Summarize events #${selected.fromSeq}–#${selected.through} again, from the originals`
                }
                onClick={() => void run(selected.seq)}
              >
                Re-run #{selected.seq}
              </button>
            ) : null}
            <button
              type="button"
              className="button-primary"
              disabled={work !== undefined || blocked !== undefined}
              title={blocked ?? 'Summarize the older part of the session now'}
              onClick={() => void run()}
            >
              Compact now
            </button>
          </div>
        </div>
        {work ? (
          <p className="inspector-message" role="status">
            <span className="spinner" aria-hidden="true" /> {work.label}
          </p>
        ) : message ? (
          <p
            className={`inspector-message${message.tone === 'error' ? ' is-error' : ''}`}
            role={message.tone === 'error' ? 'alert' : 'status'}
          >
            {message.text}
          </p>
        ) : null}
        {compactions.length > 0 ? (
          <div className="compaction-strip" role="tablist" aria-label="Compactions of this session">
            {compactions.map((entry) => (
              <button
                key={entry.seq}
                type="button"
                role="tab"
                aria-selected={entry.seq === selected?.seq}
                className={`compaction-chip${entry.seq === selected?.seq ? ' is-current' : ''}${entry.superseded ? ' is-superseded' : ''}`}
                onClick={() => onSelect(entry.seq)}
              >
                <strong>#{entry.seq}</strong>
                <span>
                  #{entry.fromSeq}–#{entry.through}
                </span>
                {entry.tokensBefore !== undefined && entry.tokensAfter !== undefined ? (
                  <span className="muted">
                    {formatTokens(entry.tokensBefore)}→{formatTokens(entry.tokensAfter)}
                  </span>
                ) : null}
                <span className={`tag ${entry.superseded ? 'tag-warning' : 'tag-ok'}`}>
                  {entry.superseded ? 'superseded' : 'in effect'}
                </span>
              </button>
            ))}
          </div>
        ) : null}
      </header>
      {list.error ? <ErrorState message={list.error} onRetry={reload} /> : null}
      {!list.data && !list.error ? <LoadingState label="Reading compactions…" /> : null}
      {list.data && !selected ? (
        <EmptyState title="No compaction yet">
          <p className="muted">
            When a request would pass the compaction threshold, the older part of the session is summarized
            from its original events; the summary and what it replaced show up here. Compact now does it at
            once.
          </p>
        </EmptyState>
      ) : null}
      {selected ? (
        <CompactionDetail
          key={selected.seq}
          sessionId={sessionId}
          entry={selected}
          version={version}
          onSelect={onSelect}
        />
      ) : null}
    </section>
  );
}
