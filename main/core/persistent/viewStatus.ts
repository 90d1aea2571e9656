// Issue #36: a view's `git status --short` for the environment block without a git over its files. The view's git
// compares every file with its index (an lstat each through the overlay, ~350 ms at 80,000 files, and every overlay
// inode it makes is then freed by the next reset's unmount, ~170 ms more). While that index is the one the reset
// installed (it holds the baseline tree) and the watcher vouches that the backing folder (the view's lower layer) is
// what that snapshot took, only the files in the upper layer can differ: they are compared with the baseline tree
// here, exactly as git would print them. Whatever this way cannot answer exactly is left to git. See README.md.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { backingQuietSince } from './backingWatch.js';
import { runGit, splitNul } from './git.js';
import { overlayChanges } from './overlayChanges.js';
import { watchIgnores } from './snapshot.js';
import { checkoutRoot, checkoutSide, type CheckoutContext } from './state.js';
import {
  baselineTrees,
  baseName,
  coreFlags,
  depth,
  parentOf,
  viewIndexIsBaseline,
  type Folder,
  type TreeEntry,
} from './viewTree.js';
import { lstatOrNone } from './streamWrite.js';

/** More changed files than this: git's own status (the comparisons here would cost as much). */
const MAX_CHANGED = 2_000;

const TREE_MODE = '40000';
const GITLINK_MODE = '160000';
const LINK_MODE = '120000';

/**
 * The lines `git status --short --untracked-files=normal -- .` prints in the view's folder `folder` (relative to the
 * view's root, '' for the root; paths relative to it, as `status.relativePaths` prints them), or undefined when this
 * way cannot answer exactly (then the caller runs git): the view's index or HEAD moved, the backing folder changed
 * since the reset's snapshot or no watcher can tell, the ignore files or the `core` flags that matter differ, the
 * baseline holds a gitlink, a changed path is a file git reads rules from (`.gitignore`...), in a nested repository,
 * a special file, or one git quotes.
 */
export async function viewStatus(context: CheckoutContext, folder: string): Promise<string[] | undefined> {
  const answer = await statusOf(context, folder);
  lastViewStatusWay = typeof answer === 'string' ? { known: false, why: answer } : { known: true };
  return typeof answer === 'string' ? undefined : answer;
}

/** How the last view status of this process was answered (tests and the trace): known here, or why git was left. */
export let lastViewStatusWay: { known: true } | { known: false; why: string } = {
  known: false,
  why: 'none asked yet',
};

