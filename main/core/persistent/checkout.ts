// The checkout of one Persistent Dir: the API sessions use. Each job lives in its own file (create,
// snapshot, reset, extras, merge, commit, hashing, state); this class runs them one at a time. See README.md.
import path from 'node:path';
import { commitChanges, uncommittedFiles, type CommitOptions } from './commit.js';
import { confirmViewWatch, createCheckout, takeViewBaseline } from './create.js';
import { watchedReady } from './backingWatch.js';
import { changedGitMetadata, commonGitDir, gitMetadataFingerprint } from './gitMetadata.js';
import { gitMetadataPaths } from '../../sandbox/protectedPaths.js';
import { overlayBaseline, type OverlayFile } from './overlay.js';
import { restoreViewIndex, thinView } from './thin.js';
import { resetIntact } from './reset.js';
import {
  boxesOnView,
  attachView,
  stopViews,
  viewChoiceFor,
  viewsPinned,
  type CheckoutKindSetting,
  type ViewChoice,
} from './viewHolder.js';
import {
  checkoutRoot,
  headIsBaseline,
  isIntact,
  isQuiet,
  markDirty,
  readState,
  saveState,
  type CheckoutContext,
  type CheckoutKind,
  type CheckoutLocation,
} from './state.js';
import type { CommitReport, PersistentDirSpec, UncommittedFile } from './types.js';
import { viewStatus } from './viewStatus.js';

export type { CheckoutKind, CheckoutLocation } from './state.js';
export type { CommitOptions } from './commit.js';
export type { CheckoutKindSetting, ViewChoice } from './viewHolder.js';
export type { OverlayFile } from './overlay.js';
export { PersistentDirError } from './types.js';

/**
 * One session's checkout of one Persistent Dir. Its baseline is a git snapshot of the backing folder's
 * current files (tracked, modified and untracked; not ignored): "what did the session change" is a tree
 * diff from git's stat cache, "did the backing folder change that file since" is a hash of the few files
 * the session changed, and the base of a three-way merge is always at hand. Not safe for concurrent use:
 * the session's writer lease and its in-process queue serialize callers.
 */
export class Checkout {
  private constructor(private readonly context: CheckoutContext) {}

  /** The checkout's state if it was created before and is intact, else undefined; runs no git. */
  static existing(spec: PersistentDirSpec, location: CheckoutLocation): Checkout | undefined {
    const state = readState(location.stateDir);
    if (!state || !isIntact(location)) return undefined;
    return new Checkout({ spec, location, state });
  }

  /**
   * Returns the checkout, creating it first when needed: a `git worktree add --detach` of a snapshot of
   * the backing folder for a git repository root with a commit, else a shadow repository whose first
   * snapshot hashes the folder once. A half-made checkout (a crash mid-creation) is removed and made again.
   */
  static async open(
    spec: PersistentDirSpec,
    location: CheckoutLocation,
    options: { view?: ViewChoice; kind?: CheckoutKindSetting; deferBaseline?: boolean } = {},
  ): Promise<Checkout> {
    const existing = Checkout.existing(spec, location);
    if (existing) return existing;
    const probeCache = path.join(path.dirname(location.locksRoot), 'overlay-probe.json');
    const view =
      options.view ?? (await viewChoiceFor(options.kind, path.dirname(location.stateDir), probeCache));
    // A view may be made without its baseline (a new turn's first request waits for no stat pass): see takeViewBaseline.
    const created = await createCheckout(spec, location, {
      ...(view ? { view } : {}),
      ...(options.deferBaseline === true ? { deferBaseline: true } : {}),
    });
    recordGitMetadata(created);
    return new Checkout(created);
  }

  /**
   * Records that something may have written into the checkout (a turn, a host's staged file), so the next
   * reset rewrites it and the next commit looks at it. One marker file, no git.
   */
  static markDirty(location: CheckoutLocation): void {
    markDirty(location);
  }

  /** The Persistent Dir this checkout is of. */
  get spec(): PersistentDirSpec {
    return this.context.spec;
  }

  /** Where the checkout and its private state live. */
  get location(): CheckoutLocation {
    return this.context.location;
  }

  /** The backing folder (real path). */
  get backing(): string {
    return this.context.state.backing;
  }

  /** Why the checkout is of its kind when a view was asked for (the probe's sentence), for the trace. */
  get kindReason(): string | undefined {
    return this.context.state.kindReason;
  }

  /** How this checkout was made. */
  get kind(): CheckoutKind {
    return this.context.state.kind;
  }

