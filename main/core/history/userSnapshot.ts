// "Nothing a user wrote is ever lost": before Keel writes into a folder (a revert, a rewind with its files, a
// restore), the user's work there is kept as a stash-like snapshot, recorded as a `user_snapshot` event with
// its bytes in the history store; restoring one writes them back (journaled like a revert). See README.md.
import path from 'node:path';
import type { EventOf, NewEvent, SessionEvent, SnapshotFile } from '../../common/events.js';
import { isImportedSeq } from '../log/imported.js';
import type { SessionLog } from '../log/sessionLog.js';
import { gitText, runGit, splitNul } from '../persistent/git.js';
import { hashFile } from '../persistent/hashing.js';
import { keepBytes, readFileState, readKept } from '../persistent/kept.js';
import { plain } from '../persistent/state.js';
import { historyStoreOf } from '../paths.js';
import { writeRevert } from './apply.js';
import { RevertTargetError } from './changes.js';
import {
  changedFilesOf,
  isSafeRelative,
  unwritableReason,
  type RevertConflict,
  type RevertWrite,
} from './plan.js';
import { appender, completePendingRevert, folderOf, importMarkOfLog, withLocks } from './folders.js';

/** Changed files kept at most besides those the write touches (a huge untracked build folder is counted, not kept). */
const MAX_OTHER_FILES = 2000;

/**
 * The files of `root` git counts as changed since HEAD (modified, staged, deleted, untracked; not ignored)
 * when `root` is a repository's top folder; none otherwise. Reads only (no index refresh is written).
 */
async function uncommittedPaths(root: string): Promise<string[]> {
  let top: string;
  try {
    top = await gitText(plain(root), ['rev-parse', '--show-toplevel']);
  } catch {
    return [];
  }
  if (path.resolve(top) !== path.resolve(root)) return [];
  const { stdout } = await runGit(plain(root), [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--no-renames',
  ]);
  return splitNul(stdout)
    .map((entry) => entry.slice(3))
    .filter((rel) => rel !== '' && !rel.endsWith('/'));
}

/**
 * Keeps the user's work in `root` before Keel writes `writing` there: those files and the ones git counts as
 * uncommitted, each file's bytes in `store` (durably for the ones about to be written). Returns the
 * `user_snapshot` event to append, or undefined when there is nothing to keep.
 */
export async function takeUserSnapshot(
  root: string,
  store: string,
  dir: string,
  reason: string,
  writing: readonly string[],
): Promise<NewEvent | undefined> {
  const written = new Set(writing);
  const others = (await uncommittedPaths(root)).filter((rel) => !written.has(rel)).sort();
  const kept = others.slice(0, MAX_OTHER_FILES);
  const files: SnapshotFile[] = [];
  for (const rel of [...new Set([...writing, ...kept])].sort()) {
    const state = readFileState(path.join(root, rel));
    if (state === undefined) files.push({ path: rel, sha256: null });
    else if (state === 'too-large') files.push({ path: rel, sha256: await hashFile(path.join(root, rel)) });
    else {
      const sha256 = keepBytes(store, state.bytes, { durable: written.has(rel) });
      files.push({ path: rel, sha256, mode: state.mode });
    }
  }
  if (files.length === 0) return undefined;
  const omitted = others.length - kept.length;
  return { kind: 'user_snapshot', dir, reason, files, ...(omitted > 0 ? { omitted } : {}) };
}

/** What a restore did: `restored` (after keeping the folder's work as a new snapshot), `unchanged`, or `refused`. */
export type RestoreReport =
  | {
      status: 'restored';
      event: EventOf<'user_snapshot_restored'>;
      snapshot?: EventOf<'user_snapshot'>;
      files: string[];
    }
  | { status: 'unchanged' }
  | { status: 'refused'; conflicts: RevertConflict[] };

/**
 * Writes a user snapshot's files back into its folder as they were kept. What the folder holds there now is
 * kept first as a new snapshot (so a restore can itself be undone); a file whose kept bytes are missing (too
 * large when kept), a path a revert would not write (plan.ts's unwritableReason) or a snapshot that came with
 * an imported file (it carries no bytes) refuses the whole restore, nothing written. Journaled like a revert: a crash leaves the
 * folder before or after, never half. Needs the log open for writing.
 */
