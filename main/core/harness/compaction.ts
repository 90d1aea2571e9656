import type { EventOf, ModelPin, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { systemPromptFor } from './workspace.js';
import { foldSession } from '../turn/state.js';
import type { ModelProvider } from '../../providers/types.js';
import { createToolRegistry } from '../../tools/registry.js';
import { buildCompaction, measureNextRequest } from '../compaction/compact.js';
import { compactedTraceDetail, traceCompaction } from '../compaction/hook.js';
import { resolveCompactionSettings, type CompactionSettings } from '../compaction/settings.js';
import { loadEstimator } from '../compaction/tokens.js';

/** What compacting on demand needs besides the log. */
export type CompactNowOptions = {
  /** settings.json's compaction block; the session's own pinned values win, as for its turns. */
  settings: Partial<CompactionSettings>;
  /** The session's model for its pin. May throw when the pin cannot be used here; the caller words that. */
  provider: (pin: ModelPin) => ModelProvider;
  /** Seq of a compaction to re-run over the same range (both stay in the log). */
  rerun?: number;
  signal?: AbortSignal;
  /** Called with the appended compaction event, before it is traced. */
  onEvent?: (event: SessionEvent) => void;
};

/** How a manual compaction ended; only `compacted` appended anything. */
export type CompactNowOutcome =
  | { status: 'compacted'; event: EventOf<'compaction'>; requests: number }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string; aborted: boolean }
  /** The log has no session_created event. */
  | { status: 'invalid_session'; reason: string }
  /** `rerun` names an event that is not a compaction. */
  | { status: 'not_a_compaction'; reason: string }
  /** Another writer appended while the summary was made; nothing was appended. */
  | { status: 'conflict' };

/**
 * Compacts a session open for writing now, as the turn would at its threshold (`keel compact`, the UI's
 * compactions.run): measures the next request with the prompt and tools a turn sends, summarizes the
 * original events of the older part with the session's model, appends the compaction with
 * `expectedLastSeq`, and traces every attempt (stage `compaction`, trigger `manual` or `rerun`).
 */
export async function compactNow(log: SessionLog, options: CompactNowOptions): Promise<CompactNowOutcome> {
  const events = log.read();
  const created = events[0];
  if (created?.kind !== 'session_created')
    return { status: 'invalid_session', reason: `session ${log.id} has no session_created event` };
  if (
    options.rerun !== undefined &&
    events.find((event) => event.seq === options.rerun)?.kind !== 'compaction'
  ) {
    return {
      status: 'not_a_compaction',
      reason: `event ${options.rerun} of session ${log.id} is not a compaction`,
    };
  }
  const state = foldSession(events);
  const provider = options.provider(state.pin);
  const settings = resolveCompactionSettings(options.settings, created);
  // The prompt turns send (with a checkout session's workspace description), so the measure matches them.
  const systemPrompt = systemPromptFor(log.dir, created);
  const tools = createToolRegistry(created.toolMode).definitions();
  const estimator = await loadEstimator(state.pin);
  const started = Date.now();
  const measure = measureNextRequest({
    view: log.projectionView(),
    ...(state.lastUsage ? { lastUsage: state.lastUsage } : {}),
    ...(state.lastUsageSeq !== undefined ? { lastUsageSeq: state.lastUsageSeq } : {}),
    systemPrompt,
    tools,
    estimator,
  });
  const outcome = await buildCompaction({
    events,
    pin: state.pin,
    provider,
    estimator,
    systemPrompt,
    tools,
    keepRecent: settings.keepRecent,
    mode: 'manual',
    tokensBefore: measure.tokens,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.rerun !== undefined ? { rerun: options.rerun } : {}),
  });
  const trace = traceCompaction(log, state.turns, started, {
    trigger: options.rerun !== undefined ? 'rerun' : 'manual',
    measuredBy: measure.source,
  });
  if (outcome.status !== 'compacted') {
    trace({ ...outcome, tokensBefore: measure.tokens });
    return outcome;
  }
  const appended = log.append(outcome.event, { expectedLastSeq: events[events.length - 1]?.seq ?? 0 });
  if (!appended.ok) return { status: 'conflict' };
  const event = appended.events[0];
  if (event?.kind !== 'compaction') throw new Error('the compaction event was not appended');
  options.onEvent?.(event);
  trace(compactedTraceDetail(event, outcome));
  return { status: 'compacted', event, requests: outcome.requests };
}
