import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import {
  diffTrees,
  gitText,
  gitToFile,
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

/** How a checkout is made: a linked git worktree of the backing repository, or a private shadow repository. */
export type CheckoutKind = 'worktree' | 'shadow';

const CheckoutState = z.object({
  version: z.literal(1),
  kind: z.enum(['worktree', 'shadow']),
  backing: z.string(),
  checkout: z.string(),
  /** The worktree's admin folder (`.git/worktrees/<n>`) or the shadow repository. */
  gitDir: z.string(),
  /** The snapshot commit of the backing folder the checkout was last reset to, and its tree. */
  baseline: z.string(),
  baselineTree: z.string(),
  /** Checkout-relative paths of the dependency-folder links. */
  links: z.array(z.string()),
  /** Ignored files copied in, with the backing stat and the copy's mtime at copy time. */
  copies: z.record(z.string(), z.object({ size: z.number(), mtimeMs: z.number(), copyMtimeMs: z.number() })),
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
 * current files (tracked, modified and untracked; not ignored), so "what did the session change" and "what
 * changed in the backing folder since" are both tree diffs computed from git's stat cache, and the base of
 * a three-way merge is always at hand. Not safe for concurrent use: the session's writer lease and its
 * in-process lock serialize callers.
 */
export class Checkout {
  private constructor(
    readonly spec: PersistentDirSpec,
    readonly location: CheckoutLocation,
    private state: CheckoutState,
  ) {}

  /** The checkout's state if it was created before, else undefined; runs no git. */
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
    ensureRealFolder(location.workspaceRoot, path.dirname(location.checkout));
    fs.rmSync(location.checkout, { recursive: true, force: true });
    fs.rmSync(location.stateDir, { recursive: true, force: true });
    fs.mkdirSync(location.stateDir, { recursive: true });
    const kind = await detectKind(backing);
    const state: CheckoutState = {
      version: 1,
      kind,
      backing,
      checkout: location.checkout,
      gitDir: kind === 'shadow' ? path.join(location.stateDir, 'shadow.git') : '',
      baseline: '',
      baselineTree: '',
      links: [],
      copies: {},
    };
    const checkout = new Checkout(spec, location, state);
    await checkout.create();
    return checkout;
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
   * write (the model's and the host's); ignored files the session made (build output) stay.
   */
  async reset(): Promise<void> {
    if (!isIntact(this.location)) {
      // The session replaced its checkout (or a folder above it) by something else: make it again.
      this.state = (await Checkout.open(this.spec, this.location)).state;
      return;
    }
    const snapshot = await this.snapshot();
    await this.moveTo(snapshot, 'hard');
    await this.syncExtras();
    this.save();
  }

  /** What the session changed in the checkout since its baseline and has not committed. */
  async uncommitted(): Promise<UncommittedFile[]> {
    if (!isIntact(this.location)) return [];
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
   * the session's whole change is kept as a patch artifact. Afterwards the checkout's baseline is the new
   * backing state (the checkout keeps its files).
   */
  async commit(options: CommitOptions): Promise<CommitReport> {
    const dir = this.spec.name;
    // A checkout the session replaced by a link is never read: nothing of it is committed.
    if (!isIntact(this.location)) return { dir, status: 'unchanged' };
    const sessionTree = await this.stageCheckout();
    const changes = (await diffTrees(this.checkoutSide, this.state.baselineTree, sessionTree)).filter(
      isCommittable,
    );
    if (changes.length === 0) return { dir, status: 'unchanged' };
    return withBackingLock(this.location.locksRoot, this.state.backing, async () => {
      const backingTree = await this.snapshotTree();
      const backingChanges = new Map(
        (await diffTrees(this.backingSide, this.state.baselineTree, backingTree)).map((c) => [c.path, c]),
      );
      const plan: PlannedWrite[] = [];
      const conflicts: string[] = [];
      for (const change of changes) {
        const theirs = backingChanges.get(change.path);
        if (!theirs) plan.push({ change, kind: change.status === 'D' ? 'delete' : 'write' });
        else if (sameResult(change, theirs)) plan.push({ change, kind: 'already' });
        else {
          const merged = await this.merge(change, theirs);
          if (merged === undefined) conflicts.push(change.path);
          else plan.push({ change, kind: 'merged', content: merged });
        }
      }
      for (const write of plan) {
        if (write.kind !== 'delete' && write.kind !== 'already' && this.blockedByFile(write.change.path)) {
          conflicts.push(write.change.path);
        }
      }
      const artifactHandle = `${options.artifactStem}.patch`;
      await this.writePatch(sessionTree, path.join(options.artifactsDir, artifactHandle));
      if (conflicts.length > 0)
        return { dir, status: 'conflict', conflicts: conflicts.sort(), patchArtifact: artifactHandle };
      const files: CommittedFile[] = [];
      for (const write of plan) files.push(await this.apply(write));
      await this.advanceBaseline(
        files.map((f) => f.path),
        sessionTree,
      );
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
      GIT_INDEX_FILE: path.join(this.location.stateDir, 'backing.index'),
    };
    if (kind === 'shadow') Object.assign(env, { GIT_DIR: gitDir, GIT_WORK_TREE: backing });
    return { cwd: backing, env, config: this.excludeConfig };
  }

  private get excludeConfig(): string[] {
    return [`core.excludesFile=${path.join(this.location.stateDir, 'exclude')}`];
  }

  private async create(): Promise<void> {
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
      await this.moveTo(snapshot, 'hard');
    } else {
      // The backing index seeds the private one, so the first snapshot hashes only what is modified.
      const realIndex = path.join(
        await gitText(plain(this.state.backing), ['rev-parse', '--absolute-git-dir']),
        'index',
      );
      if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, path.join(stateDir, 'backing.index'));
      const snapshot = await withBackingLock(this.location.locksRoot, this.state.backing, async () => {
        const taken = await this.snapshot();
        await runGit(plain(this.state.backing), [
          'worktree',
          'add',
          '-f',
          '--detach',
          '-q',
          this.state.checkout,
          taken.commit,
        ]);
        return taken;
      });
      this.state.gitDir = await gitText(plain(this.state.checkout), ['rev-parse', '--absolute-git-dir']);
      this.state.baseline = snapshot.commit;
      this.state.baselineTree = snapshot.tree;
    }
    await this.syncExtras();
    this.save();
  }

  /** Snapshot of the backing folder's current files: its tree, and a commit of it (reused when unchanged). */
  private async snapshot(): Promise<{ commit: string; tree: string }> {
    const tree = await this.snapshotTree();
    if (tree === this.state.baselineTree && this.state.baseline !== '')
      return { commit: this.state.baseline, tree };
    return { commit: await this.commitTree(tree), tree };
  }

  private async snapshotTree(): Promise<string> {
    await runGit(this.backingSide, ['add', '-A', '--ignore-errors', '--', '.'], { okCodes: [1] });
    return gitText(this.backingSide, ['write-tree']);
  }

  /** A commit of `tree`: the backing HEAD itself when the folder is clean, else a snapshot commit on top of it. */
  private async commitTree(tree: string): Promise<string> {
    if (this.state.kind === 'worktree') {
      const head = await gitText(plain(this.state.backing), ['rev-parse', '--verify', 'HEAD']);
      const headTree = await gitText(plain(this.state.backing), ['rev-parse', `${head}^{tree}`]);
      if (headTree === tree) return head;
      return gitText(this.backingSide, [
        'commit-tree',
        tree,
        '-p',
        head,
        '-m',
        'keel: snapshot of the working folder',
      ]);
    }
    const parent = this.state.baseline === '' ? [] : ['-p', this.state.baseline];
    const commit = await gitText(this.backingSide, ['commit-tree', tree, ...parent, '-m', 'keel: snapshot']);
    await runGit(this.backingSide, ['update-ref', 'refs/keel/baseline', commit]);
    return commit;
  }

  /** Points the checkout at a snapshot: `hard` rewrites its files (and removes untracked ones), `soft` only HEAD. */
  private async moveTo(snapshot: { commit: string; tree: string }, how: 'hard' | 'soft'): Promise<void> {
    if (this.state.kind === 'worktree') this.restoreGitFile();
    await runGit(this.checkoutSide, ['reset', '-q', `--${how}`, snapshot.commit]);
    if (how === 'hard') await runGit(this.checkoutSide, ['clean', '-fdq']);
    this.state.baseline = snapshot.commit;
    this.state.baselineTree = snapshot.tree;
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

  /** Stages every file of the checkout in its own index and returns the tree: the session's current state. */
  private async stageCheckout(): Promise<string> {
    await runGit(this.checkoutSide, ['add', '-A', '--ignore-errors', '--', '.'], { okCodes: [1] });
    return gitText(this.checkoutSide, ['write-tree']);
  }

  /** Three-way merge of a file both sides modified; the merged bytes, or undefined on a conflict or binary data. */
  private async merge(ours: TreeChange, theirs: TreeChange): Promise<Buffer | undefined> {
    const regular = (mode: string) => mode === '100644' || mode === '100755';
    if (ours.status !== 'M' || theirs.status !== 'M' || !regular(ours.newMode) || !regular(theirs.newMode))
      return undefined;
    const temp = path.join(this.location.stateDir, `merge-${randomBytes(6).toString('hex')}`);
    fs.mkdirSync(temp);
    try {
      const files = { ours: ours.newOid, base: ours.oldOid, theirs: theirs.newOid };
      for (const [name, oid] of Object.entries(files)) {
        const { stdout } = await runGit(this.backingSide, ['cat-file', 'blob', oid]);
        if (stdout.subarray(0, 8000).includes(0)) return undefined;
        fs.writeFileSync(path.join(temp, name), stdout);
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
    const preHash = await hashFile(target);
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
    const result = await writeStreamConfined(
      this.state.backing,
      change.path,
      streamBlob(this.backingSide, change.newOid),
      {
        mode,
      },
    );
    return { path: change.path, preHash, postHash: result.sha256 };
  }

  /** After a commit: the backing folder's new state becomes the baseline without rewriting unchanged checkout files. */
  private async advanceBaseline(paths: readonly string[], sessionTree: string): Promise<void> {
    if (paths.length > 0) {
      await runGit(
        this.backingSide,
        ['add', '-A', '--ignore-errors', '--', ...paths.map((p) => `:(literal)${p}`)],
        {
          okCodes: [1],
        },
      );
    }
    const tree = await gitText(this.backingSide, ['write-tree']);
    const commit = await this.commitTree(tree);
    await this.moveTo({ commit, tree }, tree === sessionTree ? 'soft' : 'hard');
    this.save();
  }

  /** Writes the session's change (baseline → `sessionTree`) as a binary-safe patch, streamed to `file`. */
  private async writePatch(sessionTree: string, file: string): Promise<void> {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await gitToFile(
      this.checkoutSide,
      ['diff-tree', '-p', '--binary', '--no-renames', this.state.baselineTree, sessionTree],
      file,
    );
  }

  /** Links dependency folders and copies small ignored files from the backing folder (see LINKED_DEPENDENCY_DIRS). */
  private async syncExtras(): Promise<void> {
    const { backing, checkout } = this.state;
    const ignored = splitNul(
      (
        await runGit(this.backingSide, [
          'ls-files',
          '-z',
          '--others',
          '--ignored',
          '--exclude-standard',
          '--directory',
        ])
      ).stdout,
    );
    const links: string[] = [];
    const files: string[] = [];
    for (const entry of ignored) {
      if (entry.endsWith('/')) {
        const rel = entry.slice(0, -1);
        if (LINKED_DEPENDENCY_DIRS.includes(path.posix.basename(rel))) links.push(rel);
      } else if (files.length < IGNORED_COPY_MAX_FILES) files.push(entry);
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
    await this.syncIgnoredFiles(files);
  }

  private async syncIgnoredFiles(files: readonly string[]): Promise<void> {
    const { backing, checkout } = this.state;
    const copies: CheckoutState['copies'] = {};
    for (const rel of files) {
      const source = lstatOrUndefined(path.join(backing, rel));
      if (!source?.isFile() || source.size > IGNORED_COPY_MAX_BYTES) continue;
      const known = this.state.copies[rel];
      const copy = lstatOrUndefined(path.join(checkout, rel));
      if (
        known &&
        copy?.isFile() &&
        known.size === source.size &&
        known.mtimeMs === source.mtimeMs &&
        known.copyMtimeMs === copy.mtimeMs
      ) {
        copies[rel] = known;
        continue;
      }
      try {
        const written = await writeStreamConfined(
          checkout,
          rel,
          fs.createReadStream(path.join(backing, rel)),
          {
            mode: source.mode & 0o777,
          },
        );
        copies[rel] = {
          size: source.size,
          mtimeMs: source.mtimeMs,
          copyMtimeMs: fs.statSync(written.realPath).mtimeMs,
        };
      } catch {
        // A copy the checkout cannot take (a folder of that name, a link the model planted) is skipped.
      }
    }
    for (const gone of Object.keys(this.state.copies).filter((rel) => !(rel in copies))) {
      try {
        removeConfined(checkout, gone);
      } catch {
        // Already gone or outside: nothing of ours to remove.
      }
    }
    this.state.copies = copies;
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

type PlannedWrite =
  | { change: TreeChange; kind: 'write' | 'delete' | 'already' }
  | { change: TreeChange; kind: 'merged'; content: Buffer };

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

async function detectKind(backing: string): Promise<CheckoutKind> {
  try {
    const top = await gitText(plain(backing), ['rev-parse', '--show-toplevel']);
    if (fs.realpathSync.native(top) !== backing) return 'shadow';
    await gitText(plain(backing), ['rev-parse', '--verify', '-q', 'HEAD']);
    return 'worktree';
  } catch (error) {
    if ((error as { code?: number | null }).code === null) {
      throw new PersistentDirError(
        'Persistent Dirs need git on the PATH (it makes checkouts and commits); install git',
      );
    }
    return 'shadow';
  }
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

function sameResult(ours: TreeChange, theirs: TreeChange): boolean {
  if (ours.status === 'D' || theirs.status === 'D') return ours.status === theirs.status;
  return ours.newOid === theirs.newOid && ours.newMode === theirs.newMode;
}

/** Removes one file or link inside `root` (never following a link out), then its folders left empty. */
function removeConfined(root: string, relative: string): void {
  const parent = resolveInWorkspace(root, path.dirname(relative) === '.' ? '.' : path.dirname(relative), {
    argName: 'path',
  });
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
