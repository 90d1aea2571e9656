import { createHash, randomBytes, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { z } from 'zod';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import {
  diffTrees,
  gitText,
  snapshotCommit,
  stageCommitAndDiff,
  isZeroOid,
  runGit,
  splitNul,
  streamBlob,
  type GitSide,
  type TreeChange,
} from './git.js';
import { withBackingLock } from './lock.js';
import {
  ensureRealFolder,
  hashFile,
  lstatOrUndefined,
  writeStreamConfined,
  writeSymlinkConfined,
} from './streamWrite.js';
import type { CommitReport, CommittedFile, PersistentDirSpec, UncommittedFile } from './types.js';

/**
 * Dependency folders a checkout links to (read-only use) instead of copying: ignored by the project and
 * often hundreds of megabytes. Every other ignored folder (build output, caches) starts empty in a checkout.
 */
export const LINKED_DEPENDENCY_DIRS: readonly string[] = [
  'node_modules',
  'bower_components',
  '.venv',
  'venv',
  '.tox',
  '__pypackages__',
];

/** Ignored single files (.env, local config) copied into a checkout, so the project still runs there. */
const IGNORED_COPY_MAX_BYTES = 1024 * 1024;
const IGNORED_COPY_MAX_FILES = 200;

/** Modes of the tree entries a checkout commits: regular, executable, symbolic link. */
const FILE_MODES = new Set(['100644', '100755', '120000']);

/** Bytes the next snapshot hashes at most to recognise the last commit's files instead of running write-tree. */
const KNOWN_TREE_MAX_BYTES = 16 * 1024 * 1024;

/** Message of every snapshot commit. */
const SNAPSHOT_MESSAGE = 'keel: snapshot of the working folder';

/** Marker file: something may have written into the checkout since it was last known clean. */
const DIRTY_MARKER = 'dirty';

/** How a checkout is made: a linked git worktree of the backing repository, or a private shadow repository. */
export type CheckoutKind = 'worktree' | 'shadow';

const CheckoutState = z.object({
  version: z.literal(1),
  kind: z.enum(['worktree', 'shadow']),
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
  /** What the last commit wrote into the backing folder, for the next snapshot to recognise (see `expectedBacking`). */
  expected: z
    .object({
      from: z.string(),
      to: z.string(),
      files: z.record(z.string(), z.object({ mode: z.string(), oid: z.string() }).nullable()),
    })
    .optional(),
});
type CheckoutState = z.infer<typeof CheckoutState>;

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

/** Options of `Checkout.commit`. */
export type CommitOptions = {
  /** The session's artifacts folder; the diff (or the conflict patch) is written there. */
  artifactsDir: string;
  /** Artifact handle stem, e.g. `commits/12-project` (".patch" is added). */
  artifactStem: string;
};

/** Thrown when a Persistent Dir cannot be checked out; the message says what to fix. */
export class PersistentDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PersistentDirError';
  }
}

const plain = (cwd: string): GitSide => ({ cwd, env: {} });

/**
 * One session's checkout of one Persistent Dir. Its baseline is a git snapshot of the backing folder's
 * current files (tracked, modified and untracked; not ignored): "what did the session change" is a tree
 * diff from git's stat cache, "did the backing folder change that file since" is a hash of the few files
 * the session changed, and the base of a three-way merge is always at hand. Not safe for concurrent use:
 * the session's writer lease and its in-process queue serialize callers.
 */
export class Checkout {
  private constructor(
    readonly spec: PersistentDirSpec,
    readonly location: CheckoutLocation,
    private state: CheckoutState,
  ) {}

  /** The checkout's state if it was created before and is intact, else undefined; runs no git. */
  static existing(spec: PersistentDirSpec, location: CheckoutLocation): Checkout | undefined {
    const state = readState(location.stateDir);
    if (!state || !isIntact(location)) return undefined;
    return new Checkout(spec, location, state);
  }

  /**
   * Returns the checkout, creating it first when needed: a `git worktree add --detach` of a snapshot of
   * the backing folder for a git repository root with a commit, else a shadow repository whose first
   * snapshot hashes the folder once. A half-made checkout (a crash mid-creation) is removed and made again.
   */
  static async open(spec: PersistentDirSpec, location: CheckoutLocation): Promise<Checkout> {
    const found = Checkout.existing(spec, location);
    if (found) return found;
    const backing = realBacking(spec);
    if (isInside(backing, location.checkout)) {
      throw new PersistentDirError(
        `the Persistent Dir "${spec.name}" (${backing}) contains the Keel home; choose a folder outside it`,
      );
    }
    // The folders down to the checkout are made real first, so the removal never follows a planted link.
    fs.mkdirSync(location.workspaceRoot, { recursive: true });
    ensureRealFolder(location.workspaceRoot, path.dirname(location.checkout));
    fs.rmSync(location.checkout, { recursive: true, force: true });
    fs.rmSync(location.stateDir, { recursive: true, force: true });
    fs.mkdirSync(location.stateDir, { recursive: true });
    const repository = await detectKind(backing);
    const { kind } = repository;
    const checkout = new Checkout(spec, location, {
      version: 1,
      kind,
      backing,
      checkout: location.checkout,
      gitDir: kind === 'shadow' ? path.join(location.stateDir, 'shadow.git') : '',
      baseline: '',
      baselineTree: '',
      links: [],
      copies: {},
      clean: false,
      head: '',
      backingHead: '',
      objectFormat: repository.kind === 'worktree' ? repository.objectFormat : 'sha1',
    });
    await checkout.create(repository.kind === 'worktree' ? repository.gitDir : '');
    return checkout;
  }

