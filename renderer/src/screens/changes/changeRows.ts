import type { CommitHistory, Uncommitted } from './useChanges.js';

/** A file change kind, as git reports it. */
export type ChangeKind = 'added' | 'modified' | 'deleted';

/** Which version of a file to diff: the uncommitted change, or what commit `commitSeq` did. */
export type FileRef = { dir: string; path: string; commitSeq?: number };

/** One row of the Changes list (fixed height per kind, so the list is virtualized without measuring). */
export type ChangeRow =
  | { kind: 'section'; key: string; title: string }
  | {
      kind: 'dir';
      key: string;
      dir: string;
      commit: 'auto' | 'manual';
      readOnly: boolean;
      onNewTurn: 'commit' | 'refuse' | 'discard';
      fileCount: number;
    }
  | { kind: 'file'; key: string; ref: FileRef; change: ChangeKind; conflict: boolean }
  | { kind: 'turn'; key: string; turn: number; prompt: string | undefined }
  | { kind: 'commit'; key: string; seq: number; at: string; dir: string; fileCount: number }
  | { kind: 'empty'; key: string; text: string };

/** Row heights in px; they must match changes.css. */
export const ROW_HEIGHTS: Record<ChangeRow['kind'], number> = {
  section: 32,
  dir: 60,
  file: 28,
  turn: 44,
  commit: 26,
  empty: 30,
};

/** The stable identity of a file version (selection survives re-reads). */
export function fileKey(ref: FileRef): string {
  return `${ref.commitSeq ?? 'uncommitted'}\u0000${ref.dir}\u0000${ref.path}`;
}

/**
 * The Changes list: uncommitted changes first (per dir, then its files, conflicting ones marked), then what
 * each turn committed, newest turn first (turn, its commits, their files). Pure.
 */
export function foldChangeRows(
  uncommitted: Uncommitted | undefined,
  history: CommitHistory | undefined,
  conflicts: ReadonlyMap<string, ReadonlySet<string>>,
): ChangeRow[] {
  const rows: ChangeRow[] = [{ kind: 'section', key: 'section:uncommitted', title: 'Uncommitted' }];
  const dirs = uncommitted?.dirs ?? [];
  if (uncommitted && dirs.length === 0) {
    rows.push({ kind: 'empty', key: 'empty:uncommitted', text: 'No uncommitted changes.' });
  }
  for (const dir of dirs) {
    rows.push({
      kind: 'dir',
      key: `dir:${dir.dir}`,
      dir: dir.dir,
      commit: dir.commit,
      readOnly: dir.readOnly,
      onNewTurn: dir.onNewTurn,
      fileCount: dir.files.length,
    });
    const conflicted = conflicts.get(dir.dir);
    for (const file of dir.files) {
      const ref = { dir: dir.dir, path: file.path };
      rows.push({
        kind: 'file',
        key: `file:${fileKey(ref)}`,
        ref,
        change: file.change,
        conflict: conflicted?.has(file.path) ?? false,
      });
    }
  }
  rows.push({ kind: 'section', key: 'section:committed', title: 'Committed, by turn' });
  const turns = history?.turns ?? [];
  if (history && turns.length === 0) {
    rows.push({ kind: 'empty', key: 'empty:committed', text: 'Nothing committed yet.' });
  }
  for (const turn of [...turns].reverse()) {
    rows.push({ kind: 'turn', key: `turn:${turn.turn}`, turn: turn.turn, prompt: turn.prompt });
    for (const commit of [...turn.commits].reverse()) {
      rows.push({
        kind: 'commit',
        key: `commit:${commit.seq}`,
        seq: commit.seq,
        at: commit.at,
        dir: commit.dir,
        fileCount: commit.files.length,
      });
      for (const file of commit.files) {
        const ref = { dir: commit.dir, path: file.path, commitSeq: commit.seq };
        rows.push({ kind: 'file', key: `file:${fileKey(ref)}`, ref, change: file.change, conflict: false });
      }
    }
  }
  return rows;
}

/**
 * The sentence to warn with before a new turn, from what each dir's next turn does: refused until the
 * manual changes are applied or discarded, or the read-only dirs' changes discarded. Null when nothing is at stake.
 */
export function describeNewTurnEffect(dirs: Uncommitted['dirs']): string | null {
  const named = (list: Uncommitted['dirs']) =>
    list
      .map((dir) => `${dir.dir} (${dir.files.length} ${dir.files.length === 1 ? 'file' : 'files'})`)
      .join(', ');
  const refused = dirs.filter((dir) => dir.onNewTurn === 'refuse');
  const discarded = dirs.filter((dir) => dir.onNewTurn === 'discard');
  const sentences: string[] = [];
  if (refused.length > 0) {
    sentences.push(
      `Uncommitted changes in ${named(refused)} wait for review: a new turn starts from the project folder, so apply or discard them before sending.`,
    );
  }
  if (discarded.length > 0) {
    sentences.push(`A new turn discards the changes in ${named(discarded)} (read-only for this session).`);
  }
  return sentences.length > 0 ? sentences.join(' ') : null;
}
