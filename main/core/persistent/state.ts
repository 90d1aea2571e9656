// A checkout's record: where it lives, its state.json, its HEAD and dirty marker, and the two git sides
// (the checkout's own index, the private index over the backing folder). Every job of a checkout takes a
// CheckoutContext. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { GitSide } from './git.js';
import { lstatOrUndefined } from './streamWrite.js';
import type { PersistentDirSpec } from './types.js';

/** Marker file: something may have written into the checkout since it was last known clean. */
const DIRTY_MARKER = 'dirty';

/**
 * How a checkout is made: a linked git worktree of the backing repository, a private shadow repository, or (issue
 * #36) a copy-on-write view of the backing repository (an overlay in a namespace of its own, viewHolder.ts) whose
 * git is a worktree admin folder with no file checked out (viewGit.ts).
 */
export type CheckoutKind = 'worktree' | 'shadow' | 'view';

/** The schema of `state.json`: what a checkout knows about itself between operations. */
export const CheckoutState = z.object({
  version: z.literal(1),
  kind: z.enum(['worktree', 'shadow', 'view']),
  backing: z.string(),
  checkout: z.string(),
  /** The worktree's admin folder (`.git/worktrees/<n>`) or the shadow repository. */
  gitDir: z.string(),
  /** The commit whose tree the checkout was last made equal to, and that tree. */
  baseline: z.string(),
  baselineTree: z.string(),
  /** Checkout-relative paths of the dependency-folder links. */
  links: z.array(z.string()),
  /** Ignored files copied in, with the backing stat and the copy's mtime at copy time. */
  copies: z.record(z.string(), z.object({ size: z.number(), mtimeMs: z.number(), copyMtimeMs: z.number() })),
  /** The checkout's files are exactly `baselineTree` (unless the dirty marker says someone wrote since). */
  clean: z.boolean(),
  /** The commit the checkout's HEAD names. */
  head: z.string(),
  /** The backing repository's HEAD at the last snapshot (parent of snapshot commits of a worktree). */
  backingHead: z.string(),
  /** The object id hash of the repository. */
  objectFormat: z.enum(['sha1', 'sha256']),
  /**
   * The tree the private backing index held after the last snapshot, and that index file's identity then
   * (inode, size, times): while the identity is unchanged, nothing else wrote the index.
   */
  indexTree: z.string().optional(),
  indexStamp: z.string().optional(),
  /** A view's own layers (kind `view`): where its writes land and overlayfs's scratch folder, in the state folder. */
  upper: z.string().optional(),
  work: z.string().optional(),
  /**
   * The backing repository's own index file (worktree and view kinds; read, never written): the seed of the private
   * index when it is missing (a view thinned when let go, issue #36), so a snapshot hashes only modified files.
   */
  repositoryIndex: z.string().optional(),
  /**
   * A view made without its baseline yet (issue #36: a new session's first request does not wait for the snapshot's
   * stat pass): `baseline` and `head` name the repository's HEAD, `baselineTree` is empty and the view's git has no
   * index. The view shows the backing folder itself, so nothing is missed; every job but mounting and thinning takes
   * the snapshot first (`takeViewBaseline`), and a turn takes it before its first tool that can change files.
   */
  pendingBaseline: z.literal(true).optional(),
  /** Why the checkout is of its kind when a view was asked for (said in the `checkout` trace record). */
  kindReason: z.string().optional(),
  /** The git metadata's fingerprint at the last reset (gitMetadata.ts): a commit refuses when it changed. */
  gitMetadata: z.record(z.string(), z.string()).optional(),
  /**
   * Where this process's watcher of the backing folder stood when the last snapshot began (backingWatch.ts): the next
   * snapshot of the same process stages only the paths changed since. Another process's watcher never matches.
   */
  watch: z.object({ id: z.string(), seq: z.number(), ignores: z.string() }).optional(),
  /**
   * A view's own index as the reset installed it (its `fileStamp`): while it holds, the index is the baseline tree (no
   * git of the model staged anything), so a commit builds the session's tree from the changed paths (viewTree.ts).
   */
  viewIndexStamp: z.string().optional(),
  /** What the last commit wrote into the backing folder, for the next snapshot to recognise (see `expectedBacking`). */
  expected: z
    .object({
      from: z.string(),
      to: z.string(),
      files: z.record(z.string(), z.object({ mode: z.string(), oid: z.string() }).nullable()),
    })
    .optional(),
});
export type CheckoutState = z.infer<typeof CheckoutState>;

