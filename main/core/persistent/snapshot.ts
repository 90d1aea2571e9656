// Snapshots of the backing folder's current files (tracked, modified and untracked; not ignored) through
// the private index, with the shortcut that skips `write-tree` when the tree is already known. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { backingChanges, type WatchedChanges } from './backingWatch.js';
import { ignoreFiles, ignoreStamp } from './ignoreStamp.js';
import { addWatchedPaths } from './watchedStaging.js';
import { isZeroOid, runGit, snapshotCommit, type TreeChange } from './git.js';
import { backingEntry } from './hashing.js';
import {
  backingIndex,
  backingSide,
  copyIndexFile,
  fileStamp,
  keepReachable,
  type CheckoutContext,
  type CheckoutState,
} from './state.js';
import { splitPrivateIndex } from './sharedIndex.js';
import { lstatOrUndefined } from './streamWrite.js';

/** Message of every snapshot commit. */
export const SNAPSHOT_MESSAGE = 'keel: snapshot of the working folder';

/** Bytes the next snapshot hashes at most to recognise the last commit's files instead of running write-tree. */
const KNOWN_TREE_MAX_BYTES = 16 * 1024 * 1024;

/** A commit of the backing folder's files and its tree. */
export type Snapshot = { commit: string; tree: string };

/**
 * Snapshot of the backing folder's current files: its tree, and a commit of it (reused when unchanged).
 * `add -A -v` stages what changed and names each path it staged; when the index file is the one the last
 * snapshot left and git staged nothing, or exactly what the last commit wrote, the tree is already known
 * and `write-tree` (a second pass over the index) is skipped.
 */
export async function snapshot(context: CheckoutContext): Promise<Snapshot> {
  const { state } = context;
  const seeded = seedBackingIndex(context);
  const sameIndex = state.indexStamp === fileStamp(backingIndex(context));
  const indexKnown = state.indexTree !== undefined && sameIndex;
  const expected = state.expected;
  state.expected = undefined;
  // What changed since the last snapshot, when this process watched the folder since before it (backingWatch.ts).
  const watched = await watchedPaths(context, sameIndex);
  state.watch = undefined;
  const addAll = () =>
    runGit(backingSide(context), ['add', '-A', '-v', '--ignore-errors', '--', '.'], { okCodes: [1] });
  let added: { stdout: Buffer; code: number };
  if (watched.paths !== undefined) {
    added = await addWatchedPaths(backingSide(context), state.backing, watched.paths, state.indexTree);
  } else {
    try {
      added = await addAll();
    } catch (error) {
      if (!seeded) throw error;
      // A seed git cannot read (a split index whose shared part it cannot find, say): started again from no index, the
      // snapshot is the same, only every file is hashed once.
      fs.rmSync(backingIndex(context), { force: true });
      added = await addAll();
    }
  }
  lastSnapshotWay =
    watched.paths === undefined
      ? { watched: false, why: watched.why }
      : { watched: true, paths: watched.paths.length };
  const { stdout, code } = added;
  const known = indexKnown && code === 0 ? await knownTree(context, stdout, expected) : undefined;
  const found =
    known !== undefined && known === state.baselineTree && state.baseline !== ''
      ? { tree: known }
      : await snapshotCommit(backingSide(context), {
          ...(known === undefined ? {} : { tree: known }),
          baseline: state.baseline,
          baselineTree: state.baselineTree,
          onHead: state.kind !== 'shadow',
          message: SNAPSHOT_MESSAGE,
        });
  // A process that watches the folder keeps a view's private index split: a watched snapshot then writes only its
  // small changed part, and the reset copies only that in as the view's index (sharedIndex.ts).
  if (watched.mark !== undefined) await splitPrivateIndex(context);
  state.indexTree = found.tree;
  state.indexStamp = fileStamp(backingIndex(context));
  if (watched.mark !== undefined) state.watch = watched.mark;
  if (found.head !== undefined) state.backingHead = found.head;
  if (found.commit === undefined) return { commit: state.baseline, tree: found.tree };
  if (state.kind === 'shadow') keepReachable(context, found.commit);
  return { commit: found.commit, tree: found.tree };
}

/** How the last snapshot of this process found the folder's changes (tests and the trace). */
export let lastSnapshotWay: { watched: true; paths: number } | { watched: false; why?: string } = {
  watched: false,
};

/**
 * The paths changed since the last snapshot when this process's watcher vouches for them and the private index is
 * the one that snapshot left; else `paths` is undefined (a full pass). `mark` is what this snapshot records.
 */