  /**
   * Records that something may have written into the checkout (a turn, a host's staged file), so the next
   * reset rewrites it and the next commit looks at it. One marker file, no git.
   */
  static markDirty(location: CheckoutLocation): void {
    if (fs.existsSync(location.stateDir)) fs.writeFileSync(path.join(location.stateDir, DIRTY_MARKER), '');
  }

  /** The backing folder (real path). */
  get backing(): string {
    return this.state.backing;
  }

  /** How this checkout was made. */
  get kind(): CheckoutKind {
    return this.state.kind;
  }

  /**
   * Host paths a boxed command in this checkout must be able to read (read-only): the repository's git
   * folder (so git works in a worktree) and the targets of the dependency-folder links.
   */
  boxReadOnlyPaths(): string[] {
    const paths = this.state.links.map((link) => path.join(this.state.backing, link));
    if (this.state.kind === 'worktree') paths.push(commonGitDir(this.state.gitDir));
    return paths;
  }

  /**
   * Makes the checkout equal to the backing folder's current files again, discarding every uncommitted
   * write (the model's and the host's); ignored files the session made (build output) stay. When nothing
   * wrote into the checkout and the backing folder is unchanged, no file is touched.
   */
  async reset(): Promise<void> {
    return this.exclusive(() => this.resetNow());
  }

  private async resetNow(): Promise<void> {
    if (!isIntact(this.location)) {
      // The session replaced its checkout (or a folder above it) by something else: make it again.
      this.state = (await Checkout.open(this.spec, this.location)).state;
      return;
    }
    const snapshot = await this.snapshot();
    const backingChanged = snapshot.tree !== this.state.baselineTree;
    if (this.isQuiet() && !backingChanged) {
      this.setHead(snapshot.commit);
      this.state.baseline = snapshot.commit;
      this.refreshCopies();
    } else {
      // Untouched since its baseline: only the paths the backing folder changed are rewritten.
      if (!(this.isQuiet() && (await this.advance(snapshot)))) await this.moveTo(snapshot);
      // The ignored files are listed again only when the backing tree moved; else the known ones are
      // checked (a link or copy the session removed comes back).
      await this.syncExtras(backingChanged);
    }
    this.save();
  }

  /** What the session changed in the checkout since its baseline and has not committed. */
  async uncommitted(): Promise<UncommittedFile[]> {
    return this.exclusive(() => this.uncommittedNow());
  }

  private async uncommittedNow(): Promise<UncommittedFile[]> {
    if (!isIntact(this.location) || this.isQuiet()) return [];
    const tree = await this.stageCheckout();
    const changes = await diffTrees(this.checkoutSide, this.state.baselineTree, tree);
    return changes.filter(isCommittable).map((change) => ({
      path: change.path,
      status: change.status === 'A' ? 'added' : change.status === 'D' ? 'deleted' : 'modified',
    }));
  }

  /**
   * Commits the session's changes to the backing folder. A file the backing folder changed too is merged
   * three-way (`git merge-file`); on any conflict nothing is written, the conflicting files are named and
   * the session's whole change is kept as a patch artifact. Afterwards the checkout's files are its new
   * baseline; what the backing folder holds beyond them (merges, edits made meanwhile) comes with the next reset.
   */
  async commit(options: CommitOptions): Promise<CommitReport> {
    return this.exclusive(() => this.commitNow(options));
  }

  /**
   * Runs one index-writing operation of this checkout at a time in this process: a review reading the
   * uncommitted changes (update-index, write-tree) while a turn's auto commit stages the same index would
   * otherwise fail one of them on git's index.lock. Each starts from the state on disk, which an operation
   * through another handle of the same checkout may have moved.
   */
  private async exclusive<T>(operation: () => Promise<T>): Promise<T> {
    const key = this.location.stateDir;
    const previous = checkoutQueues.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    checkoutQueues.set(key, tail);
    await previous;
    try {
      this.state = readState(this.location.stateDir) ?? this.state;
      return await operation();
    } finally {
      release();
      if (checkoutQueues.get(key) === tail) checkoutQueues.delete(key);
    }
  }