  /**
   * Host paths a boxed command in this checkout must be able to read (read-only): the repository's git
   * folder (so git works in a worktree) and the targets of the dependency-folder links; and what it must not
   * change: the checkout's `.git` file and the admin folder it names (a `gitdir:` pointing elsewhere would
   * hand Keel's and the user's git a config the command wrote).
   */
  boxReadOnlyPaths(): string[] {
    const { state } = this.context;
    const paths = state.links.map((link) => path.join(state.backing, link));
    if (state.kind !== 'shadow') {
      paths.push(commonGitDir(state.gitDir));
      for (const metadata of gitMetadataPaths(state.checkout))
        if (!paths.includes(metadata)) paths.push(metadata);
    }
    return paths;
  }

  /**
   * The host path of the checkout's files for Keel's own reads and writes (its tools' root): the checkout itself,
   * or a view's merged folder through its holder, which is started first when it is not running in this process.
   */
  async mount(options: { baseline?: 'later' } = {}): Promise<string> {
    return this.exclusive(
      async () => {
        // Whoever mounts it may run git in it (a terminal's box between turns): a thinned view's index comes back.
        await restoreViewIndex(this.context);
        return checkoutRoot(this.context);
      },
      // A turn mounts its views before its first request and takes a view's pending baseline only before a tool that
      // can change files (`takeBaseline`); anyone else mounting may run git in it at once.
      { settle: options.baseline !== 'later' },
    );
  }

  /** Issue #36: takes a view's pending baseline (the snapshot it was made without); nothing for any other checkout. */
  async takeBaseline(): Promise<void> {
    return this.exclusive(() => Promise.resolve());
  }

  /**
   * True when the checkout is known to hold exactly its baseline with its git agreeing (a worktree whose HEAD
   * names the baseline, nothing marked it dirty since a reset or commit made it so): its `git status` is clean
   * without running one. A few stat calls, no git (issue #36: the environment block's first status of a turn). A
   * view qualifies the same way: a reset (or its making) leaves its upper layer holding only its `.git` file and its
   * index the snapshot's, and a commit marks it clean only once the backing folder holds what its upper layer does;
   * its lower is the live project, so a user's edit made since shows in the turn's later statuses, as it would now.
   */
  isKnownClean(): boolean {
    return (
      (this.kind === 'worktree' || this.kind === 'view') &&
      isQuiet(this.context) &&
      headIsBaseline(this.context)
    );
  }

  /**
   * Makes the checkout equal to the backing folder's current files again, discarding every uncommitted
   * write (the model's and the host's); ignored files the session made (build output) stay. When nothing
   * wrote into the checkout and the backing folder is unchanged, no file is touched.
   */
  async reset(): Promise<void> {
    return this.exclusive(
      async () => {
        if (isIntact(this.location) && this.context.state.pendingBaseline === true) {
          // A view that never took its baseline shows the backing folder as it is: the baseline taken now is the reset,
          // unless something wrote into the view meanwhile (a terminal), which the ordinary reset then drops.
          await takeViewBaseline(this.context);
          if (!isQuiet(this.context)) await resetIntact(this.context);
        } else if (isIntact(this.location)) await resetIntact(this.context);
        // The session replaced its checkout (or a folder above it) by something else: make it again.
        else {
          // A view is made again as a view (its holder ended first: its mount point is being replaced).
          const view =
            this.kind === 'view' ? { available: true, reason: 'made again as the view it was' } : undefined;
          if (view) await stopViews(this.location);
          this.context.state = (
            await Checkout.open(this.spec, this.location, view ? { view } : {})
          ).context.state;
        }
        // A turn starts from here: the git metadata it will be compared with at the commit.
        recordGitMetadata(this.context);
      },
      { resetting: true, settle: false },
    );
  }

  /**
   * Right after a reset: the checkout holds `files` instead of the backing folder's versions, as its baseline
   * (a fork's view of the project at its fork point, overlay.ts); the next reset returns to the backing folder.
   */
  async overlay(files: readonly OverlayFile[]): Promise<void> {
    return this.exclusive(() => overlayBaseline(this.context, files));
  }

  /**
   * Issue #36: drops a quiet view's two git indexes (thin.ts; ~80 bytes a project file each), so a view its session
   * let go of holds only its upper layer and state (turnCheckouts.ts thins as the views are let go: idle, or the
   * session ended for its host). The next reset or job rebuilds them. A copy, or a view with anything uncommitted, is
   * left as it is; true when it thinned.
   */
  async thin(): Promise<boolean> {
    // A background command or terminal still running on the view may run git over its index, and a turn of this
    // process uses it: kept until a later let-go. A view without its baseline yet holds no index to drop: thinning
    // needs none taken.
    return this.exclusive(
      () =>
        Promise.resolve(
          !viewsPinned(this.location) &&
            !boxesOnView(this.location, this.context.state) &&
            thinView(this.context),
        ),
      { resetting: true, settle: false },
    );
  }

