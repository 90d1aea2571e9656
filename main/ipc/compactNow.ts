import { buildCompaction, measureNextRequest } from '../core/compaction/compact.js';
import { COMPACTION_TRACE_STAGE } from '../core/compaction/hook.js';
import { resolveCompactionSettings, type CompactionSettings } from '../core/compaction/settings.js';
import { loadEstimator } from '../core/compaction/tokens.js';
import type { EventOf, SessionEvent } from '../core/log/events.js';
import type { SessionLog } from '../core/log/sessionLog.js';
import { systemPromptFor } from '../core/sessions/workspaceHost.js';
import { foldSession } from '../core/turn/state.js';
import { createProvider, type ProviderKeys } from '../providers/index.js';
import { createToolRegistry } from '../tools/registry.js';
import { IpcFailure, toIpcError } from './errors.js';

/** What compacting on demand needs besides the log. */
export type CompactNowOptions = {
  compaction: Partial<CompactionSettings>;
  keys: ProviderKeys;
  env: NodeJS.ProcessEnv;
  /** Seq of a compaction to re-run over the same range (both stay in the log). */
  rerun?: number;
  signal?: AbortSignal;
  onEvent: (event: SessionEvent) => void;
};

/**
 * Compacts a session open for writing now, as the turn would at its threshold (`keel compact` from the
 * UI): summarizes the original events of the older part with the session's model, appends the compaction,
 * and traces it. Fails with `provider` when the model cannot be used and `invalid_state` when it fails.
 */
export async function compactNow(
  log: SessionLog,
  options: CompactNowOptions,
): Promise<
  { status: 'compacted'; compaction: EventOf<'compaction'> } | { status: 'skipped'; reason: string }
> {
  const events = log.read();
  const created = events[0];
  if (created?.kind !== 'session_created')
    throw new IpcFailure('invalid_state', `session ${log.id} has no session_created event`);
  if (
    options.rerun !== undefined &&
    events.find((event) => event.seq === options.rerun)?.kind !== 'compaction'
  ) {
    throw new IpcFailure('not_found', `event ${options.rerun} of session ${log.id} is not a compaction`);
  }
  const state = foldSession(events);
  let provider;
  try {
    provider = createProvider(state.pin, options.keys, options.env);
  } catch (error) {
    throw new IpcFailure(
      'provider',
      `this session's model ${state.pin.provider}:${state.pin.model} cannot be used here: ${toIpcError(error).message}`,
    );
  }
  const settings = resolveCompactionSettings(options.compaction, created);
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
  const trace = (detail: Record<string, unknown>) =>
    log.appendTrace({
      turn: state.turns,
      stage: COMPACTION_TRACE_STAGE,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      detail: {
        trigger: options.rerun !== undefined ? 'rerun' : 'manual',
        measuredBy: measure.source,
        ...detail,
      },
    });
  if (outcome.status === 'failed') {
    trace({ ...outcome, tokensBefore: measure.tokens });
    throw new IpcFailure(
      outcome.aborted ? 'cancelled' : 'provider',
      `${outcome.reason}; the log is unchanged`,
    );
  }
  if (outcome.status === 'skipped') {
    trace({ ...outcome, tokensBefore: measure.tokens });
    return { status: 'skipped', reason: outcome.reason };
  }
  const appended = log.append(outcome.event, { expectedLastSeq: events[events.length - 1]?.seq ?? 0 });
  if (!appended.ok)
    throw new IpcFailure('invalid_state', 'the session changed while it was being compacted: try again');
  const event = appended.events[0];
  if (event?.kind !== 'compaction') throw new Error('the compaction event was not appended');
  options.onEvent(event);
  trace({
    status: 'compacted',
    seq: event.seq,
    fromSeq: event.fromSeq,
    through: event.through,
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    requests: outcome.requests,
    chunks: outcome.chunks,
  });
  return { status: 'compacted', compaction: event };
}
