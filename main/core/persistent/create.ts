// Making a checkout: a `git worktree add --detach` of a snapshot for a git repository root with a commit,
// else a shadow repository in the state folder. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { LINKED_DEPENDENCY_DIRS, syncExtras, writeExcludes } from './extras.js';
import { gitText, runGit } from './git.js';
import { withBackingLock } from './lock.js';
import { moveTo } from './reset.js';
import { snapshot } from './snapshot.js';
import {
  backingIndex,
  fileStamp,
  viewIndex,
  plain,
  readState,
  saveState,
  setHead,
  type CheckoutContext,
  type CheckoutLocation,
} from './state.js';
import { ensureRealFolder, isInside } from './streamWrite.js';
import { PersistentDirError, type PersistentDirSpec } from './types.js';
import { placeSharedPart } from './sharedIndex.js';
import { addViewWorktree, installViewIndex } from './viewGit.js';
import { checkGitlinksAhead } from './viewStatus.js';
import { claimViews } from './viewOwner.js';
import type { ViewChoice } from './viewHolder.js';
import { unsafeLayerPath } from '../../sandbox/overlayView.js';

/**
 * Makes the checkout of `spec` at `location` from nothing (whatever was there is removed first, never
 * through a planted link) and returns it with its state saved; throws PersistentDirError when the backing
 * folder is missing, contains the Keel home, or git is not installed.
 */
export async function createCheckout(
  spec: PersistentDirSpec,
  location: CheckoutLocation,
  options: { view?: ViewChoice; deferBaseline?: boolean } = {},
): Promise<CheckoutContext> {
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
  const viewNote = repository.kind === 'worktree' ? viewRefusal(options.view, backing, location) : undefined;
  const kind = repository.kind === 'worktree' && viewNote === undefined ? 'view' : repository.kind;
  const context: CheckoutContext = {
    spec,
    location,
    state: {
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
      ...(repository.kind === 'worktree' ? { repositoryIndex: path.join(repository.gitDir, 'index') } : {}),
      ...(kind === 'view' ? viewFolders(location) : {}),
      ...(options.view === undefined ? {} : { kindReason: viewNote ?? options.view.reason }),
    },
  };
  if (kind === 'view') await createView(context, options.deferBaseline === true);
  else await create(context);
  return context;
}

/** Why this checkout gets no view though one was asked for, or undefined when it gets one. */
function viewRefusal(
  choice: ViewChoice | undefined,
  backing: string,
  location: CheckoutLocation,
): string | undefined {
  if (choice === undefined) return 'a full copy was asked for';
  if (!choice.available) return `a full copy: ${choice.reason}`;
  const unsafe = unsafeLayerPath({ lower: backing, ...viewFolders(location), mountpoint: location.checkout });
  return unsafe === undefined ? undefined : `a full copy: ${unsafe}`;
}

function viewFolders(location: CheckoutLocation): { upper: string; work: string } {
  return { upper: path.join(location.stateDir, 'upper'), work: path.join(location.stateDir, 'work') };
}

/**
 * Makes a view checkout (issue #36): the snapshot of the backing folder, a worktree admin folder of it with no file
 * checked out and the snapshot's private index as its index (viewGit.ts); nothing of the project is copied. The
 * overlay itself is mounted when first used (viewHolder.ts). Dependency folders and ignored files need no links or
 * copies: the view shows the backing folder's own (writes to them stay in the view).
 */
async function createView(context: CheckoutContext, deferBaseline: boolean): Promise<void> {
  const { state } = context;
  const { stateDir, locksRoot, checkout } = context.location;
  // Its layers are written here: never under another process's mount of the session's views (viewOwner.ts).
  claimViews(path.dirname(stateDir));
  writeExcludes(context);
  if (deferBaseline) {
    // The admin folder only, at the repository's HEAD: the snapshot waits for the first job that needs the baseline.
    const { gitDir } = await withBackingLock(locksRoot, state.backing, () =>
      addViewWorktree({ backing: state.backing, checkout, upper: state.upper as string, commit: 'HEAD' }),
    );
    fs.mkdirSync(state.work as string, { recursive: true });
    state.gitDir = gitDir;
    const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    state.head = head;
    state.baseline = head;
    state.pendingBaseline = true;
    state.clean = true;
    saveState(context);
    return;
  }
  // The snapshot (seeding its private index from the repository's: state.repositoryIndex) and the worktree admin folder
  // at the repository's HEAD run side by side under one hold of the backing lock: the stat pass is most of a new
  // session's wait, and the admin folder needs nothing of it. HEAD is then pointed at the snapshot, its index copied in.
  const [taken, { gitDir }] = await withBackingLock(locksRoot, state.backing, () =>
    Promise.all([
      snapshot(context),
      addViewWorktree({ backing: state.backing, checkout, upper: state.upper as string, commit: 'HEAD' }),
    ]),
  );
  fs.mkdirSync(state.work as string, { recursive: true });
  state.gitDir = gitDir;
  await settleBaseline(context, taken);
}

