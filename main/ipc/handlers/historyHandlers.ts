import { forkSession } from '../../core/history/fork.js';
import { revertChanges, RevertTargetError } from '../../core/history/revert.js';
import { rewindSession } from '../../core/history/rewind.js';
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
