import type { EventOf, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { compactNow } from './compaction.js';
import type { CompactionSettings } from '../compaction/settings.js';
import { createProvider, type ProviderKeys } from '../../providers/index.js';
import { describeError, HarnessError } from './errors.js';

/** What compacting on demand needs besides the log. */
export type RunCompactionOptions = {
  compaction: Partial<CompactionSettings>;
  keys: ProviderKeys;
  env: NodeJS.ProcessEnv;
  /** Seq of a compaction to re-run over the same range (both stay in the log). */
  rerun?: number;
  signal?: AbortSignal;
  onEvent: (event: SessionEvent) => void;
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
