import type { UncommittedDir } from '../persistent/types.js';
import { HarnessError } from './errors.js';
import type { LocalHarnessSession } from './harness.js';

/**
 * A new turn refused because its reset would discard what manual Persistent Dirs hold uncommitted. `what`
 * names the dirs and their file counts; hosts word the way out (the app: apply or discard; the CLI: the
 * commands that do it).
 */
export class UncommittedChangesError extends HarnessError {
  constructor(
    readonly sessionId: string,
    readonly dirs: readonly UncommittedDir[],
    readonly what: string,
  ) {
    super(
      'invalid_state',
      `this session has changes in ${what} that a new turn would discard: apply or discard them first`,
    );
    this.name = 'UncommittedChangesError';
  }
}

/**
 * The guard every host runs before a new prompt of a session with Persistent Dirs: the turn resets its
 * checkouts, so uncommitted changes of writable manual dirs are refused (UncommittedChangesError) before
 * anything is lost, or dropped first when the caller chose `discardChanges`. Continuing a turn passes no guard.
 */
export async function guardNewTurn(
  session: LocalHarnessSession,
  options: { discardChanges?: boolean } = {},
): Promise<void> {
  if (session.persistentDirs().length === 0) return;
  if (options.discardChanges === true) {
    await session.discard();
    return;
  }
  const pending = (await session.uncommitted()).filter((dir) => dir.commit === 'manual' && !dir.readOnly);
  if (pending.length === 0) return;
  const what = pending
    .map((dir) => `${dir.dir} (${dir.files.length} file${dir.files.length === 1 ? '' : 's'})`)
    .join(', ');
  throw new UncommittedChangesError(session.id, pending, what);
}
