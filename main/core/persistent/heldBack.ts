// Held back: the protected paths a session changed in its checkout (.git, .keel, .vscode, .idea, .husky,
// .envrc, at any depth: main/sandbox/protectedPaths.ts, the one list) never reach the backing folder with a
// commit. The commit reports them, with their blob ids; once a person granted them, the next commit writes
// exactly those blobs, and only over the backing file the session started from. See README.md.
import path from 'node:path';
import { writeSymlinkConfined } from '../../sandbox/paths.js';
import { protectionReason } from '../../sandbox/protectedPaths.js';
import { isZeroOid, runGit, streamBlob, type TreeChange } from './git.js';
import { backingEntry, hashFile } from './hashing.js';
import { backingSide, type CheckoutContext } from './state.js';
import { removeConfined, writeStreamConfined } from './streamWrite.js';
import type { CommittedFile, HeldFile } from './types.js';

/** Why the change at `relative` (a Persistent Dir path with `/`) is held back, or null. */
export function heldReason(relative: string): string | null {
  const root = path.sep;
  return protectionReason(root, path.join(root, ...relative.split('/')));
}

/**
 * Splits a commit's changes into those it writes and the protected ones it holds back; with `holdAll` (why
 * the whole commit waits: its git metadata changed), every change is held, protected ones with their own reason.
 */
export function holdBack(
  changes: readonly TreeChange[],
  holdAll?: string,
): { commit: TreeChange[]; held: HeldFile[] } {
  const commit: TreeChange[] = [];
  const held: HeldFile[] = [];
  for (const change of changes) {
    const reason = heldReason(change.path) ?? holdAll ?? null;
    if (reason === null) {
      commit.push(change);
      continue;
    }
    const status = isZeroOid(change.oldOid) ? 'added' : isZeroOid(change.newOid) ? 'deleted' : 'modified';
    held.push({
      path: change.path,
      reason,
      status,
      oldOid: change.oldOid,
      newOid: change.newOid,
      newMode: change.newMode,
    });
  }
  return { commit, held };
}

/**
 * Writes granted held-back files to the backing folder (the caller holds the backing lock): each only
 * when the backing file is still the one the session changed (else it is a conflict, nothing written for
 * it); a file already equal to the session's is left alone.
 */
export async function applyHeld(
  context: CheckoutContext,
  files: readonly HeldFile[],
): Promise<{ files: CommittedFile[]; conflicts: string[] }> {
  const { backing } = context.state;
  const written: CommittedFile[] = [];
  const conflicts: string[] = [];
  for (const file of files) {
    const before = await backingEntry(context, file.path);
    const current = before.kind === 'file' || before.kind === 'link' ? before.oid : undefined;
    const preHash = before.kind === 'file' || before.kind === 'link' ? (before.sha256 ?? null) : null;
    const wanted = isZeroOid(file.newOid) ? undefined : file.newOid;
    if (current === wanted) continue;
    const startedFrom = isZeroOid(file.oldOid) ? undefined : file.oldOid;
    if (current !== startedFrom || before.kind === 'other') {
      conflicts.push(file.path);
      continue;
    }
    if (wanted === undefined) {
      removeConfined(backing, file.path);
      written.push({ path: file.path, preHash, postHash: null });
    } else if (file.newMode === '120000') {
      const { stdout } = await runGit(backingSide(context), ['cat-file', 'blob', wanted]);
      writeSymlinkConfined(backing, file.path, stdout.toString('utf8'), {
        argName: 'path',
        allowProtected: true,
      });
      written.push({ path: file.path, preHash, postHash: await hashFile(path.join(backing, file.path)) });
    } else {
      const mode = file.newMode === '100755' ? 0o755 : 0o644;
      const result = await writeStreamConfined(backing, file.path, streamBlob(backingSide(context), wanted), {
        mode,
      });
      written.push({ path: file.path, preHash, postHash: result.sha256 });
    }
  }
  return { files: written, conflicts };
}
