import './trace.css';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useLayoutEffect, useRef, useState, type JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery, useThrottledReload } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { useApp } from '../../appContext.js';
import { TokenCostChart } from '../../components/charts/TokenCostChart.js';
import { EmptyState, ErrorState, LoadingState } from '../../components/States.js';
import { TraceTotals } from './TraceTotals.js';
import { TurnTrace } from './TurnTrace.js';
import { formatCostKnown } from './traceFormat.js';

/** While a turn runs, the trace is re-read at most this often (each read summarizes the whole log). */
const REFRESH_MS = 1500;

/**
 * A session's traces and cost: totals, a chart of tokens and cost per turn, and every turn (virtualized)
 * with its timeline, tokens, cost and the subagents it spawned. Follows the session live.
 */
export function TraceView({ sessionId }: { sessionId: string }): JSX.Element {
  const { navigate } = useApp();
  const trace = useQuery(() => call(keel().trace.summary({ sessionId })), [sessionId]);
  const { reload } = trace;
  const scheduleReload = useThrottledReload(reload, REFRESH_MS);
  useSubscription('event.appended', (payload) => {
    if (payload.sessionId === sessionId) scheduleReload();
  });
  useSubscription('session.status', (payload) => {
    if (payload.sessionId === sessionId && !payload.running) reload();
  });

  const summary = trace.data?.summary;
  const turns = summary?.turns ?? [];
  const [expanded, setExpanded] = useState<ReadonlySet<number> | undefined>();
  // The newest turn starts open: it is the one a person usually came to read.
  const open = expanded ?? new Set(turns.length > 0 ? [turns[turns.length - 1]!.turn] : []);
  const toggle = (turn: number) => {
    const next = new Set(open);
    if (next.has(turn)) next.delete(turn);
    else next.add(turn);
    setExpanded(next);
  };

  const scrollRef = useRef<HTMLDivElement>(null);
  const listRef = useRef<HTMLOListElement>(null);
  const [listOffset, setListOffset] = useState(0);
  useLayoutEffect(() => {
    const offset = listRef.current?.offsetTop;
    if (offset !== undefined && offset !== listOffset) setListOffset(offset);
  });
  const virtualizer = useVirtualizer({
    count: turns.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => (open.has(turns[index]?.turn ?? -1) ? 360 : 64),
    getItemKey: (index) => turns[index]?.turn ?? index,
    overscan: 4,
    scrollMargin: listOffset,
  });

  const showTurn = (turn: number) => {
    const index = turns.findIndex((candidate) => candidate.turn === turn);
    if (index < 0) return;
    if (!open.has(turn)) toggle(turn);
    virtualizer.scrollToIndex(index, { align: 'start' });
  };

  return (
    <section className="trace-view" aria-label="Trace and cost" ref={scrollRef}>
      {trace.error ? <ErrorState message={trace.error} onRetry={reload} /> : null}
      {!summary ? (
        trace.error ? null : (
          <LoadingState label="Reading the trace…" />
        )
      ) : turns.length === 0 ? (
        <EmptyState title="Nothing traced yet">
          <p className="muted">Send a message: each turn&apos;s stages, tokens and cost show up here.</p>
        </EmptyState>
      ) : (
        <>
          <TraceTotals summary={summary} />
          <section className="trace-card" aria-labelledby="trace-chart-heading">
            <h2 id="trace-chart-heading">Tokens and cost per turn</h2>
            <TokenCostChart
              points={summary.perTurn.map((point) => ({
                ...point,
                costKnown: turns.find((turn) => turn.turn === point.turn)?.costKnown ?? true,
              }))}
              formatCost={formatCostKnown}
              onSelect={showTurn}
            />
          </section>
          <h2 className="trace-turns-heading">Turns</h2>
          <ol className="trace-turns" ref={listRef} style={{ height: virtualizer.getTotalSize() }}>
            {virtualizer.getVirtualItems().map((row) => {
              const turn = turns[row.index];
              if (!turn) return null;
              return (
                <li
                  key={row.key}
                  data-index={row.index}
                  ref={virtualizer.measureElement}
                  className="trace-turn-row"
                  style={{ transform: `translateY(${row.start - virtualizer.options.scrollMargin}px)` }}
                >
                  <TurnTrace
                    turn={turn}
                    expanded={open.has(turn.turn)}
                    onToggle={() => toggle(turn.turn)}
                    onOpenSession={(childId) => navigate({ screen: 'session', sessionId: childId })}
                  />
                </li>
              );
            })}
          </ol>
        </>
      )}
    </section>
  );
}
