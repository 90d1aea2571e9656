// Reverting a turn's changes (or one recorded change) in the folders they reached: the one implementation
// the CLI (`keel revert`) and the app ("Undo this turn's changes") call. See README.md.
import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import { isImportedSeq } from '../log/imported.js';
import type { SessionLog } from '../log/sessionLog.js';
import { crashPoint } from '../crash.js';
import { historyStoreOf } from '../paths.js';
import { writeRevert } from './apply.js';
import { changesOf, type ChangeEvent, type RevertTarget } from './changes.js';
import { appender, completePendingRevert, folderOf, importMarkOfLog, withLocks } from './folders.js';
import { changedFilesOf, planRevert, type RevertConflict, type RevertWrite } from './plan.js';
import { takeUserSnapshot } from './userSnapshot.js';

export { RevertTargetError, type RevertTarget } from './changes.js';
export { completePendingRevert } from './folders.js';
export type { RevertConflict } from './plan.js';

/**
 * What a revert did. `reverted`: the files were written and one changes_reverted event per folder appended;
 * `conflict`: nothing was written anywhere, `conflicts` says for each file why; `unchanged`: the folders
 * already hold the versions from before the changes.
 */
export type RevertReport =
  | {
      status: 'reverted';
      events: EventOf<'changes_reverted'>[];
      files: { dir: string; path: string }[];
      /** The user's work in each folder, kept just before (`user_snapshot`, restorable). */
      snapshots: EventOf<'user_snapshot'>[];
    }
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
  const mark = importMarkOfLog(log);
  return withLocks(
    log,
    folders.map((f) => f.root),
    async () => {
      const planned: { dir: string; root: string; writes: RevertWrite[]; changes: ChangeEvent[] }[] = [];
      const conflicts: (RevertConflict & { dir: string })[] = [];
      for (const { dir, root } of folders) {
        const dirChanges = byDir.get(dir) ?? [];
        const plan = await planRevert(root, store, dirChanges, (seq) => isImportedSeq(mark, seq));
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
      const append = appender(log, appended, options.onEvent);
      // Nothing a user wrote is lost: their work in each folder is kept before a byte of it is written.
      for (const dir of planned) {
        const reason = `before ${describeTarget(target)}`;
        const paths = dir.writes.map((w) => w.path);
        const snapshot = await takeUserSnapshot(dir.root, store, dir.dir, reason, paths);
        if (snapshot) append.append([snapshot]);
      }
      crashPoint('revert_after_snapshot');
      await writeRevert(log.dir, store, planned, newEvents, append, crashPoint);
      return {
        status: 'reverted',
        events: appended.filter((e): e is EventOf<'changes_reverted'> => e.kind === 'changes_reverted'),
        files: planned.flatMap((dir) => dir.writes.map((w) => ({ dir: dir.dir, path: w.path }))),
        snapshots: appended.filter((e): e is EventOf<'user_snapshot'> => e.kind === 'user_snapshot'),
      };
    },
  );
}

/** What a revert undoes, as the user's snapshot names it. */
function describeTarget(target: RevertTarget): string {
  if ('turn' in target) return `reverting turn ${target.turn}`;
  // Issue #37: said to the user (the transcript shows it): no event numbers.
  if ('seq' in target) return 'reverting an earlier change';
  return 'rewinding the conversation';
}