/** The lines, or why git must answer. */
async function statusOf(context: CheckoutContext, folder: string): Promise<string[] | string> {
  const { state } = context;
  const mark = state.watch;
  if (state.kind !== 'view' || state.pendingBaseline === true) return 'not a view with its baseline';
  if (state.objectFormat !== 'sha1' || state.baselineTree === '')
    return 'not a sha1 repository with a baseline';
  if (!viewIndexIsBaseline(context)) return "the view's index or HEAD is not the reset's";
  if (mark === undefined || watchIgnores(context) !== mark.ignores)
    return 'no watch of the backing folder since the snapshot, or its ignore files changed';
  if (!(await backingQuietSince(state.backing, mark)))
    return 'the backing folder changed since the snapshot, or no watcher can tell';
  const flags = await coreFlags(context);
  if (flags.fileModeOff || flags.ignoreCase || flags.symlinksOff)
    return 'core.fileMode off, core.ignoreCase or core.symlinks off';
  const root = checkoutRoot(context);
  const inFolder = (file: string) => folder === '' || file.startsWith(`${folder}/`);
  const upper = state.upper as string;
  // Folders new in upper are not walked: one ignored as a whole (`node_modules/` an install made) is never listed.
  const listed = overlayChanges(
    { lower: state.backing, upper, view: root, own: ['.git'] },
    { newFolders: 'list' },
  ).filter((change) => inFolder(change.path));
  const fresh = await newFolderFiles(
    context,
    upper,
    listed.filter((change) => change.change === 'folder').map((change) => change.path),
  );
  if (typeof fresh === 'string') return fresh;
  const changed = [
    ...listed.filter((change) => change.change !== 'folder').map((change) => change.path),
    ...fresh,
  ];
  if (changed.length > MAX_CHANGED) return `${changed.length} files changed`;
  if (!changed.every(statusPath)) return 'a changed path is a git file, a nested repository or an odd name';
  // The folders on every changed path's way (and the folder asked about): tracked ones are the baseline's trees.
  const wanted = new Set<string>(['']);
  for (const file of [...changed, ...(folder === '' ? [] : [`${folder}/`])])
    for (let at = file.indexOf('/'); at !== -1; at = file.indexOf('/', at + 1)) wanted.add(file.slice(0, at));
  const [free, trees] = await Promise.all([
    holdsNoGitlink(context),
    baselineTrees(
      context,
      [...wanted].sort((a, b) => depth(a) - depth(b)),
    ),
  ]);
  if (!free || trees === undefined) return 'the baseline holds a gitlink';
  if (folder !== '' && !trees.has(folder)) return 'the folder asked about is not tracked';
  const entryOf = (file: string): TreeEntry | undefined => trees.get(parentOf(file))?.get(baseName(file));

  const lines: { file: string; code: string }[] = [];
  const toHash: { file: string; oid: string }[] = [];
  const untracked: string[] = [];
  for (const file of changed) {
    const entry = entryOf(file);
    const stat = lstatOrNone(path.join(root, file));
    if (entry === undefined || entry.mode === TREE_MODE) {
      // Not tracked: a new file (or one over a tracked folder's name); gone again or a folder: nothing to show.
      if (stat?.isFile() === true || stat?.isSymbolicLink() === true) untracked.push(file);
      else if (stat !== undefined && !stat.isDirectory()) return 'a special file';
      continue;
    }
    const oid = entry.oid.toString('hex');
    if (stat === undefined || stat.isDirectory()) lines.push({ file, code: ' D' });
    else if (stat.isSymbolicLink()) {
      if (entry.mode !== LINK_MODE) lines.push({ file, code: ' T' });
      else if (blobId(fs.readlinkSync(path.join(root, file), { encoding: 'buffer' })) !== oid)
        lines.push({ file, code: ' M' });
    } else if (stat.isFile()) {
      if (entry.mode === LINK_MODE) lines.push({ file, code: ' T' });
      else if (entry.mode !== ((stat.mode & 0o100) !== 0 ? '100755' : '100644'))
        lines.push({ file, code: ' M' });
      else toHash.push({ file, oid });
    } else return 'a special file';
  }
  // Hashed as git status hashes a file whose stat changed: the clean filters and conversions of its path, in the view.
  const [hashed, shown] = await Promise.all([
    toHash.length === 0
      ? undefined
      : runGit(checkoutSide(context), ['hash-object', '--stdin-paths'], {
          input: toHash.map(({ file }) => `${file}\n`).join(''),
        }),
    untrackedShown(context, untracked, trees, folder),
  ]);
  const ids = hashed?.stdout.toString('utf8').split('\n') ?? [];
  for (const [at, { file, oid }] of toHash.entries()) {
    const id = ids[at];
    if (id === undefined || id === '') return 'git hashed fewer files than asked';
    if (id !== oid) lines.push({ file, code: ' M' });
  }
  const relative = (file: string) => (folder === '' ? file : file.slice(folder.length + 1));
  const changes = lines
    .sort((a, b) => byteOrder(a.file, b.file))
    .map(({ file, code }) => `${code} ${relative(file)}`);
  const news = [...new Set(shown)].sort(byteOrder).map((file) => `?? ${relative(file)}`);
  const all = [...changes, ...news];
  // Names git prints quoted (a space, a quote, a backslash, a control character): left to git.
  if (all.some((line) => !/^[^\0-\x20"\\\x7f]+$/.test(line.slice(3)))) return 'a name git quotes';
  return all;
}

/**
 * The files below folders new in upper that git status could show: each level's folders asked of the ignore rules at
 * once (`dir/`: one ignored as a whole is not looked into, as git does not), the files of the others listed (special
 * files skipped, as git skips them). All of upper's: a folder lower lacks has nothing of lower's. A string (why) past
 * `MAX_CHANGED` files or for an odd name.
 */
async function newFolderFiles(
  context: CheckoutContext,
  upper: string,
  folders: readonly string[],
): Promise<string[] | string> {
  const files: string[] = [];
  for (let level = [...folders]; level.length > 0;) {
    if (!level.every(statusPath)) return 'a changed path is a git file, a nested repository or an odd name';
    const { stdout } = await runGit(checkoutSide(context), ['check-ignore', '-z', '--stdin', '--no-index'], {
      input: level.map((folder) => `${folder}/\0`).join(''),
      okCodes: [1],
    });
    const ignored = new Set(splitNul(stdout));
    const next: string[] = [];
    for (const folder of level) {
      if (ignored.has(`${folder}/`)) continue;
      for (const entry of fs.readdirSync(path.join(upper, folder), { withFileTypes: true })) {
        const child = `${folder}/${entry.name}`;
        if (entry.isDirectory()) next.push(child);
        else if (entry.isFile() || entry.isSymbolicLink()) files.push(child);
      }
      if (files.length > MAX_CHANGED) return `more than ${MAX_CHANGED} new files`;
    }
    level = next;
  }
  return files;
}

/**
 * A path whose status git prints as this way does: no `.git` folder on it (a nested repository), no file git reads
 * its rules from (`.gitignore`, `.gitattributes`, `.gitmodules`: a change to one changes what other files show), no
 * name git may refuse (`.git.`, `git~1`), no odd bytes. `.github/`, `.gitkeep` are ordinary.
 */
function statusPath(file: string): boolean {
  if (file === '' || file.includes('\uFFFD') || file.includes('\n')) return false;
  return file.split('/').every((part) => {
    const lower = part.toLowerCase();
    return (
      part !== '' &&
      part !== '.' &&
      part !== '..' &&
      !/^\.git($|[. ~]|ignore|attributes|modules)/.test(lower) &&
      !/^git~\d/.test(lower)
    );
  });
}

/**
 * The untracked files git status shows: those the view's ignore rules do not ignore (the rules alone: none of them is
 * in the index, the baseline tree), each as its outermost folder below `folder` that holds no tracked file (`dir/`,
 * as `--untracked-files=normal` collapses it), or itself; a folder named as a tracked file is not shown (git drops an
 * untracked entry whose name the index holds: a tracked file replaced by a folder shows as deleted only).
 */
async function untrackedShown(
  context: CheckoutContext,
  files: readonly string[],
  trees: ReadonlyMap<string, Folder>,
  folder: string,
): Promise<string[]> {
  if (files.length === 0) return [];
  const { stdout } = await runGit(checkoutSide(context), ['check-ignore', '-z', '--stdin', '--no-index'], {
    input: files.map((file) => `${file}\0`).join(''),
    okCodes: [1],
  });
  const ignored = new Set(splitNul(stdout));
  const shown: string[] = [];
  for (const file of files) {
    if (ignored.has(file)) continue;
    let outermost = file;
    const from = folder === '' ? 0 : folder.length + 1;
    for (let at = file.indexOf('/', from); at !== -1; at = file.indexOf('/', at + 1))
      if (!trees.has(file.slice(0, at))) {
        outermost = file.slice(0, at + 1);
        break;
      }
    if (outermost.endsWith('/')) {
      const name = outermost.slice(0, -1);
      const entry = trees.get(parentOf(name))?.get(baseName(name));
      if (entry !== undefined && entry.mode !== TREE_MODE) continue;
    }
    shown.push(outermost);
  }
  return shown;
}

/** Per view (its git folder): the last baseline tree found to hold no gitlink, so the next is checked by one diff. */
const gitlinkFree = new Map<string, string>();
/** Per view: the check of its current baseline under way or done (a reset starts it: `checkGitlinksAhead`). */
const gitlinkChecks = new Map<string, { tree: string; free: Promise<boolean> }>();

/**
 * Starts the gitlink check of a view's new baseline (a reset in a process that watches its backing folder calls this):
 * its first status then finds the answer ready instead of waiting for a git.
 */
export function checkGitlinksAhead(context: CheckoutContext): void {
  if (context.state.kind === 'view' && context.state.baselineTree !== '') void holdsNoGitlink(context);
}

/**
 * True when the baseline tree holds no gitlink (a submodule or a nested repository the snapshot staged: git status
 * looks into those, which this way does not): the whole tree listed once, then only what each new baseline changed.
 * Never rejects (a git that fails answers false).
 */
function holdsNoGitlink(context: CheckoutContext): Promise<boolean> {
  const { state } = context;
  const tree = state.baselineTree;
  const running = gitlinkChecks.get(state.gitDir);
  if (running?.tree === tree) return running.free;
  const free = findNoGitlink(state.gitDir, tree).catch(() => false);
  if (gitlinkChecks.size > 100) gitlinkChecks.clear();
  gitlinkChecks.set(state.gitDir, { tree, free });
  return free;
}

async function findNoGitlink(gitDir: string, tree: string): Promise<boolean> {
  const known = gitlinkFree.get(gitDir);
  if (known === tree) return true;
  const side = { cwd: gitDir, env: { GIT_DIR: gitDir } };
  let free: boolean;
  if (known !== undefined) {
    // Pairs of records: `:<old mode> <new mode> <old id> <new id> <status>`, then the path. A gitlink new here is a
    // new mode.
    const { stdout } = await runGit(side, ['diff-tree', '-r', '-z', '--no-renames', known, tree]);
    const records = splitNul(stdout);
    free = records.every((record, at) => at % 2 === 1 || record.split(' ')[1] !== GITLINK_MODE);
  } else {
    const { stdout } = await runGit(side, ['ls-tree', '-r', '-z', tree]);
    free = splitNul(stdout).every((record) => !record.startsWith(`${GITLINK_MODE} `));
  }
  if (free) {
    if (gitlinkFree.size > 100) gitlinkFree.clear();
    gitlinkFree.set(gitDir, tree);
  }
  return free;
}

/** A blob's sha1 id. */
function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** git's order of paths: by their bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