  private async commitNow(options: CommitOptions): Promise<CommitReport> {
    const dir = this.spec.name;
    // A checkout the session replaced by a link is never read: nothing of it is committed.
    if (!isIntact(this.location) || this.isQuiet()) return { dir, status: 'unchanged' };
    const paths = await this.changedPaths();
    // HEAD is kept at the baseline, so a clean status means the checkout is exactly the baseline tree.
    if (paths.length === 0 && this.headIsBaseline()) {
      this.markClean();
      return { dir, status: 'unchanged' };
    }
    const artifactHandle = `${options.artifactStem}.patch`;
    const patchFile = path.join(options.artifactsDir, artifactHandle);
    // One process stages the paths, writes the session's tree, its snapshot commit (an object, no lock
    // needed) and the diff: the listing as soon as git prints it, the patch streamed behind it.
    const staged = stageCommitAndDiff(this.checkoutSide, {
      paths,
      from: this.state.baselineTree,
      message: SNAPSHOT_MESSAGE,
      parent: this.snapshotParent,
      patchFile,
    });
    const sessionTree = await staged.tree;
    const allChanges = await staged.changes;
    const changes = allChanges.filter(isCommittable);
    if (changes.length === 0) {
      await Promise.allSettled([staged.written]);
      fs.rmSync(patchFile, { force: true });
      if (sessionTree === this.state.baselineTree) this.markClean();
      return { dir, status: 'unchanged' };
    }
    const patch = staged.written;
    const snapshotCommit = staged.commit.then((commit) => {
      if (commit === undefined) throw new PersistentDirError('git wrote no snapshot commit');
      return commit;
    });
    snapshotCommit.catch(() => undefined);
    return withBackingLock(this.location.locksRoot, this.state.backing, async () => {
      const plan: PlannedWrite[] = [];
      const conflicts: string[] = [];
      // Hashing the backing side of each changed file is independent per file; merges stay one at a time.
      const theirs = await mapLimited(changes, 8, (change) => this.backingEntry(change.path));
      for (const [index, change] of changes.entries()) {
        const backingNow = theirs[index] as Entry;
        const ours = sideOf(change.newMode, change.newOid);
        const base = sideOf(change.oldMode, change.oldOid);
        const before = backingNow;
        if (sameEntry(backingNow, base))
          plan.push({ change, before, kind: change.status === 'D' ? 'delete' : 'write' });
        else if (sameEntry(backingNow, ours)) plan.push({ change, before, kind: 'already' });
        else {
          const merged = await this.merge(change, backingNow);
          if (merged === undefined) conflicts.push(change.path);
          else plan.push({ change, before, kind: 'merged', content: merged });
        }
      }
      for (const write of plan) {
        if ((write.kind === 'write' || write.kind === 'merged') && this.blockedByFile(write.change.path)) {
          conflicts.push(write.change.path);
        }
      }
      if (conflicts.length > 0) {
        await Promise.allSettled([snapshotCommit]);
        await patch;
        return { dir, status: 'conflict', conflicts: conflicts.sort(), patchArtifact: artifactHandle };
      }
      // Every write goes to its own path and was planned above: they run side by side, fsyncs overlapping.
      // Deletions come after (they remove folders left empty, which a write may be filling).
      const writes = plan.filter((write) => write.kind !== 'delete');
      const [written, commit] = await Promise.all([
        mapLimited(writes, 8, (write) => this.apply(write)),
        snapshotCommit,
        patch,
      ]);
      const files = [...written];
      for (const write of plan) if (write.kind === 'delete') files.push(await this.apply(write));
      if (this.state.kind === 'shadow') this.keepReachable(commit);
      this.state.expected =
        changes.length === allChanges.length && plan.every((write) => write.kind !== 'merged')
          ? expectedBacking(this.state.baselineTree, sessionTree, changes)
          : undefined;
      this.setHead(commit);
      this.state.baseline = commit;
      this.state.baselineTree = sessionTree;
      this.markClean();
      return { dir, status: 'committed', files, diffArtifact: artifactHandle };
    });
  }

  private get checkoutSide(): GitSide {
    const { kind, gitDir, checkout } = this.state;
    const env: Record<string, string> = { GIT_DIR: gitDir, GIT_WORK_TREE: checkout };
    if (kind === 'shadow') env['GIT_INDEX_FILE'] = path.join(this.location.stateDir, 'checkout.index');
    return { cwd: checkout, env, config: this.excludeConfig };
  }

  private get backingSide(): GitSide {
    const { kind, gitDir, backing } = this.state;
    const env: Record<string, string> = {
      GIT_INDEX_FILE: this.backingIndex,
    };
    if (kind === 'shadow') Object.assign(env, { GIT_DIR: gitDir, GIT_WORK_TREE: backing });
    return { cwd: backing, env, config: this.excludeConfig };
  }

  /** The checkout's excludes, and an untracked cache so unchanged folders are not re-read on every scan. */
  private get excludeConfig(): string[] {
    return [`core.excludesFile=${path.join(this.location.stateDir, 'exclude')}`, 'core.untrackedCache=true'];
  }

