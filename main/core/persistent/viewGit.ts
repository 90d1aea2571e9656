// Issue #36: the git folder of a copy-on-write view of a repository root (main/sandbox/overlayView.ts), made
// without writing one project file (create.ts makes a view checkout with it). See README.md (#36).
import fs from 'node:fs';
import path from 'node:path';
import { runGit } from './git.js';
import { withBackingLock } from './lock.js';
import { plain } from './state.js';
import { PersistentDirError } from './types.js';

/** The signature of git's untracked cache extension in an index file. */
const UNTRACKED_CACHE_SIGNATURE = Buffer.from('UNTR');

/** Where a view's git folder is made, and of what. */
export type ViewGitOptions = {
  /** The backing repository's root (the view's lower folder). */
  backing: string;
  /** The view's mount point: the host folder that receives only the `.git` file. */
  checkout: string;
  /** The view's upper layer: the `.git` file goes there too, hiding the repository's own `.git` in the view. */
  upper: string;
  /** The snapshot commit of the backing folder the view starts from (snapshot.ts). */
  commit: string;
  /** The private index that snapshot left (`backing.index`): the snapshot's tree with the backing files' stat data. */
  backingIndex: string;
  /** Home-wide folder of backing locks. */
  locksRoot: string;
};

/**
 * Makes the view's git folder: a linked worktree admin folder of the snapshot commit with no file checked out
 * (`worktree add --no-checkout`), given the snapshot's private index as its own. The view shows the backing files
 * unchanged (same inode, size and times through overlayfs), so git's stat cache holds for them: the box's
 * `git status` in the view is clean at once and shows exactly the session's work, as in a worktree checkout,
 * without hashing or writing the project. Returns the admin folder (real path).
 */
export async function makeViewGit(options: ViewGitOptions): Promise<{ gitDir: string }> {
  const made = await withBackingLock(options.locksRoot, options.backing, () => addViewWorktree(options));
  await installViewIndex(options.backingIndex, made.gitDir);
  return made;
}

/**
 * Gives the view's git folder `source` (Keel's private snapshot index, or a copy of the repository's) as its index,
 * without an untracked cache: the cache names the folder and system it was made for (git's "location" ident), the
 * backing folder, so in the view git printed `warning: untracked cache is disabled on this system or location`
 * ahead of every `git status` the model ran. Written to a temp file beside it and renamed into place. A view's own
 * snapshot index keeps no cache (state.ts's backingSide): copied as it is; one that may hold one (its bytes hold the
 * extension's signature `UNTR`, or a path does) is rewritten by `update-index` (~80 bytes a file).
 */
export async function installViewIndex(
  source: string,
  gitDir: string,
  target = path.join(gitDir, 'index'),
): Promise<void> {
  const temp = `${target}.${process.pid}.keel-install`;
  fs.rmSync(temp, { force: true });
  const bytes = fs.readFileSync(source);
  fs.writeFileSync(temp, bytes);
  try {
    if (bytes.includes(UNTRACKED_CACHE_SIGNATURE))
      await runGit({ cwd: gitDir, env: { GIT_DIR: gitDir, GIT_INDEX_FILE: temp } }, [
        'update-index',
        '--no-untracked-cache',
      ]);
    fs.renameSync(temp, target);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/**
 * The first half of `makeViewGit`, for a caller holding the backing lock: the worktree admin folder at `commit` with
 * no file checked out and no index yet, and the `.git` file in the mount point and in upper. `createView` runs it at
 * the repository's HEAD while the snapshot's stat pass runs, then points HEAD at the snapshot and copies its index in.
 */
export async function addViewWorktree(
  options: Pick<ViewGitOptions, 'backing' | 'checkout' | 'upper' | 'commit'>,
): Promise<{ gitDir: string }> {
  fs.mkdirSync(options.checkout, { recursive: true });
  await runGit(plain(options.backing), [
    'worktree',
    'add',
    '-f',
    '--no-checkout',
    '--detach',
    '-q',
    options.checkout,
    options.commit,
  ]);
  const dotGit = fs.readFileSync(path.join(options.checkout, '.git'), 'utf8');
  const named = /^gitdir: (.+)$/m.exec(dotGit)?.[1];
  if (named === undefined)
    throw new PersistentDirError(
      `git made a view's worktree at ${options.checkout} without a readable .git file`,
    );
  const gitDir = fs.realpathSync.native(path.resolve(options.checkout, named.trim()));
  fs.mkdirSync(options.upper, { recursive: true });
  fs.writeFileSync(path.join(options.upper, '.git'), dotGit);
  return { gitDir };
}