/** Where one checkout lives. */
export type CheckoutLocation = {
  /** The tools' workspace root the checkout lies in: `<dataDir>/workspace` (the model can change what is below it). */
  workspaceRoot: string;
  /** The work tree the model sees: `<dataDir>/workspace/persistent/<name>`. */
  checkout: string;
  /** Private state (indexes, shadow repository, state.json): `<dataDir>/checkouts/<name>`. */
  stateDir: string;
  /** Home-wide folder of backing locks: `<home>/locks`. */
  locksRoot: string;
};

/** One checkout as its jobs see it; `state` is changed in place and written by `saveState`. */
export type CheckoutContext = {
  readonly spec: PersistentDirSpec;
  readonly location: CheckoutLocation;
  state: CheckoutState;
  /**
   * A view's holder in this process (kind `view`, attached by viewHolder.ts's `attachView` before a job reads the
   * view): its pid runs git in the view, its root is where Keel's own reads and writes of the view go.
   */
  view?: { pid: number; root: string };
};

/** Identity of a file's current version (git replaces an index by rename, so any rewrite changes it). */
export function fileStamp(file: string): string {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return 'none';
  }
}

/**
 * Copies a git index file keeping its modification time. git compares an entry's file by content rather than stat
 * when the file changed in the same second the index was written ("racily clean": its stat times are whole seconds
 * where git is built without nanoseconds, as Debian's is), judged by the index file's own mtime. A copy stamped later
 * would vouch for such an entry by stat alone, and a same-size change made in that second would go unseen (a
 * snapshot seeded from the repository's index missed one: test/main/core/persistent/closeWrites.test.ts found it).
 * The time is read before the copy: a newer index copied meanwhile gets an older stamp, which only makes more entries
 * racy.
 */
export function copyIndexFile(from: string, to: string): void {
  const stat = fs.statSync(from, { bigint: true });
  fs.copyFileSync(from, to);
  const seconds = (ns: bigint) => Number(ns / 1000n) / 1e6;
  fs.utimesSync(to, seconds(stat.atimeNs), seconds(stat.mtimeNs));
}

/**
 * The setting every git that writes a view's private index runs with: git never writes a shared index part of its
 * own (it would write it into the repository's .git): the split is Keel's (sharedIndex.ts).
 */
export const KEEP_SHARED_PART = 'splitIndex.maxPercentChange=100';

/** A git side with no private settings, running in `cwd`. */
export const plain = (cwd: string): GitSide => ({ cwd, env: {} });

/** The saved state of the checkout in `stateDir`, or undefined when there is none or it does not parse. */
export function readState(stateDir: string): CheckoutState | undefined {
  try {
    return CheckoutState.parse(JSON.parse(fs.readFileSync(path.join(stateDir, 'state.json'), 'utf8')));
  } catch {
    return undefined;
  }
}

/** Writes `state.json` atomically (temp + rename in the private state folder). */
export function saveState(context: CheckoutContext): void {
  const file = path.join(context.location.stateDir, 'state.json');
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(context.state));
  fs.renameSync(temp, file);
}

/** Records that something may have written into the checkout; one marker file, no git. */
export function markDirty(location: CheckoutLocation): void {
  if (fs.existsSync(location.stateDir)) fs.writeFileSync(path.join(location.stateDir, DIRTY_MARKER), '');
}

/** True when the checkout is known to hold exactly its baseline: nothing marked it dirty since. */
export function isQuiet(context: CheckoutContext): boolean {
  return context.state.clean && !fs.existsSync(path.join(context.location.stateDir, DIRTY_MARKER));
}

/** Records the checkout as holding exactly its baseline (the marker removed) and saves the state. */
export function markClean(context: CheckoutContext): void {
  context.state.clean = true;
  fs.rmSync(path.join(context.location.stateDir, DIRTY_MARKER), { force: true });
  saveState(context);
}

/** Points the checkout's HEAD at a commit without touching files or index (a detached HEAD is a file). */
export function setHead(context: CheckoutContext, commit: string): void {
  if (context.state.head === commit) return;
  replaceGitFile(path.join(context.state.gitDir, 'HEAD'), `${commit}\n`);
  context.state.head = commit;
}

/**
 * True when the checkout's HEAD still names the baseline. A command run in a worktree checkout can move it
 * (its own `git commit`): then a clean status says nothing about the baseline, and the index decides.
 */
export function headIsBaseline(context: CheckoutContext): boolean {
  const { state } = context;
  if (state.head !== state.baseline) return false;
  if (state.kind === 'shadow') return true;
  try {
    return fs.readFileSync(path.join(state.gitDir, 'HEAD'), 'utf8').trim() === state.baseline;
  } catch {
    return false;
  }
}