async function watchedPaths(context: CheckoutContext, sameIndex: boolean): Promise<WatchedChanges> {
  const { state } = context;
  const ignores = watchIgnores(context);
  if (ignores === undefined) return { mark: undefined, paths: undefined };
  const since = sameIndex ? state.watch : undefined;
  const found = await backingChanges(state.backing, since, ignores);
  if (found.paths === undefined && state.watch !== undefined && !sameIndex)
    return { ...found, why: 'the private index is not the one the last snapshot left' };
  return found;
}

/**
 * The stamp of the ignore files a snapshot's git reads besides the folder's `.gitignore`s (a watch mark carries it:
 * backingWatch.ts `ignoreStamp`); undefined for a checkout whose repository's git folder is not known.
 */
export function watchIgnores(context: CheckoutContext): string | undefined {
  const { state, location } = context;
  const gitDir =
    state.kind === 'shadow'
      ? state.gitDir
      : state.repositoryIndex === undefined
        ? undefined
        : path.dirname(state.repositoryIndex);
  if (gitDir === undefined) return undefined;
  return ignoreStamp(ignoreFiles(gitDir, path.join(location.stateDir, 'exclude')));
}

/**
 * The tree of the backing index after an `add -A -v` whose output is `added`, when it follows from what
 * is known without git: nothing staged (the index still holds `indexTree`), or exactly the paths the last
 * commit wrote, each still holding the bytes and kind it wrote (then the index is that commit's tree).
 * Undefined when anything else was staged: the caller asks `write-tree`.
 */
async function knownTree(
  context: CheckoutContext,
  added: Buffer,
  expected: CheckoutState['expected'],
): Promise<string | undefined> {
  const { state } = context;
  const lines = added
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
  if (lines.length === 0) return state.indexTree;
  if (!expected || expected.from !== state.indexTree) return undefined;
  const files = Object.entries(expected.files);
  const wanted = files.map(([file, entry]) => (entry ? `add '${file}'` : `remove '${file}'`));
  if (lines.length !== wanted.length || lines.sort().join('\n') !== wanted.sort().join('\n'))
    return undefined;
  let bytes = 0;
  for (const [file, entry] of files) {
    if (!entry) {
      if (lstatOrUndefined(path.join(state.backing, file))) return undefined;
      continue;
    }
    const stat = lstatOrUndefined(path.join(state.backing, file));
    bytes += stat?.size ?? 0;
    // Hashing is bounded: beyond a few megabytes, write-tree is the cheaper answer.
    if (!stat || bytes > KNOWN_TREE_MAX_BYTES) return undefined;
    if (entry.mode === '120000' ? !stat.isSymbolicLink() : !stat.isFile()) return undefined;
    if (stat.isFile() && (entry.mode === '100755') !== ((stat.mode & 0o100) !== 0)) return undefined;
    const now = await backingEntry(context, file);
    if (now.kind === 'none' || now.kind === 'other' || now.oid !== entry.oid) return undefined;
  }
  return expected.to;
}

/**
 * What a commit leaves in the backing folder, for the next snapshot: the backing index held `from` (the
 * baseline the session started from) and, once git stages exactly these files, holds `to`. Paths with a
 * line break are left out of that shortcut (git's verbose output could not name them unambiguously).
 */
export function expectedBacking(
  from: string,
  to: string,
  changes: readonly TreeChange[],
): CheckoutState['expected'] {
  if (changes.some((change) => change.path.includes('\n'))) return undefined;
  const files: NonNullable<CheckoutState['expected']>['files'] = {};
  for (const change of changes) {
    files[change.path] = isZeroOid(change.newOid) ? null : { mode: change.newMode, oid: change.newOid };
  }
  return { from, to, files };
}

/**
 * A missing private index (a new checkout, or a view thinned when its session let it go: thin.ts) is seeded from the backing
 * repository's own index, read only, so `add -A` trusts git's stat data for the files the user has not changed
 * instead of hashing the whole project. Copied to a temp file and renamed: a crash never leaves half an index. The
 * copy is a new file (new inode and times), so the recorded `indexStamp` can never vouch for it. True when it seeded.
 */
function seedBackingIndex(context: CheckoutContext): boolean {
  const seed = context.state.repositoryIndex;
  const index = backingIndex(context);
  if (seed === undefined || lstatOrUndefined(index)) return false;
  const temp = `${index}.${process.pid}.seed`;
  try {
    copyIndexFile(seed, temp);
  } catch {
    return false; // No index in the repository (nothing ever staged): git starts from an empty one.
  }
  fs.renameSync(temp, index);
  return true;
}
