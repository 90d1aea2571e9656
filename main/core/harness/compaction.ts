import type { EventOf, ModelPin, SessionEvent } from '../../common/events.js';
import type { Payload } from '../../common/payload.js';
import { createProvider, type ProviderKeys } from '../../providers/index.js';
import type { ModelProvider } from '../../providers/types.js';
import { createToolRegistry } from '../../tools/registry.js';
import { buildCompaction, measureNextRequest } from '../compaction/compact.js';
import { compactedTraceDetail, traceCompaction } from '../compaction/hook.js';
import { resolveCompactionSettings, type CompactionSettings } from '../compaction/settings.js';
import { loadEstimator } from '../compaction/tokens.js';
import type { SessionLog } from '../log/sessionLog.js';
import { formatPayloadText } from '../projection/payloadText.js';
import { projectView } from '../projection/projectPayload.js';
import { foldSession } from '../turn/state.js';
import { manualPreCompact, type ManualHookOptions } from './hookHost.js';
import { describeError } from './describeError.js';
import { HarnessError } from './errors.js';
import { systemPromptFor } from './workspace.js';

/** What compacting on demand needs besides the log. */
export type CompactNowOptions = {
  /** settings.json's compaction block; the session's own pinned values win, as for its turns. */
  settings: Partial<CompactionSettings>;
  /** The session's model for its pin. May throw when the pin cannot be used here; the caller words that. */
  provider: (pin: ModelPin) => ModelProvider;
  /** Seq of a compaction to re-run over the same range (both stay in the log). */
  rerun?: number;
  signal?: AbortSignal;
  /** Called with the appended compaction event, before it is traced (and with each hook run before it). */
  onEvent?: (event: SessionEvent) => void;
  /**
   * Issue #30: the user's PreCompact hooks (trigger `manual`) run first, with this environment (the user's home,
   * what is redacted); a hook's `continue: false` skips the compaction. Without it, no hook runs.
   */
  hooks?: ManualHookOptions;
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
  let events = log.read();
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
  if (options.hooks) {
    const seenBefore = state.lastSeq;
    const ran = await manualPreCompact(log, created, state, options.hooks);
    for (const run of ran?.runs ?? []) options.onEvent?.(run);
    if (ran?.stop)
      return {
        status: 'skipped',
        reason: `a PreCompact hook stopped the compaction: ${ran.stopReason ?? 'no reason given'}`,
      };
    if (state.lastSeq !== seenBefore) events = log.read();
  }
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

/** What compacting on demand needs besides the log. */
export type RunCompactionOptions = {
  compaction: Partial<CompactionSettings>;
  keys: ProviderKeys;
  env: NodeJS.ProcessEnv;
  /** Seq of a compaction to re-run over the same range (both stay in the log). */
  rerun?: number;
  signal?: AbortSignal;
  onEvent: (event: SessionEvent) => void;
  /** What the user's PreCompact hooks say (systemMessage, a failure). */
  onNotice?: (text: string) => void;
};

/**
 * compactions.run: core compactNow (main/core/harness/compaction.ts) on a session open for writing, its
 * outcomes as IPC results and errors: `provider` when the model cannot be used or the summary fails,
 * `cancelled` when stopped, `not_found` for a re-run of a non-compaction, `invalid_state` otherwise.
 */
export async function runCompaction(
  log: SessionLog,
  options: RunCompactionOptions,
): Promise<
  { status: 'compacted'; compaction: EventOf<'compaction'> } | { status: 'skipped'; reason: string }
> {
  const outcome = await compactNow(log, {
    settings: options.compaction,
    provider: (pin) => {
      try {
        return createProvider(pin, options.keys, options.env);
      } catch (error) {
        throw new HarnessError(
          'provider',
          `this session's model ${pin.provider}:${pin.model} cannot be used here: ${describeError(error).message}`,
        );
      }
    },
    onEvent: options.onEvent,
    hooks: {
      env: options.env,
      keys: options.keys,
      ...(options.onNotice ? { onNotice: options.onNotice } : {}),
    },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.rerun !== undefined ? { rerun: options.rerun } : {}),
  });
  switch (outcome.status) {
    case 'compacted':
      return { status: 'compacted', compaction: outcome.event };
    case 'skipped':
      return { status: 'skipped', reason: outcome.reason };
    case 'failed':
      throw new HarnessError(
        outcome.aborted ? 'cancelled' : 'provider',
        `${outcome.reason}; the log is unchanged`,
      );
    case 'invalid_session':
      throw new HarnessError('invalid_state', outcome.reason);
    case 'not_a_compaction':
      throw new HarnessError('not_found', outcome.reason);
    case 'conflict':
      throw new HarnessError('invalid_state', 'the session changed while it was being compacted: try again');
  }
}

/**
 * The payload the next turn would send, and the same rebuilt as if compaction `seq` had never been appended,
 * both as text for a diff editor. The system prompt is the one turns send (the session's, plus the workspace
 * description of a checkout session). Reads only. `not_found` when `seq` is not a compaction.
 */
export function comparePayloads(
  log: SessionLog,
  seq: number,
): { current: { text: string; messageCount: number }; without: { text: string; messageCount: number } } {
  const [event] = log.read({ fromSeq: seq, toSeq: seq });
  if (event?.kind !== 'compaction') {
    throw new HarnessError('not_found', `event ${seq} of session ${log.id} is not a compaction`);
  }
  const [created] = log.read({ fromSeq: 1, limit: 1 });
  if (created?.kind !== 'session_created') {
    throw new HarnessError('invalid_state', `session ${log.id} has no session_created event`);
  }
  const system = systemPromptFor(log.dir, created);
  const render = (payload: Payload) => ({
    text: formatPayloadText(payload),
    messageCount: payload.messages.length,
  });
  return {
    current: render(projectView(log.projectionView(), { system })),
    without: render(projectView(log.projectionView({ withoutCompaction: seq }), { system })),
  };
}
