// Reverting a turn's changes (or one recorded change) in the folders they reached: the one implementation
// the CLI (`keel revert`) and the app ("Undo this turn's changes") call. See README.md.
import fs from 'node:fs';
import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { withBackingLock } from '../persistent/lock.js';
import { crashPoint } from '../turn/crash.js';
import { checkoutLocation, historyStoreOf, readPersistentConfig } from '../sessions/layout.js';
import { writeRevert, finishPendingRevert } from './apply.js';
import { changesOf, RevertTargetError, type ChangeEvent, type RevertTarget } from './changes.js';
import { changedFilesOf, planRevert, type RevertConflict, type RevertWrite } from './plan.js';

export { RevertTargetError, type RevertTarget } from './changes.js';
export type { RevertConflict } from './plan.js';

/** The direct session's folder goes by this name in its records (as in sessions/checkouts.ts). */
const DIRECT_DIR = 'project';

/**
 * What a revert did. `reverted`: the files were written and one changes_reverted event per folder appended;
 * `conflict`: nothing was written anywhere, `conflicts` says for each file why; `unchanged`: the folders
 * already hold the versions from before the changes.
 */
export type RevertReport =
  | { status: 'reverted'; events: EventOf<'changes_reverted'>[]; files: { dir: string; path: string }[] }
  | { status: 'conflict'; conflicts: (RevertConflict & { dir: string })[] }
  | { status: 'unchanged'; reverts: number[] };

/**
 * Reverts what `target` names onto the folders as they are now, three-way per file: the user's (or a later
 * turn's) edits since are kept, a conflict anywhere writes nothing. Needs the log open for writing (the
 * lease serialises it with turns); holds each folder's backing lock, so no commit interleaves. Completes a
 * revert a crash interrupted before anything else.
 */
export async function revertChanges(
  log: SessionLog,
  target: RevertTarget,
  options: { onEvent?: (event: SessionEvent) => void } = {},
): Promise<RevertReport> {
  const store = historyStoreOf(log.dir);
  await completePendingRevert(log);
  const events =
    'seq' in target
      ? log.read({ fromSeq: target.seq, limit: 1 })
      : 'after' in target
        ? log.read({ fromSeq: 1 })
        : log.readKinds(['user_message', 'persistent_commit']);
  const changes = changesOf(events, target);
  if (changes.length === 0) return { status: 'unchanged', reverts: [] };
  const byDir = new Map<string, ChangeEvent[]>();
  for (const change of changes) byDir.set(change.dir, [...(byDir.get(change.dir) ?? []), change]);
  const folders = [...byDir.keys()].sort().map((dir) => ({ dir, root: folderOf(log, dir) }));
  return withLocks(
    log,
    folders.map((f) => f.root),
    async () => {
      const planned: { dir: string; root: string; writes: RevertWrite[]; changes: ChangeEvent[] }[] = [];
      const conflicts: (RevertConflict & { dir: string })[] = [];
      for (const { dir, root } of folders) {
        const dirChanges = byDir.get(dir) ?? [];
        const plan = await planRevert(root, store, dirChanges);
        conflicts.push(...plan.conflicts.map((c) => ({ ...c, dir })));
        if (plan.writes.length > 0) planned.push({ dir, root, writes: plan.writes, changes: dirChanges });
      }
      if (conflicts.length > 0) return { status: 'conflict', conflicts };
      if (planned.length === 0) return { status: 'unchanged', reverts: changes.map((c) => c.seq) };
      const newEvents: NewEvent[] = planned.map((dir) => ({
        kind: 'changes_reverted',
        dir: dir.dir,
        reverts: dir.changes.map((c) => c.seq),
        ...('turn' in target ? { turn: target.turn } : {}),
        files: changedFilesOf(dir.writes),
      }));
      const appended: SessionEvent[] = [];
      await writeRevert(log.dir, store, planned, newEvents, appender(log, appended, options.onEvent), () =>
        crashPoint('during_revert'),
      );
      return {
        status: 'reverted',
        events: appended.filter((e): e is EventOf<'changes_reverted'> => e.kind === 'changes_reverted'),
        files: planned.flatMap((dir) => dir.writes.map((w) => ({ dir: dir.dir, path: w.path }))),
      };
    },
  );
}

/** Finishes a revert a crash interrupted (its journal); the caller holds the log's lease. True when there was one. */
export async function completePendingRevert(log: SessionLog): Promise<boolean> {
  return finishPendingRevert(log.dir, historyStoreOf(log.dir), appender(log, []));
}

function appender(log: SessionLog, into: SessionEvent[], onEvent?: (event: SessionEvent) => void) {
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

/** The folder a recorded dir name is: a Persistent Dir's backing folder, or a direct session's project. */
function folderOf(log: SessionLog, dir: string): string {
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
async function withLocks<T>(log: SessionLog, roots: readonly string[], use: () => Promise<T>): Promise<T> {
  const locksRoot = checkoutLocation(log.dir, DIRECT_DIR).locksRoot;
  const [first, ...rest] = [...new Set(roots)].sort();
  if (first === undefined) return use();
  return withBackingLock(locksRoot, first, () => withLocks(log, rest, use));
}
