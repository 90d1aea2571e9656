import {
  forkSession,
  listUserSnapshots,
  restoreUserSnapshot,
  revertChanges,
  RevertTargetError,
  rewindSession,
  SessionLog,
} from '../../core/harness/index.js';
import type { historyChannels } from '../contract/historyChannels.js';
import { IpcFailure } from '../errors.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** Undo a turn's changes, rewind, fork: thin adapters over main/core/history (the CLI calls the same functions). */
export function historyHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof historyChannels> {
  const { home, turns } = ctx;
  return {
    'history.revert': (args) =>
      turns.exclusive(args.sessionId, (log, onEvent) =>
        named(() =>
          revertChanges(log, args.turn !== undefined ? { turn: args.turn } : { seq: args.seq as number }, {
            onEvent,
          }),
        ),
      ),
    'history.rewind': (args) =>
      turns.exclusive(args.sessionId, (log, onEvent) =>
        named(() => rewindSession(log, { toSeq: args.toSeq, files: args.files, onEvent })),
      ),
    'history.snapshots': (args) => {
      // Read-only: listing never waits for a running turn's lease.
      const log = SessionLog.open(home, args.sessionId, { write: false });
      try {
        return Promise.resolve(listUserSnapshots(log.readKinds(['user_snapshot', 'user_snapshot_restored'])));
      } finally {
        log.close();
      }
    },
    'history.restoreSnapshot': (args) =>
      turns.exclusive(args.sessionId, (log, onEvent) =>
        named(() => restoreUserSnapshot(log, args.seq, { onEvent })),
      ),
    'history.fork': (args) =>
      named(() => {
        const report = forkSession(home, args.sessionId, args.at === undefined ? {} : { at: args.at });
        ctx.hub.publish('sessions.changed', { sessionId: report.id, change: 'created' });
        return Promise.resolve(report);
      }),
  };
}

/** A target that names nothing revertible is the caller's mistake: `invalid_input`, with the core's words. */
async function named<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RevertTargetError) throw new IpcFailure('invalid_input', error.message);
    throw error;
  }
}