/**
 * Names a shadow repository's baseline in a ref, so its objects are never pruned. The repository is
 * private to this checkout, so the loose ref file is written directly (temp + rename), without a git.
 */
export function keepReachable(context: CheckoutContext, commit: string): void {
  const file = path.join(context.state.gitDir, 'refs', 'keel', 'baseline');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  replaceGitFile(file, `${commit}\n`);
}

/** Replaces a small file of the checkout's private git folder (HEAD, a ref) by temp file + rename. */
function replaceGitFile(file: string, text: string): void {
  const temp = `${file}.${process.pid}.keel-tmp`;
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, file);
}

/** Git run on the checkout: its work tree, and its own index (a shadow's lives in the state folder). */
export function checkoutSide(context: CheckoutContext): GitSide {
  const { kind, gitDir, checkout } = context.state;
  const env: Record<string, string> = { GIT_DIR: gitDir, GIT_WORK_TREE: checkout };
  if (kind === 'shadow') env['GIT_INDEX_FILE'] = path.join(context.location.stateDir, 'checkout.index');
  // A view's files are seen only in its holder's namespace: git runs there (in Keel's, the folder is empty).
  if (kind === 'view')
    return { cwd: checkout, env, config: excludeConfig(context), inView: attached(context).pid };
  return { cwd: checkout, env, config: excludeConfig(context) };
}

/**
 * The host path Keel's own reads and writes of the checkout's files go through: the checkout itself, or a view's
 * merged folder through its holder (`/proc/<pid>/root/<checkout>`). Throws for a view no holder is attached to.
 */
export function checkoutRoot(context: CheckoutContext): string {
  return context.state.kind === 'view' ? attached(context).root : context.state.checkout;
}

function attached(context: CheckoutContext): { pid: number; root: string } {
  if (context.view === undefined)
    throw new Error(`the copy-on-write view of ${context.spec.name} is not mounted in this process`);
  return context.view;
}

/** Git run on the backing folder through the private index, so the repository's own index is never touched. */
export function backingSide(context: CheckoutContext): GitSide {
  const { kind, gitDir, backing } = context.state;
  const env: Record<string, string> = { GIT_INDEX_FILE: backingIndex(context) };
  if (kind === 'shadow') Object.assign(env, { GIT_DIR: gitDir, GIT_WORK_TREE: backing });
  // A view's private index is copied in as the view's own at each reset (viewGit.ts's installViewIndex), where an
  // untracked cache made for the backing folder is wrong: none is kept in it, so the copy needs no git to drop one
  // (~55 ms at 80,000 files). The snapshot's `add -A` never used it (git keeps the cache for status's scans only).
  // A view's private index is split in two (sharedIndex.ts): no git writing it may write a shared part of its own
  // (it would land in the repository's .git).
  const config = excludeConfig(context, kind !== 'view');
  return { cwd: backing, env, config: kind === 'view' ? [...config, KEEP_SHARED_PART] : config };
}

/** The checkout's excludes, and (unless told not to) an untracked cache so unchanged folders are not re-read. */
function excludeConfig(context: CheckoutContext, untrackedCache = true): string[] {
  return [
    `core.excludesFile=${path.join(context.location.stateDir, 'exclude')}`,
    `core.untrackedCache=${untrackedCache}`,
  ];
}

/** The private index over the backing folder: `<stateDir>/backing.index`. */
export function backingIndex(context: CheckoutContext): string {
  return path.join(context.location.stateDir, 'backing.index');
}

/** A view's own git index (`<gitDir>/index`, in the repository's `.git/worktrees/<n>/`). */
export function viewIndex(context: CheckoutContext): string {
  return path.join(context.state.gitDir, 'index');
}

/** Parent of snapshot commits: the backing HEAD for a worktree, the previous baseline for a shadow. */
export function snapshotParent(context: CheckoutContext): string {
  return context.state.kind === 'shadow' ? context.state.baseline : context.state.backingHead;
}

/** True when the checkout and the folders from the workspace root down to it are real folders, not links. */
export function isIntact(location: CheckoutLocation): boolean {
  return isRealFolderBelow(location.workspaceRoot, location.checkout);
}

/** True when every component from `root` (excluded) down to `target` is a folder, not a link or file. */
export function isRealFolderBelow(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
  let current = root;
  for (const part of rel.split(path.sep).filter((p) => p !== '')) {
    current = path.join(current, part);
    if (!lstatOrUndefined(current)?.isDirectory()) return false;
  }
  return true;
}
