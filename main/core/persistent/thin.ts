// Issue #36: a view its session let go of holds no copy of the project's file list. Its two git indexes (~80 bytes a
// file each: the private snapshot index and the view's own in the repository's `.git/worktrees/<n>/`) are caches of
// what git can rebuild from the recorded baseline and the repository's own index, so a quiet view drops them; what
// needs them rebuilds them on demand (the next reset, or `restoreViewIndex` before any other job). See README.md.
import fs from 'node:fs';
import { runGit } from './git.js';
import { dropSharedParts } from './sharedIndex.js';
import {
  backingIndex,
  copyIndexFile,
  fileStamp,
  headIsBaseline,
  isIntact,
  isQuiet,
  saveState,
  viewIndex,
  type CheckoutContext,
} from './state.js';
import { lstatOrUndefined } from './streamWrite.js';

/**
 * Drops a quiet view's indexes: only when nothing marked it dirty since its last reset or commit and its HEAD is its
 * baseline (nothing uncommitted, nothing its git would need the index for). The recorded tree of the private index is
 * forgotten first, so the known-tree shortcut can never vouch for the index a later snapshot seeds anew. True when
 * it thinned the view.
 */
export function thinView(context: CheckoutContext): boolean {
  const { state } = context;
  if (state.kind !== 'view' || state.gitDir === '') return false;
  if (!isIntact(context.location) || !isQuiet(context) || !headIsBaseline(context)) return false;
  if (state.indexTree !== undefined || state.indexStamp !== undefined) {
    state.indexTree = undefined;
    state.indexStamp = undefined;
    saveState(context);
  }
  fs.rmSync(viewIndex(context), { force: true });
  fs.rmSync(backingIndex(context), { force: true });
  dropSharedParts(context);
  return true;
}

/**
 * Rebuilds a thinned view's own index when it is missing: the repository's index (read only) copied as the seed, then
 * `read-tree -m` of the baseline tree (a one-tree merge keeps the seed's stat data for every entry whose blob is the
 * baseline's, so the view's `git status` hashes only what the user changed in the project since staging it). Written
 * to a temp file and renamed into place: a crash leaves the index missing, and the next job rebuilds it again. The
 * private snapshot index is left to the next snapshot (snapshot.ts seeds it the same way).
 */
export async function restoreViewIndex(context: CheckoutContext): Promise<void> {
  const { state } = context;
  if (state.kind !== 'view' || state.gitDir === '' || state.baselineTree === '') return;
  const index = viewIndex(context);
  if (lstatOrUndefined(index)) return;
  const temp = `${index}.${process.pid}.keel-restore`;
  fs.rmSync(temp, { force: true });
  let seeded = false;
  if (state.repositoryIndex !== undefined) {
    try {
      copyIndexFile(state.repositoryIndex, temp);
      seeded = true;
    } catch {
      // The repository has no index: read-tree starts from an empty one (its files are hashed once by git).
    }
  }
  // No work tree is read or written: read-tree without -u touches only the index.
  const readTree = () =>
    runGit({ cwd: state.gitDir, env: { GIT_DIR: state.gitDir, GIT_INDEX_FILE: temp } }, [
      'read-tree',
      '-m',
      state.baselineTree,
    ]);
  try {
    await readTree();
  } catch (error) {
    if (!seeded) throw error;
    // A seed git cannot read here (a split index's shared part lies in the repository's .git, say): without it the
    // index is still right, only without stat data, so the view's next status hashes its files once.
    fs.rmSync(temp, { force: true });
    await readTree();
  }
  // The repository's untracked cache names its own folder: in the view git would warn before every status
  // (viewGit.ts installViewIndex).
  await runGit({ cwd: state.gitDir, env: { GIT_DIR: state.gitDir, GIT_INDEX_FILE: temp } }, [
    'update-index',
    '--no-untracked-cache',
  ]);
  fs.renameSync(temp, index);
  // It holds the baseline tree, as a reset's does: a commit may build the session's tree without it (viewTree.ts).
  state.viewIndexStamp = fileStamp(index);
  saveState(context);
}