  /** Makes the checkout; `repositoryGitDir` is the backing repository's git folder (worktree kind). */
  private async create(repositoryGitDir: string): Promise<void> {
    const { stateDir } = this.location;
    this.writeExcludes();
    if (this.state.kind === 'shadow') {
      await runGit(plain(stateDir), ['init', '--bare', '-q', this.state.gitDir]);
      fs.writeFileSync(
        path.join(this.state.gitDir, 'info', 'exclude'),
        LINKED_DEPENDENCY_DIRS.map((name) => `${name}/`).join('\n') + '\n',
      );
      const snapshot = await this.snapshot();
      fs.mkdirSync(this.state.checkout, { recursive: true });
      await this.moveTo(snapshot);
    } else {
      const backing = plain(this.state.backing);
      // The backing index seeds the private one, so the first snapshot hashes only what is modified.
      const realIndex = path.join(repositoryGitDir, 'index');
      if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, path.join(stateDir, 'backing.index'));
      const snapshot = await withBackingLock(this.location.locksRoot, this.state.backing, async () => {
        const taken = await this.snapshot();
        await runGit(backing, ['worktree', 'add', '-f', '--detach', '-q', this.state.checkout, taken.commit]);
        return taken;
      });
      this.state.gitDir = worktreeGitDir(this.state.checkout);
      this.state.baseline = snapshot.commit;
      this.state.baselineTree = snapshot.tree;
      this.state.head = snapshot.commit;
      this.state.clean = true;
    }
    await this.syncExtras();
    this.save();
  }

  /**
   * Snapshot of the backing folder's current files: its tree, and a commit of it (reused when unchanged).
   * `add -A -v` stages what changed and names each path it staged; when the index file is the one the last
   * snapshot left and git staged nothing, or exactly what the last commit wrote, the tree is already known
   * and `write-tree` (a second pass over the index) is skipped.
   */
  private async snapshot(): Promise<{ commit: string; tree: string }> {
    const indexKnown =
      this.state.indexTree !== undefined && this.state.indexStamp === indexStamp(this.backingIndex);
    const expected = this.state.expected;
    this.state.expected = undefined;
    const { stdout, code } = await runGit(
      this.backingSide,
      ['add', '-A', '-v', '--ignore-errors', '--', '.'],
      { okCodes: [1] },
    );
    const known = indexKnown && code === 0 ? await this.knownTree(stdout, expected) : undefined;
    const found =
      known !== undefined && known === this.state.baselineTree && this.state.baseline !== ''
        ? { tree: known }
        : await snapshotCommit(this.backingSide, {
            ...(known === undefined ? {} : { tree: known }),
            baseline: this.state.baseline,
            baselineTree: this.state.baselineTree,
            onHead: this.state.kind === 'worktree',
            message: SNAPSHOT_MESSAGE,
          });
    this.state.indexTree = found.tree;
    this.state.indexStamp = indexStamp(this.backingIndex);
    if (found.head !== undefined) this.state.backingHead = found.head;
    if (found.commit === undefined) return { commit: this.state.baseline, tree: found.tree };
    if (this.state.kind === 'shadow') this.keepReachable(found.commit);
    return { commit: found.commit, tree: found.tree };
  }

  /**
   * The tree of the backing index after an `add -A -v` whose output is `added`, when it follows from what
   * is known without git: nothing staged (the index still holds `indexTree`), or exactly the paths the last
   * commit wrote, each still holding the bytes and kind it wrote (then the index is that commit's tree).
   * Undefined when anything else was staged: the caller asks `write-tree`.
   */
  private async knownTree(added: Buffer, expected: CheckoutState['expected']): Promise<string | undefined> {
    const lines = added
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '');
    if (lines.length === 0) return this.state.indexTree;
    if (!expected || expected.from !== this.state.indexTree) return undefined;
    const files = Object.entries(expected.files);
    const wanted = files.map(([file, entry]) => (entry ? `add '${file}'` : `remove '${file}'`));
    if (lines.length !== wanted.length || lines.sort().join('\n') !== wanted.sort().join('\n'))
      return undefined;
    let bytes = 0;
    for (const [file, entry] of files) {
      if (!entry) {
        if (lstatOrUndefined(path.join(this.state.backing, file))) return undefined;
        continue;
      }
      const stat = lstatOrUndefined(path.join(this.state.backing, file));
      bytes += stat?.size ?? 0;
      // Hashing is bounded: beyond a few megabytes, write-tree is the cheaper answer.
      if (!stat || bytes > KNOWN_TREE_MAX_BYTES) return undefined;
      if (entry.mode === '120000' ? !stat.isSymbolicLink() : !stat.isFile()) return undefined;
      if (stat.isFile() && (entry.mode === '100755') !== ((stat.mode & 0o100) !== 0)) return undefined;
      const now = await this.backingEntry(file);
      if (now.kind === 'none' || now.kind === 'other' || now.oid !== entry.oid) return undefined;
    }
    return expected.to;
  }

  private get backingIndex(): string {
    return path.join(this.location.stateDir, 'backing.index');
  }

  /** Parent of snapshot commits: the backing HEAD for a worktree, the previous baseline for a shadow. */
  private get snapshotParent(): string {
    return this.state.kind === 'worktree' ? this.state.backingHead : this.state.baseline;
  }

  /**
   * Names a shadow repository's baseline in a ref, so its objects are never pruned. The repository is
   * private to this checkout, so the loose ref file is written directly (temp + rename), without a git.
   */
  private keepReachable(commit: string): void {
    const file = path.join(this.state.gitDir, 'refs', 'keel', 'baseline');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.keel-tmp`;
    fs.writeFileSync(temp, `${commit}\n`);
    fs.renameSync(temp, file);
  }

  /**
   * Moves a checkout that holds exactly its baseline to a snapshot with a two-way `read-tree -m -u`: only
   * the paths that differ between the two trees are written or removed, nothing else is scanned. False
   * (nothing changed) when git refuses, e.g. an ignored file the session made is in the way; then `moveTo`.
   */
  private async advance(snapshot: { commit: string; tree: string }): Promise<boolean> {
    if (!this.headIsBaseline()) return false;
    if (this.state.kind === 'worktree') this.restoreGitFile();
    try {
      await runGit(this.checkoutSide, ['read-tree', '-m', '-u', this.state.baselineTree, snapshot.tree]);
    } catch {
      return false;
    }
    this.setHead(snapshot.commit);
    this.state.baseline = snapshot.commit;
    this.state.baselineTree = snapshot.tree;
    this.markClean();
    return true;
  }

  /** Rewrites the checkout to a snapshot: changed files rewritten, untracked ones removed, HEAD moved. */
  private async moveTo(snapshot: { commit: string; tree: string }): Promise<void> {
    if (this.state.kind === 'worktree') this.restoreGitFile();
    await runGit(this.checkoutSide, ['reset', '-q', '--hard', snapshot.commit]);
    await runGit(this.checkoutSide, ['clean', '-fdq']);
    this.state.head = snapshot.commit;
    this.state.baseline = snapshot.commit;
    this.state.baselineTree = snapshot.tree;
    this.markClean();
  }

  /** Points the checkout's HEAD at a commit without touching files or index (a detached HEAD is a file). */
  private setHead(commit: string): void {
    if (this.state.head === commit) return;
    const file = path.join(this.state.gitDir, 'HEAD');
    const temp = `${file}.${process.pid}.keel-tmp`;
    fs.writeFileSync(temp, `${commit}\n`);
    fs.renameSync(temp, file);
    this.state.head = commit;
  }

  /**
   * True when the checkout's HEAD still names the baseline. A command run in a worktree checkout can move it
   * (its own `git commit`): then a clean status says nothing about the baseline, and the index decides.
   */
  private headIsBaseline(): boolean {
    if (this.state.head !== this.state.baseline) return false;
    if (this.state.kind === 'shadow') return true;
    try {
      return fs.readFileSync(path.join(this.state.gitDir, 'HEAD'), 'utf8').trim() === this.state.baseline;
    } catch {
      return false;
    }
  }

  /** True when the checkout is known to hold exactly its baseline: nothing marked it dirty since. */
  private isQuiet(): boolean {
    return this.state.clean && !fs.existsSync(path.join(this.location.stateDir, DIRTY_MARKER));
  }

  private markClean(): void {
    this.state.clean = true;
    fs.rmSync(path.join(this.location.stateDir, DIRTY_MARKER), { force: true });
    this.save();
  }

  /** The worktree's `.git` file, rewritten so the model's git keeps working even if it was edited. */
  private restoreGitFile(): void {
    const file = path.join(this.state.checkout, '.git');
    const text = `gitdir: ${this.state.gitDir}\n`;
    const stat = lstatOrUndefined(file);
    if (stat?.isFile() && fs.readFileSync(file, 'utf8') === text) return;
    fs.rmSync(file, { recursive: true, force: true });
    fs.writeFileSync(file, text);
  }

  /**
   * Stages what changed in the checkout (found by `git status`, which reads stat data, not file bytes) in
   * the checkout's own index and returns the tree: the session's current state.
   */
  private async stageCheckout(): Promise<string> {
    const paths = await this.changedPaths();
    // HEAD is kept at the baseline, so a clean status means the checkout is exactly the baseline tree.
    if (paths.length === 0 && this.headIsBaseline()) return this.state.baselineTree;
    return stageCommitAndDiff(this.checkoutSide, { paths, from: this.state.baselineTree }).tree;
  }

  /** The paths `git status` finds changed in the checkout (stat data, not file bytes), against its HEAD. */
  private async changedPaths(): Promise<string[]> {
    // This status may save the checkout's index (git's "optional" lock, skipped when someone holds it):
    // files git wrote in the same second as its index stay "racily clean", and every later status would
    // hash them all again (a fresh worktree: the whole project) until the index is saved with their stat
    // data. Git saves only when its refresh changed something, so a steady turn writes nothing extra.
    const side = this.checkoutSide;
    const { stdout } = await runGit({ ...side, env: { ...side.env, GIT_OPTIONAL_LOCKS: '1' } }, [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--no-renames',
      '--ignore-submodules=all',
    ]);
    // A path ending in "/" is a repository nested in the checkout: never part of a commit.
    return splitNul(stdout)
      .map((entry) => entry.slice(3))
      .filter((entry) => !entry.endsWith('/'));
  }

  /**
   * The backing folder's entry at `relative` now, identified the way git would (to compare with tree
   * entries), with the sha256 a commit reports as the file's previous content. Read once, never through a link.
   */
  private async backingEntry(relative: string): Promise<Entry> {
    const file = path.join(this.state.backing, relative);
    const stat = lstatOrUndefined(file);
    if (!stat) return { kind: 'none' };
    const format = this.state.objectFormat;
    if (stat.isSymbolicLink()) {
      const text = fs.readlinkSync(file, { encoding: 'buffer' });
      return {
        kind: 'link',
        oid: blobId(format, text),
        sha256: createHash('sha256').update(text.toString('utf8')).digest('hex'),
      };
    }
    if (!stat.isFile()) return { kind: 'other' };
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    } catch {
      // Replaced by a link (or removed) since the lstat: not a file the session's change can be compared with.
      return { kind: 'other' };
    }
    return { kind: 'file', ...(await hashOpenFile(format, fd)) };
  }

  /** Three-way merge of a file both sides modified; the merged bytes, or undefined on a conflict or binary data. */
  private async merge(ours: TreeChange, theirs: Entry): Promise<Buffer | undefined> {
    const regular = (mode: string) => mode === '100644' || mode === '100755';
    if (ours.status !== 'M' || theirs.kind !== 'file' || !regular(ours.oldMode) || !regular(ours.newMode)) {
      return undefined;
    }
    const temp = path.join(this.location.stateDir, `merge-${randomBytes(6).toString('hex')}`);
    fs.mkdirSync(temp);
    try {
      const contents = {
        ours: (await runGit(this.backingSide, ['cat-file', 'blob', ours.newOid])).stdout,
        base: (await runGit(this.backingSide, ['cat-file', 'blob', ours.oldOid])).stdout,
        theirs: fs.readFileSync(path.join(this.state.backing, ours.path)),
      };
      for (const [name, data] of Object.entries(contents)) {
        if (data.subarray(0, 8000).includes(0)) return undefined;
        fs.writeFileSync(path.join(temp, name), data);
      }
      const { stdout, code } = await runGit(
        plain(temp),
        ['merge-file', '-p', '-q', 'ours', 'base', 'theirs'],
        {
          okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
        },
      );
      return code === 0 ? stdout : undefined;
    } finally {
      fs.rmSync(temp, { recursive: true, force: true });
    }
  }

  /** True when a parent of `relative` in the backing folder is now a file: writing it would fail half-way. */
  private blockedByFile(relative: string): boolean {
    let parent = path.dirname(relative);
    while (parent !== '.' && parent !== '') {
      const stat = lstatOrUndefined(path.join(this.state.backing, parent));
      if (stat && !stat.isDirectory()) return true;
      parent = path.dirname(parent);
    }
    return false;
  }

  private async apply(write: PlannedWrite): Promise<CommittedFile> {
    const { change } = write;
    const target = path.join(this.state.backing, change.path);
    const preHash =
      write.before.kind === 'file' || write.before.kind === 'link' ? (write.before.sha256 ?? null) : null;
    if (write.kind === 'already') return { path: change.path, preHash, postHash: preHash };
    if (write.kind === 'delete') {
      removeConfined(this.state.backing, change.path);
      return { path: change.path, preHash, postHash: null };
    }
    const mode = change.newMode === '100755' ? 0o755 : 0o644;
    if (write.kind === 'merged') {
      const result = await writeStreamConfined(this.state.backing, change.path, write.content, { mode });
      return { path: change.path, preHash, postHash: result.sha256, merged: true };
    }
    if (change.newMode === '120000') {
      const { stdout } = await runGit(this.backingSide, ['cat-file', 'blob', change.newOid]);
      writeSymlinkConfined(this.state.backing, change.path, stdout.toString('utf8'));
      return { path: change.path, preHash, postHash: await hashFile(target) };
    }
    const copied = await this.copyFromCheckout(change, mode);
    if (copied !== undefined) return { path: change.path, preHash, postHash: copied };
    const source = streamBlob(this.backingSide, change.newOid);
    const result = await writeStreamConfined(this.state.backing, change.path, source, { mode });
    return { path: change.path, preHash, postHash: result.sha256 };
  }

  /**
   * Copies a committed file straight from the checkout (no git process per file) and proves on the way that
   * the bytes are the staged blob: opened without following links, hashed as git does, and renamed into
   * the backing folder only when the id matches. Returns the sha256 written, or undefined to use git instead.
   */
  private async copyFromCheckout(change: TreeChange, mode: number): Promise<string | undefined> {
    let real: string;
    try {
      real = resolveInWorkspace(this.state.checkout, change.path, { argName: 'path' });
    } catch {
      return undefined;
    }
    if (real !== path.join(fs.realpathSync(this.state.checkout), change.path)) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(real, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    } catch {
      return undefined;
    }
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) {
      fs.closeSync(fd);
      return undefined;
    }
    if (stat.size <= SMALL_FILE_BYTES) {
      // Small files are read whole and checked before anything is written.
      let bytes: Buffer;
      try {
        bytes = readAll(fd, stat.size);
      } finally {
        fs.closeSync(fd);
      }
      if (blobId(this.state.objectFormat, bytes) !== change.newOid) return undefined;
      return (await writeStreamConfined(this.state.backing, change.path, bytes, { mode })).sha256;
    }
    const hasher = new BlobHasher(this.state.objectFormat, stat.size);
    const source = fs.createReadStream('', { fd, autoClose: true }).pipe(hasher);
    const result = await writeStreamConfined(this.state.backing, change.path, source, {
      mode,
      beforeRename: () => hasher.digest() === change.newOid,
    });
    return result.written ? result.sha256 : undefined;
  }

  /** Links dependency folders and copies small ignored files from the backing folder (see LINKED_DEPENDENCY_DIRS). */
  private async syncExtras(relist = true): Promise<void> {
    const { backing, checkout } = this.state;
    const links: string[] = [];
    const files: string[] = [];
    if (relist) {
      const listing = await runGit(this.backingSide, [
        'ls-files',
        '-z',
        '--others',
        '--ignored',
        '--exclude-standard',
        '--directory',
      ]);
      for (const entry of splitNul(listing.stdout)) {
        if (entry.endsWith('/')) {
          const rel = entry.slice(0, -1);
          if (LINKED_DEPENDENCY_DIRS.includes(path.posix.basename(rel))) links.push(rel);
        } else if (files.length < IGNORED_COPY_MAX_FILES) files.push(entry);
      }
    } else {
      // The last listing, minus dependency folders the backing folder no longer has.
      links.push(
        ...this.state.links.filter((rel) => lstatOrUndefined(path.join(backing, rel))?.isDirectory()),
      );
      files.push(...Object.keys(this.state.copies));
    }
    for (const stale of this.state.links.filter((link) => !links.includes(link))) {
      const at = path.join(checkout, stale);
      if (lstatOrUndefined(at)?.isSymbolicLink()) fs.rmSync(at, { force: true });
    }
    const made: string[] = [];
    for (const rel of links) {
      const at = path.join(checkout, rel);
      const target = path.join(backing, rel);
      if (!isRealFolderBelow(checkout, path.dirname(at))) continue;
      const existing = lstatOrUndefined(at);
      if (existing?.isSymbolicLink() && fs.readlinkSync(at) === target) made.push(rel);
      else if (!existing) {
        fs.symlinkSync(target, at);
        made.push(rel);
      }
    }
    if (made.join('\0') !== this.state.links.join('\0')) {
      this.state.links = made;
      this.writeExcludes();
    }
    const copies: CheckoutState['copies'] = {};
    for (const rel of files) {
      const source = lstatOrUndefined(path.join(backing, rel));
      if (!source?.isFile() || source.size > IGNORED_COPY_MAX_BYTES) continue;
      copies[rel] = this.state.copies[rel] ?? { size: -1, mtimeMs: -1, copyMtimeMs: -1 };
    }
    for (const gone of Object.keys(this.state.copies).filter((rel) => !(rel in copies))) {
      try {
        removeConfined(checkout, gone);
      } catch {
        // Already gone or outside: nothing of ours to remove.
      }
    }
    this.state.copies = copies;
    this.refreshCopies();
  }

  /** Copies again the known ignored files whose backing file or copy changed (stat only, no git). */
  private refreshCopies(): void {
    const { backing, checkout } = this.state;
    for (const [rel, known] of Object.entries(this.state.copies)) {
      const source = lstatOrUndefined(path.join(backing, rel));
      const copy = lstatOrUndefined(path.join(checkout, rel));
      if (
        source?.isFile() &&
        copy?.isFile() &&
        known.size === source.size &&
        known.mtimeMs === source.mtimeMs &&
        known.copyMtimeMs === copy.mtimeMs
      ) {
        continue;
      }
      try {
        if (!source?.isFile()) {
          removeConfined(checkout, rel);
          delete this.state.copies[rel];
          continue;
        }
        const real = resolveInWorkspace(checkout, rel, { argName: 'path', forWrite: true });
        fs.mkdirSync(path.dirname(real), { recursive: true });
        fs.rmSync(real, { force: true });
        fs.copyFileSync(path.join(backing, rel), real, fs.constants.COPYFILE_EXCL);
        const copied = fs.statSync(real);
        this.state.copies[rel] = { size: source.size, mtimeMs: source.mtimeMs, copyMtimeMs: copied.mtimeMs };
      } catch {
        // A copy the checkout cannot take (a folder of that name, a link the model planted) is skipped.
        delete this.state.copies[rel];
      }
    }
  }

  private writeExcludes(): void {
    const lines = [
      ...LINKED_DEPENDENCY_DIRS.map((name) => `${name}/`),
      ...this.state.links.map((link) => `/${escapeGlob(link)}`),
    ];
    fs.writeFileSync(path.join(this.location.stateDir, 'exclude'), lines.join('\n') + '\n');
  }

  private save(): void {
    const file = path.join(this.location.stateDir, 'state.json');
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(this.state));
    fs.renameSync(temp, file);
  }
}

/** One change of a commit and what to do with it; `before` is the backing entry the decision was made on. */
type PlannedWrite =
  | { change: TreeChange; before: Entry; kind: 'write' | 'delete' | 'already' }
  | { change: TreeChange; before: Entry; kind: 'merged'; content: Buffer };

/** One side of a path in a three-way comparison (the backing side also carries its sha256). */
type Entry = { kind: 'none' } | { kind: 'other' } | { kind: 'file' | 'link'; oid: string; sha256?: string };

function sideOf(mode: string, oid: string): Entry {
  if (isZeroOid(oid)) return { kind: 'none' };
  return { kind: mode === '120000' ? 'link' : 'file', oid };
}

/** Same kind and content (a changed executable bit alone does not count as a change by the other side). */
function sameEntry(a: Entry, b: Entry): boolean {
  if (a.kind === 'file' || a.kind === 'link') return b.kind === a.kind && b.oid === a.oid;
  return a.kind === 'none' && b.kind === 'none';
}

/** git's id of a blob with these bytes. */
function blobId(format: 'sha1' | 'sha256', data: Buffer): string {
  return createHash(format).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Files up to this size are read whole (one read) rather than streamed when hashed or copied. */
const SMALL_FILE_BYTES = 1024 * 1024;

/** Reads an open file to its end; a file that grew past `size` is read to the end too (its id will not match). */
function readAll(fd: number, size: number): Buffer {
  const chunks: Buffer[] = [];
  let buffer = Buffer.allocUnsafe(size + 1);
  let filled = 0;
  for (;;) {
    const read = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
    if (read === 0) break;
    filled += read;
    if (filled === buffer.length) {
      chunks.push(buffer);
      buffer = Buffer.allocUnsafe(64 * 1024);
      filled = 0;
    }
  }
  chunks.push(buffer.subarray(0, filled));
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/**
 * git's id and the sha256 of an open file's bytes (read whole when small, else streamed), closing it. A
 * file that changed size while read matches no id.
 */
async function hashOpenFile(format: 'sha1' | 'sha256', fd: number): Promise<{ oid: string; sha256: string }> {
  let size: number;
  try {
    size = fs.fstatSync(fd).size;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  const id = createHash(format).update(`blob ${size}\0`);
  const sha256 = createHash('sha256');
  let seen = 0;
  if (size <= SMALL_FILE_BYTES) {
    try {
      const bytes = readAll(fd, size);
      seen = bytes.length;
      id.update(bytes);
      sha256.update(bytes);
    } finally {
      fs.closeSync(fd);
    }
  } else {
    for await (const chunk of fs.createReadStream('', { fd, autoClose: true })) {
      seen += (chunk as Buffer).length;
      id.update(chunk as Buffer);
      sha256.update(chunk as Buffer);
    }
  }
  return { oid: seen === size ? id.digest('hex') : `changed:${seen}`, sha256: sha256.digest('hex') };
}

/** Passes bytes through while computing their git blob id; the size is the one stat gave before reading. */
class BlobHasher extends Transform {
  private readonly hash: Hash;
  private seen = 0;

  constructor(
    format: 'sha1' | 'sha256',
    private readonly size: number,
  ) {
    super();
    this.hash = createHash(format).update(`blob ${size}\0`);
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    this.seen += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** The blob id, or a value matching no id when the byte count differs from the announced size. */
  digest(): string {
    return this.seen === this.size ? this.hash.digest('hex') : `changed:${this.seen}`;
  }
}

/**
 * What a commit leaves in the backing folder, for the next snapshot: the backing index held `from` (the
 * baseline the session started from) and, once git stages exactly these files, holds `to`. Paths with a
 * line break are left out of that shortcut (git's verbose output could not name them unambiguously).
 */
function expectedBacking(
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

/** Identity of a file's current version (git replaces its index by rename, so any rewrite changes it). */
function indexStamp(file: string): string {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return 'none';
  }
}

/** Maps with at most `limit` calls in flight, results in input order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** True when the checkout and the folders from the workspace root down to it are real folders, not links. */
function isIntact(location: CheckoutLocation): boolean {
  return isRealFolderBelow(location.workspaceRoot, location.checkout);
}

/** True when every component from `root` (excluded) down to `target` is a folder, not a link or file. */
function isRealFolderBelow(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
  let current = root;
  for (const part of rel.split(path.sep).filter((p) => p !== '')) {
    current = path.join(current, part);
    if (!lstatOrUndefined(current)?.isDirectory()) return false;
  }
  return true;
}

/** Per checkout (its state folder): the tail of the operations queued on it in this process. */
const checkoutQueues = new Map<string, Promise<void>>();

function readState(stateDir: string): CheckoutState | undefined {
  try {
    return CheckoutState.parse(JSON.parse(fs.readFileSync(path.join(stateDir, 'state.json'), 'utf8')));
  } catch {
    return undefined;
  }
}

function realBacking(spec: PersistentDirSpec): string {
  let real: string;
  try {
    real = fs.realpathSync.native(spec.path);
  } catch {
    throw new PersistentDirError(`the folder of Persistent Dir "${spec.name}" (${spec.path}) does not exist`);
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new PersistentDirError(`Persistent Dir "${spec.name}": ${spec.path} is not a folder`);
  }
  return real;
}

/** What git says about the backing folder: a repository root with a commit gets a worktree. */
type BackingRepository =
  { kind: 'shadow' } | { kind: 'worktree'; gitDir: string; objectFormat: 'sha1' | 'sha256' };

async function detectKind(backing: string): Promise<BackingRepository> {
  try {
    const [top, gitDir, format] = (
      await gitText(plain(backing), [
        'rev-parse',
        '--show-toplevel',
        '--absolute-git-dir',
        '--show-object-format',
      ])
    ).split('\n');
    if (!top || !gitDir || fs.realpathSync.native(top) !== backing) return { kind: 'shadow' };
    await gitText(plain(backing), ['rev-parse', '--verify', '-q', 'HEAD']);
    return { kind: 'worktree', gitDir, objectFormat: format === 'sha256' ? 'sha256' : 'sha1' };
  } catch (error) {
    if ((error as { code?: number | null }).code === null) {
      throw new PersistentDirError(
        'Persistent Dirs need git on the PATH (it makes checkouts and commits); install git',
      );
    }
    return { kind: 'shadow' };
  }
}

/** The admin folder a new worktree's `.git` file names (`gitdir: <path>`), as a real absolute path. */
function worktreeGitDir(checkout: string): string {
  const text = fs.readFileSync(path.join(checkout, '.git'), 'utf8');
  const named = /^gitdir: (.+)$/m.exec(text)?.[1];
  if (!named) throw new PersistentDirError(`git made a worktree at ${checkout} without a readable .git file`);
  return fs.realpathSync.native(path.resolve(checkout, named.trim()));
}

/** The common git folder of a worktree's admin folder (`<repo>/.git` for `<repo>/.git/worktrees/<n>`). */
function commonGitDir(adminDir: string): string {
  try {
    const common = fs.readFileSync(path.join(adminDir, 'commondir'), 'utf8').trim();
    return path.resolve(adminDir, common);
  } catch {
    return adminDir;
  }
}

function isCommittable(change: TreeChange): boolean {
  const modeOk = (mode: string, oid: string) => isZeroOid(oid) || FILE_MODES.has(mode);
  return modeOk(change.oldMode, change.oldOid) && modeOk(change.newMode, change.newOid);
}

/** Removes one file or link inside `root` (never following a link out), then its folders left empty. */
function removeConfined(root: string, relative: string): void {
  const parentArg = path.dirname(relative) === '.' ? '.' : path.dirname(relative);
  const parent = resolveInWorkspace(root, parentArg, { argName: 'path' });
  const target = path.join(parent, path.basename(relative));
  const stat = lstatOrUndefined(target);
  if (stat && !stat.isDirectory()) fs.unlinkSync(target);
  let dir = parent;
  while (dir !== root && isInside(root, dir)) {
    try {
      fs.rmdirSync(dir);
    } catch {
      break;
    }
    dir = path.dirname(dir);
  }
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function escapeGlob(text: string): string {
  return text.replace(/([*?[\]\\!#])/g, '\\$1');
}