/**
 * Takes the baseline of a view made without one (`pendingBaseline`): the backing folder's snapshot (the view's lower
 * layer is that folder, so whatever the view shows of it is what the baseline holds), its private index as the view's
 * index, HEAD at the snapshot. Under the backing lock, from the state on disk: a job of another process that took it
 * meanwhile is kept. What the session wrote into the view before (its upper layer) stays the session's change.
 */
export async function takeViewBaseline(context: CheckoutContext): Promise<void> {
  const { stateDir, locksRoot } = context.location;
  const taken = await withBackingLock(locksRoot, context.state.backing, async () => {
    const fresh = readState(stateDir);
    if (fresh !== undefined && fresh.pendingBaseline !== true) {
      context.state = fresh;
      return undefined;
    }
    return snapshot(context);
  });
  if (taken !== undefined) await settleBaseline(context, taken);
}

async function settleBaseline(
  context: CheckoutContext,
  taken: { commit: string; tree: string },
): Promise<void> {
  const { state } = context;
  placeSharedPart(context);
  await installViewIndex(backingIndex(context), state.gitDir);
  state.viewIndexStamp = fileStamp(viewIndex(context));
  setHead(context, taken.commit);
  state.baseline = taken.commit;
  state.baselineTree = taken.tree;
  state.clean = true;
  delete state.pendingBaseline;
  saveState(context);
  if (state.watch !== undefined) checkGitlinksAhead(context);
}

/**
 * Issue #36: a view whose baseline no watch mark vouches for (taken before this process's watcher of the backing folder
 * had walked it: a one-turn host's reset, its watch started with the turn) gets one now, when a snapshot of the backing
 * folder (the full stat pass, after the watcher's barrier) finds the baseline's tree: the lower layer is then what the
 * baseline took, and from the mark on the watcher vouches for it (viewStatus.ts's `backingQuietSince`). Any other tree
 * (the user edited since) leaves it unmarked: its statuses stay git's. The caller has checked that the watcher is ready.
 * True when marked.
 */
export async function confirmViewWatch(context: CheckoutContext): Promise<boolean> {
  const { state, location } = context;
  if (state.kind !== 'view' || state.pendingBaseline === true || state.baselineTree === '') return false;
  if (state.watch !== undefined) return false;
  const baselineTree = state.baselineTree;
  const taken = await withBackingLock(location.locksRoot, state.backing, () => snapshot(context));
  // The mark the snapshot left is the private index's; it vouches for the baseline only when the trees are one.
  if (taken.tree !== baselineTree) state.watch = undefined;
  saveState(context);
  if (state.watch === undefined) return false;
  checkGitlinksAhead(context);
  return true;
}

/** Makes the checkout: a shadow repository, or a worktree of the backing repository. */
async function create(context: CheckoutContext): Promise<void> {
  const { state } = context;
  const { stateDir } = context.location;
  writeExcludes(context);
  if (state.kind === 'shadow') {
    await runGit(plain(stateDir), ['init', '--bare', '-q', state.gitDir]);
    fs.writeFileSync(
      path.join(state.gitDir, 'info', 'exclude'),
      LINKED_DEPENDENCY_DIRS.map((name) => `${name}/`).join('\n') + '\n',
    );
    const taken = await snapshot(context);
    fs.mkdirSync(state.checkout, { recursive: true });
    await moveTo(context, taken);
  } else {
    const backing = plain(state.backing);
    // The backing index seeds the private one (snapshot.ts), so the first snapshot hashes only what is modified.
    const taken = await withBackingLock(context.location.locksRoot, state.backing, async () => {
      const made = await snapshot(context);
      await runGit(backing, ['worktree', 'add', '-f', '--detach', '-q', state.checkout, made.commit]);
      return made;
    });
    state.gitDir = worktreeGitDir(state.checkout);
    state.baseline = taken.commit;
    state.baselineTree = taken.tree;
    state.head = taken.commit;
    state.clean = true;
  }
  await syncExtras(context);
  saveState(context);
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
    // One git: `HEAD --` fails (exit 128) when there is no commit yet; `--` keeps a file named HEAD from making it
    // ambiguous.
    const [top, gitDir, format] = (
      await gitText(plain(backing), [
        'rev-parse',
        '--show-toplevel',
        '--absolute-git-dir',
        '--show-object-format',
        'HEAD',
        '--',
      ])
    ).split('\n');
    if (!top || !gitDir || fs.realpathSync.native(top) !== backing) return { kind: 'shadow' };
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
