import type { EventOf } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { BeforeRequestContext, TurnOutcome } from '../turn/engine.js';
import type { RetryOptions } from '../../providers/retry.js';
import type { ToolSpec } from '../../providers/types.js';
import { buildCompaction, measureNextRequest } from './compact.js';
import type { CompactionSettings } from './settings.js';
import { factorFor, loadEstimator, tokenUpperBound, type TokenEstimator } from './tokens.js';
import { compactionLimit } from './trigger.js';
import { visibleEvents } from '../projection/rewind.js';

/** What the automatic compaction hook needs beyond what each request's context gives it. */
export type CompactionHookOptions = {
  /** The session's log, open for writing (the same one the turn appends to). */
  log: SessionLog;
  settings: CompactionSettings;
  /** The tool definitions sent with every request (they count against the window). */
  tools: readonly ToolSpec[];
  retry?: Omit<RetryOptions, 'signal'>;
  /**
   * Issue #30: runs once a compaction is decided, before it starts (the user's PreCompact hooks); an outcome
   * it returns ends the turn instead (a hook's `continue: false`), nothing compacted.
   */
  beforeCompact?: (context: BeforeRequestContext) => Promise<TurnOutcome | undefined>;
  /** Issue #30: runs once the compaction is appended (SessionStart hooks, source `compact`); may end the turn. */
  afterCompact?: (context: BeforeRequestContext) => Promise<TurnOutcome | undefined>;
};

/** Trace stage of every compaction attempt (compacted, skipped or failed). */
export const COMPACTION_TRACE_STAGE = 'compaction';

/**
 * A writer of one compaction attempt's trace row (stage `compaction`): `base` (trigger, measuredBy, …)
 * then the attempt's own detail, timed from `started` to the call.
 */
export function traceCompaction(
  log: SessionLog,
  turn: number,
  started: number,
  base: Record<string, unknown>,
): (detail: Record<string, unknown>) => void {
  return (detail) =>
    log.appendTrace({
      turn,
      stage: COMPACTION_TRACE_STAGE,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      detail: { ...base, ...detail },
    });
}

/** The trace detail of an appended compaction: the same fields for automatic and manual ones. */
export function compactedTraceDetail(
  event: Pick<EventOf<'compaction'>, 'seq' | 'fromSeq' | 'through' | 'tokensBefore' | 'tokensAfter'>,
  outcome: { requests: number; chunks: number },
): Record<string, unknown> {
  return {
    status: 'compacted',
    seq: event.seq,
    fromSeq: event.fromSeq,
    through: event.through,
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    requests: outcome.requests,
    chunks: outcome.chunks,
  };
}

/**
 * A turn's beforeRequest hook that compacts when the next request would pass threshold × the pinned
 * window. Below the limit it costs the events since the last usage report and a byte count (the tokenizer is
 * loaded only when the byte bound is over the limit). It appends at most one compaction event, through
 * the turn's own `append`; a failed or stopped summary appends nothing and the request goes ahead as it
 * was. Every attempt is written to the trace (stage `compaction`).
 */
export function createCompactionHook(
  options: CompactionHookOptions,
): (context: BeforeRequestContext) => Promise<TurnOutcome | undefined> {
  const { log, settings, tools } = options;
  return async (context) => {
    const { state } = context;
    const limit = compactionLimit(state.pin.contextWindow, settings.threshold);
    if (!Number.isFinite(limit)) return undefined;
    // The log's projection is kept current (the engine sends it next); the events after the provider's last
    // report are read on demand, so measuring costs O(events since then), not O(session).
    const projection = log.projection();
    const base = {
      view: { ...projection.head, tail: [] },
      eventsAfter: (seq: number) => visibleEvents(log.read({ fromSeq: seq + 1, validate: false })),
      payload: () => projection.payload({ system: context.systemPrompt }),
      ...(state.lastUsage ? { lastUsage: state.lastUsage } : {}),
      ...(state.lastUsageSeq !== undefined ? { lastUsageSeq: state.lastUsageSeq } : {}),
      systemPrompt: context.systemPrompt,
      tools,
    };
    const factor = factorFor(state.pin);
    const upper = (text: string) => tokenUpperBound(text, factor);
    const bound: TokenEstimator = {
      encoding: 'cl100k_base',
      factor,
      lowFactor: factor,
      count: upper,
      countLow: upper,
    };
    if (measureNextRequest({ ...base, estimator: bound }).tokens <= limit) return undefined;

    const started = Date.now();
    const estimator = await loadEstimator(state.pin);
    const measure = measureNextRequest({ ...base, estimator });
    if (measure.tokens <= limit) return undefined;
    const ended = await options.beforeCompact?.(context);
    if (ended) return ended;
    const trace = traceCompaction(log, state.turns, started, {
      trigger: 'auto',
      limit,
      measuredBy: measure.source,
    });
    let outcome;
    try {
      outcome = await buildCompaction({
        events: log.read(),
        pin: state.pin,
        provider: context.provider,
        estimator,
        systemPrompt: context.systemPrompt,
        tools,
        keepRecent: settings.keepRecent,
        mode: 'auto',
        tokensBefore: measure.tokens,
        signal: context.signal,
        ...(options.retry ? { retry: options.retry } : {}),
      });
    } catch (error) {
      // A bug here must not cost the user the turn: the request goes ahead uncompacted.
      trace({
        status: 'failed',
        reason: error instanceof Error ? error.message : String(error),
        tokensBefore: measure.tokens,
      });
      return undefined;
    }
    if (outcome.status !== 'compacted') {
      trace({ ...outcome, tokensBefore: measure.tokens });
      return undefined;
    }
    const event = context.append(outcome.event);
    trace(compactedTraceDetail({ ...outcome.event, seq: event.seq }, outcome));
    return options.afterCompact?.(context);
  };
}
