// Planning a revert: recorded changes undone, newest first, onto a folder as it is now, per file three-way
// (the user's later edits merged, a conflict refused). Reads only; writing is apply.ts. See README.md.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChangedFile, FileMode } from '../../common/events.js';
import { runGit } from '../persistent/git.js';
import { heldReason } from '../persistent/heldBack.js';
import { readFileState, readKept } from '../persistent/kept.js';
import { plain } from '../persistent/state.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import { isRevertible, type ChangeEvent } from './changes.js';

/** What is at a path: a file or link with its bytes, or null for nothing. */
export type Side = { mode: FileMode; bytes: Buffer; sha256: string } | null;

/** A file the revert cannot undo, and why (said to the user as is). */
export type RevertConflict = {
  path: string;
  reason: string;
  /** The three versions, for a side-by-side view: the folder's now, the change's after and before (text only). */
  sides?: { current: string; changed: string; original: string };
};

/** One file a revert writes: what it found (checked again before writing) and what it puts there. */
export type RevertWrite = { path: string; from: Side; to: Side };

/** Text the merge and the views accept: no NUL byte in its first 8000 bytes (git's own test). */
function isText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 8000).includes(0);
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A recorded path usable inside a folder: relative, with no `..` part and no NUL. */
export function isSafeRelative(rel: string): boolean {
  if (rel === '' || rel.includes('\0') || path.isAbsolute(rel) || /^[A-Za-z]:/.test(rel)) return false;
  return rel.split(/[\\/]/).every((part) => part !== '..' && part !== '');
}

/**
 * Why Keel may not write the recorded path `rel` into `root` (a revert, a restore), or null: a path that is not
 * inside the folder, a protected one (`.git`, `.vscode`, … as a commit holds back: a hook written there runs on
 * the host), or one that leads out through a link. Checked before anything is kept or journaled, so a refused
 * write leaves nothing behind.
 */
export function unwritableReason(root: string, rel: string, what: 'revert' | 'restore'): string | null {
  if (!isSafeRelative(rel)) return 'the recorded path is not a path inside the folder';
  const protectedReason = heldReason(rel);
  if (protectedReason !== null)
    return `${protectedReason}: Keel does not ${what} protected files; change it by hand`;
  try {
    resolveInWorkspace(root, rel, { argName: 'path', forWrite: true });
  } catch {
    return 'the path leads out of the folder (through a link): change it by hand';
  }
  return null;
}

/**
 * Plans undoing `changes` (one folder's, oldest first) onto `root` as it is now: newest first, each file is
 * put back to its version before the change when the folder still has the change's version; left alone when
 * it already has the old one; merged three-way (`git merge-file`: the folder's version, the change's after as
 * base, its before) when it changed since; otherwise a conflict. Unwritable paths, bytes that were not kept,
 * changes of an imported file (`imported` by seq: it carries no bytes), binary or link merges and
 * delete/modify cases are conflicts. Nothing is written.
 */