export async function restoreUserSnapshot(
  log: SessionLog,
  snapshotSeq: number,
  options: { onEvent?: (event: SessionEvent) => void } = {},
): Promise<RestoreReport> {
  const store = historyStoreOf(log.dir);
  await completePendingRevert(log);
  const [event] = log.read({ fromSeq: snapshotSeq, limit: 1 });
  if (event?.seq !== snapshotSeq || event.kind !== 'user_snapshot') {
    throw new RevertTargetError(
      `event ${snapshotSeq} is not a snapshot of your work (list them with keel snapshots SESSION)`,
    );
  }
  const root = folderOf(log, event.dir);
  // The history store's bytes are never exported: a snapshot from an imported file names bytes it never had.
  const imported = isImportedSeq(importMarkOfLog(log), snapshotSeq);
  return withLocks(log, [root], async () => {
    const writes: RevertWrite[] = [];
    const conflicts: RevertConflict[] = [];
    for (const file of event.files) {
      const refuse = (reason: string) => void conflicts.push({ path: file.path, reason });
      if (imported) {
        refuse('the snapshot came with an imported file, which carries no bytes: restore it by hand');
        continue;
      }
      if (!isSafeRelative(file.path)) {
        refuse('the recorded path is not a path inside the folder');
        continue;
      }
      const now = readFileState(path.join(root, file.path));
      if (now === 'too-large') {
        refuse('it is larger than 64 MiB now; restore it by hand');
        continue;
      }
      if ((now?.sha256 ?? null) === file.sha256 && (now === undefined || now.mode === file.mode)) continue;
      // The checks a revert makes (protected paths, links out), before anything is kept or journaled.
      const unwritable = unwritableReason(root, file.path, 'restore');
      if (unwritable !== null) {
        refuse(unwritable);
        continue;
      }
      const bytes = file.sha256 === null ? undefined : readKept(store, file.sha256);
      if (file.sha256 !== null && (bytes === undefined || file.mode === undefined)) {
        refuse('its bytes were not kept (larger than 64 MiB)');
        continue;
      }
      const to = file.sha256 === null ? null : { mode: file.mode!, bytes: bytes!, sha256: file.sha256 };
      writes.push({ path: file.path, from: now ?? null, to });
    }
    if (conflicts.length > 0) return { status: 'refused', conflicts };
    if (writes.length === 0) return { status: 'unchanged' };
    const appended: SessionEvent[] = [];
    const append = appender(log, appended, options.onEvent);
    const before = await takeUserSnapshot(
      root,
      store,
      event.dir,
      `before restoring snapshot ${snapshotSeq}`,
      writes.map((w) => w.path),
    );
    if (before) append.append([before]);
    await writeRevert(
      log.dir,
      store,
      [{ root, writes }],
      [{ kind: 'user_snapshot_restored', dir: event.dir, snapshotSeq, files: changedFilesOf(writes) }],
      append,
    );
    const restored = appended.find(
      (e): e is EventOf<'user_snapshot_restored'> => e.kind === 'user_snapshot_restored',
    );
    if (!restored) throw new Error('the session changed while the snapshot was restored; try again');
    const snapshot = appended.find((e): e is EventOf<'user_snapshot'> => e.kind === 'user_snapshot');
    return {
      status: 'restored',
      event: restored,
      ...(snapshot ? { snapshot } : {}),
      files: writes.map((w) => w.path),
    };
  });
}

/** The session's snapshots of the user's work, oldest first, each with the seq of its last restore. */
export function listUserSnapshots(
  events: readonly SessionEvent[],
): { event: EventOf<'user_snapshot'>; restoredAt?: number }[] {
  const restored = new Map<number, number>();
  for (const e of events) if (e.kind === 'user_snapshot_restored') restored.set(e.snapshotSeq, e.seq);
  return events
    .filter((e): e is EventOf<'user_snapshot'> => e.kind === 'user_snapshot')
    .map((event) => {
      const at = restored.get(event.seq);
      return at === undefined ? { event } : { event, restoredAt: at };
    });
}