  /**
   * Issue #36: the `git status --short` lines of the checkout's folder `folder` ('' its root) when they are known
   * without a git over its files (a view whose backing folder the watcher vouches for: viewStatus.ts), else undefined
   * (the caller runs git). Takes no pending baseline: a view without one is left to git.
   */
  async status(folder: string): Promise<string[] | undefined> {
    if (this.kind !== 'view') return undefined;
    return this.exclusive(() => viewStatus(this.context, folder), { settle: false });
  }

  /**
   * Issue #36: once this process's watcher of the backing folder has walked it, a view whose baseline it did not see
   * taken (a one-turn host's reset: `keel run --session`, whose watch starts with the turn) is checked against the folder
   * and marked (create.ts `confirmViewWatch`: a stat pass while the turn's tools run, instead of a `git status` over
   * every file at each later request). Only while a turn of this process pins the views; true when marked.
   */
  async confirmWatch(): Promise<boolean> {
    if (this.kind !== 'view' || !(await watchedReady(this.backing))) return false;
    // A job of its own (the state and the private index), never mounting: a turn's views are mounted already.
    return this.exclusive(async () => viewsPinned(this.location) && confirmViewWatch(this.context), {
      resetting: true,
      settle: false,
    });
  }

  /** What the session changed in the checkout since its baseline and has not committed. */
  async uncommitted(): Promise<UncommittedFile[]> {
    return this.exclusive(() => uncommittedFiles(this.context));
  }

  /**
   * Commits the session's changes to the backing folder. A file the backing folder changed too is merged
   * three-way (`git merge-file`); on any conflict nothing is written, the conflicting files are named and
   * the session's whole change is kept as a patch artifact. Afterwards the checkout's files are its new
   * baseline; what the backing folder holds beyond them (merges, edits made meanwhile) comes with the next reset.
   * When the repository's git metadata (hooks, config, HEAD's branch, commondir, info/, alternates, the
   * checkout's `.git` file) changed since the last reset, nothing of the session's is written: every change
   * is held back (the report's `held`, with `gitMetadataChanges` naming each change) for a person to
   * approve. Said once: the changed metadata becomes the new reference.
   */
  async commit(options: CommitOptions): Promise<CommitReport> {
    return this.exclusive(() => {
      const gitMetadataChanges = changedGitMetadata(this.context.state);
      if (gitMetadataChanges.length > 0) recordGitMetadata(this.context);
      return commitChanges(this.context, {
        ...options,
        ...(gitMetadataChanges.length > 0 ? { gitMetadataChanges } : {}),
      });
    });
  }

  /**
   * Runs one index-writing operation of this checkout at a time in this process: a review reading the
   * uncommitted changes (update-index, write-tree) while a turn's auto commit stages the same index would
   * otherwise fail one of them on git's index.lock. Each starts from the state on disk, which an operation
   * through another handle of the same checkout may have moved.
   */
  private async exclusive<T>(
    operation: () => Promise<T>,
    { resetting = false, settle = true }: { resetting?: boolean; settle?: boolean } = {},
  ): Promise<T> {
    const key = this.location.stateDir;
    const previous = checkoutQueues.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    checkoutQueues.set(key, tail);
    await previous;
    try {
      this.context.state = readState(this.location.stateDir) ?? this.context.state;
      // A view made without its baseline takes it before any job that reads or compares with it (create.ts).
      if (settle && this.context.state.pendingBaseline === true && isIntact(this.location))
        await takeViewBaseline(this.context);
      // A view's jobs read it through its holder (a reset ends the holder itself and mounts nothing).
      if (this.context.state.kind === 'view' && !resetting && isIntact(this.location)) {
        await attachView(this.context);
        // A view thinned when let go gets its index back before a job reads its git: one that may hold changes
        // (a quiet view's commit and uncommitted list need no git, so `keel gc` and listings never rebuild it).
        if (!isQuiet(this.context)) await restoreViewIndex(this.context);
      }
      return await operation();
    } finally {
      release();
      if (checkoutQueues.get(key) === tail) checkoutQueues.delete(key);
    }
  }
}

/** Takes the fingerprint of the checkout's git metadata into its state (state.json). */
function recordGitMetadata(context: CheckoutContext): void {
  context.state.gitMetadata = gitMetadataFingerprint(context.state);
  saveState(context);
}

/** Per checkout (its state folder): the tail of the operations queued on it in this process. */
const checkoutQueues = new Map<string, Promise<void>>();