export async function planRevert(
  root: string,
  store: string,
  changes: readonly ChangeEvent[],
  imported: (seq: number) => boolean = () => false,
): Promise<{ writes: RevertWrite[]; conflicts: RevertConflict[] }> {
  const original = new Map<string, Side>();
  const current = new Map<string, Side>();
  const conflicts: RevertConflict[] = [];
  const conflicted = new Set<string>();
  const refuse = (rel: string, reason: string, sides?: RevertConflict['sides']) => {
    if (conflicted.has(rel)) return;
    conflicted.add(rel);
    conflicts.push({ path: rel, reason, ...(sides ? { sides } : {}) });
  };
  const load = (rel: string): Side | 'too-large' => {
    if (current.has(rel)) return current.get(rel) as Side;
    const state = readFileState(path.join(root, rel));
    if (state === 'too-large') return state;
    const side = state ?? null;
    original.set(rel, side);
    current.set(rel, side);
    return side;
  };
  const kept = (hash: string | null, mode: FileMode | undefined): Side | 'missing' => {
    if (hash === null) return null;
    const bytes = readKept(store, hash);
    if (bytes === undefined || mode === undefined) return 'missing';
    return { mode, bytes, sha256: hash };
  };
  for (const change of [...changes].reverse()) {
    for (const file of change.files) {
      // A change of mode alone (chmod) is a change too.
      if ((file.preHash === file.postHash && file.preMode === file.postMode) || conflicted.has(file.path))
        continue;
      const rel = file.path;
      const unwritable = unwritableReason(root, rel, 'revert');
      if (unwritable !== null) {
        refuse(rel, unwritable);
        continue;
      }
      const now = load(rel);
      if (now === 'too-large') {
        refuse(rel, 'it is larger than 64 MiB now; revert it by hand');
        continue;
      }
      const nowHash = now?.sha256 ?? null;
      const modeIs = (mode: FileMode | undefined) => now === null || mode === undefined || now.mode === mode;
      if (nowHash === file.preHash && modeIs(file.preMode)) continue;
      if (imported(change.seq)) {
        // The history store's bytes are never exported: whatever the store holds under a hash the file
        // names, it was not the file's to name.
        refuse(rel, 'the change came with an imported file, which carries no bytes: revert it by hand');
        continue;
      }
      const before = isRevertible(file) ? kept(file.preHash, file.preMode) : 'missing';
      const after = isRevertible(file) ? kept(file.postHash, file.postMode) : 'missing';
      if (before === 'missing' || after === 'missing') {
        refuse(
          rel,
          'its bytes were not kept when the change was made (too large, or from before Keel kept them)',
        );
        continue;
      }
      if (nowHash === file.postHash && modeIs(file.postMode)) {
        current.set(rel, before);
        continue;
      }
      if (nowHash === file.preHash) {
        // The bytes are back as they were and only the mode differs from both sides: the user's; left alone.
        continue;
      }
      const merged = await mergeBack(now, after, before);
      if ('conflict' in merged) refuse(rel, merged.conflict, merged.sides);
      else current.set(rel, merged.side);
    }
  }
  const writes: RevertWrite[] = [];
  for (const [rel, to] of current) {
    if (conflicted.has(rel)) continue;
    const from = original.get(rel) ?? null;
    if ((from?.sha256 ?? null) === (to?.sha256 ?? null) && from?.mode === to?.mode) continue;
    writes.push({ path: rel, from, to });
  }
  return { writes: writes.sort((a, b) => a.path.localeCompare(b.path)), conflicts };
}

/** The folder's version with the change taken out of it (three-way), or why that cannot be done. */
async function mergeBack(
  now: Side,
  after: Side,
  before: Side,
): Promise<{ side: Side } | { conflict: string; sides?: RevertConflict['sides'] }> {
  if (now === null)
    return { conflict: 'it was deleted since the change; the change cannot be taken out of it' };
  if (before === null)
    return {
      conflict: 'the change created it and it was edited since: delete it by hand if you want it gone',
    };
  if (after === null) return { conflict: 'the change deleted it and it was made again since' };
  if (now.mode === '120000' || before.mode === '120000' || after.mode === '120000')
    return { conflict: 'a symbolic link changed on both sides' };
  if (!isText(now.bytes) || !isText(after.bytes) || !isText(before.bytes))
    return { conflict: 'a binary file changed since the change: it cannot be merged' };
  const sides = {
    current: now.bytes.toString('utf8'),
    changed: after.bytes.toString('utf8'),
    original: before.bytes.toString('utf8'),
  };
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), `keel-revert-${randomBytes(3).toString('hex')}-`));
  try {
    fs.writeFileSync(path.join(temp, 'ours'), now.bytes);
    fs.writeFileSync(path.join(temp, 'base'), after.bytes);
    fs.writeFileSync(path.join(temp, 'theirs'), before.bytes);
    const { stdout, code } = await runGit(plain(temp), ['merge-file', '-p', '-q', 'ours', 'base', 'theirs'], {
      okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
    });
    if (code !== 0)
      return {
        conflict: 'it was changed since on the lines the change touched: merge it by hand',
        sides,
      };
    return { side: { mode: now.mode, bytes: stdout, sha256: sha256Of(stdout) } };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** The change a set of writes makes, as the log records it (the `from` side is the folder's before the revert). */
export function changedFilesOf(writes: readonly RevertWrite[]): ChangedFile[] {
  return writes.map((write) => ({
    path: write.path,
    preHash: write.from?.sha256 ?? null,
    postHash: write.to?.sha256 ?? null,
    ...(write.from ? { preMode: write.from.mode } : {}),
    ...(write.to ? { postMode: write.to.mode } : {}),
  }));
}
