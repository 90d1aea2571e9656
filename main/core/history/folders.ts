// The folders a session's recorded changes name, their locks, and appending a revert's events: shared by
// revert.ts and userSnapshot.ts. See README.md.
import fs from 'node:fs';
import type { NewEvent, SessionEvent } from '../../common/events.js';
import { importMarkOf, type ImportMark } from '../log/imported.js';
import type { SessionLog } from '../log/sessionLog.js';
import { withBackingLock } from '../persistent/lock.js';
import { checkoutLocation, readPersistentConfig } from '../persistent/config.js';
import { historyStoreOf } from '../paths.js';
import { finishPendingRevert } from './apply.js';
import { RevertTargetError } from './changes.js';

/** The direct session's folder goes by this name in its records (as in persistent/turnCheckouts.ts). */
export const DIRECT_DIR = 'project';

/** Finishes a revert a crash interrupted (its journal); the caller holds the log's lease. True when there was one. */
export async function completePendingRevert(log: SessionLog): Promise<boolean> {
  return finishPendingRevert(log.dir, historyStoreOf(log.dir), appender(log, []));
}

/** The log as writeRevert appends to it: each appended event goes into `into` and to `onEvent`. */
export function appender(log: SessionLog, into: SessionEvent[], onEvent?: (event: SessionEvent) => void) {
  return {
    lastSeq: () => log.lastSeq(),
    append: (events: readonly NewEvent[]) => {
      const result = log.append(events, { expectedLastSeq: log.lastSeq() });
      if (!result.ok) return;
      into.push(...result.events);
      for (const event of result.events) onEvent?.(event);
    },
  };
}

/** The session's import mark (log/imported.ts), or undefined for a session made here. */
export function importMarkOfLog(log: SessionLog): ImportMark | undefined {
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  return created?.kind === 'session_created' ? importMarkOf(created) : undefined;
}

/**
 * The folder a recorded dir name is: a Persistent Dir's backing folder, or a direct session's project. A
 * session imported without `--project` has none: the folder its file names is someone else's word, never a
 * place Keel writes (a revert, a rewind with files, a restore would write into, say, ~/.ssh).
 */
export function folderOf(log: SessionLog, dir: string): string {
  if (importMarkOfLog(log)?.projectChosen === false) {
    throw new RevertTargetError(
      'this session was imported without a project folder, and the folder its file names is not written: ' +
        'import the file again with keel import FILE --project DIR to work on DIR',
    );
  }
  const config = readPersistentConfig(log.dir);
  if (config) {
    const spec = config.dirs.find((d) => d.name === dir);
    if (!spec)
      throw new RevertTargetError(`the change names a Persistent Dir "${dir}" this session does not have`);
    return fs.realpathSync(spec.path);
  }
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (dir !== DIRECT_DIR || created?.kind !== 'session_created')
    throw new RevertTargetError(`the change names a folder "${dir}" this session does not have`);
  return fs.realpathSync(created.projectFolder);
}

/** Runs `use` holding the backing lock of every folder, taken in sorted order (two reverts never deadlock). */
export async function withLocks<T>(
  log: SessionLog,
  roots: readonly string[],
  use: () => Promise<T>,
): Promise<T> {
  const locksRoot = checkoutLocation(log.dir, DIRECT_DIR).locksRoot;
  const [first, ...rest] = [...new Set(roots)].sort();
  if (first === undefined) return use();
  return withBackingLock(locksRoot, first, () => withLocks(log, rest, use));
}
