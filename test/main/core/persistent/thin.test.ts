// Issue #36: a quiet view drops its two git indexes (thin.ts) and gets them back on demand, with the real kernel
// overlay and real git: a thinned view resumes, shows the user's changes, stays clean for its own git, and commits.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import { readState } from '../../../../main/core/persistent/state.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { runningView, stopAllViews, viewLayers } from '../../../../main/core/persistent/viewHolder.js';
import { overlayInUse } from '../../../../main/sandbox/overlayInUse.js';
import {
  git,
  ignoreForcedKind,
  makeRepo,
  makeTemp,
  overlayHere,
  read,
  unforced,
  writeFiles,
  projectLocation,
  gitInViewOf,
  boxOnView,
} from './support.js';

ignoreForcedKind();

let dir: string;
let backing: string;
let skip: string | undefined;

beforeEach(async () => {
  dir = makeTemp('keel-thin-');
  backing = makeRepo(path.join(dir, 'backing'), {
    'src/a.txt': 'one\n',
    'src/b.txt': 'two\n',
    'README.md': 'hello\n',
  });
  const support = await overlayHere();
  skip = support.available ? undefined : support.reason;
});

afterEach(async () => {
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

const location = (): CheckoutLocation => projectLocation(dir);
const spec: () => PersistentDirSpec = () => ({ name: 'project', path: backing, commit: 'auto' });
const commitOptions = (stem: string) => ({ artifactsDir: path.join(dir, 'artifacts'), artifactStem: stem });

/** Resolves once `ready` holds (polled every 20 ms, up to 10 s). */
async function waitFor(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!ready()) throw new Error('the box never saw the view');
}

/** The view's own index and the private snapshot index. */
function indexes(): { view: string; backing: string } {
  const state = readState(location().stateDir);
  if (!state) throw new Error('no checkout state');
  return { view: path.join(state.gitDir, 'index'), backing: path.join(location().stateDir, 'backing.index') };
}

/** Git in the view's namespace (where its files are), as the box's git runs. */
const gitInView = (...args: string[]): string =>
  gitInViewOf(path.join(dir, 'home', 's1'), location().checkout, args);

describe('a thinned view', () => {
  it('drops both indexes once committed, never touching the repository, and commits again after a reset', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    expect(checkout.kind).toBe('view');
    const root = await checkout.mount();
    writeFiles(root, { 'src/a.txt': 'session one\n', 'new.txt': 'new\n' });
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions('commits/1'))).status).toBe('committed');
    const repositoryIndex = fs.readFileSync(path.join(backing, '.git', 'index'));
    const repositoryHead = git(backing, 'rev-parse', 'HEAD');
    const { view, backing: privateIndex } = indexes();
    // The commit built the session's tree without the view's own index and dropped it (viewTree.ts).
    expect(fs.existsSync(privateIndex)).toBe(true);
    expect(fs.existsSync(view)).toBe(false);

    expect(await checkout.thin()).toBe(true);
    expect(fs.existsSync(view)).toBe(false);
    expect(fs.existsSync(privateIndex)).toBe(false);
    // What `keel gc` and the listings ask of an ended session needs no index: they never rebuild it.
    expect(await checkout.uncommitted()).toEqual([]);
    expect((await checkout.commit(commitOptions('commits/1b'))).status).toBe('unchanged');
    expect(fs.existsSync(view) || fs.existsSync(privateIndex)).toBe(false);
    // The known-tree shortcut cannot vouch for an index a later snapshot makes anew.
    expect(readState(location().stateDir)?.indexTree).toBeUndefined();
    // The user's repository: its index and HEAD as they were; what the session committed is there as files.
    expect(fs.readFileSync(path.join(backing, '.git', 'index')).equals(repositoryIndex)).toBe(true);
    expect(git(backing, 'rev-parse', 'HEAD')).toBe(repositoryHead);
    expect(git(backing, 'status', '--porcelain')).toBe(' M src/a.txt\n?? new.txt\n');

    // Resumed, as a new process would: the user changed a file meanwhile; the reset rebuilds both indexes.
    await stopAllViews();
    writeFiles(backing, { 'src/b.txt': 'the user\n' });
    const resumed = Checkout.existing(spec(), location());
    if (!resumed) throw new Error('the thinned view is not intact');
    await resumed.reset();
    expect(fs.existsSync(view) && fs.existsSync(privateIndex)).toBe(true);
    const again = await resumed.mount();
    expect(read(path.join(again, 'src/b.txt'))).toBe('the user\n');
    expect(read(path.join(again, 'src/a.txt'))).toBe('session one\n');
    expect(gitInView('status', '--porcelain')).toBe('');
    writeFiles(again, { 'src/b.txt': 'the user\nsession two\n' });
    fs.rmSync(path.join(again, 'README.md'));
    Checkout.markDirty(location());
    expect((await resumed.uncommitted()).map((file) => `${file.status} ${file.path}`).sort()).toEqual([
      'deleted README.md',
      'modified src/b.txt',
    ]);
    expect((await resumed.commit(commitOptions('commits/2'))).status).toBe('committed');
    expect(read(path.join(backing, 'src/b.txt'))).toBe('the user\nsession two\n');
    expect(fs.existsSync(path.join(backing, 'README.md'))).toBe(false);
    expect(read(path.join(backing, 'src/a.txt'))).toBe('session one\n');
    expect(git(backing, 'rev-parse', 'HEAD')).toBe(repositoryHead);
  });

  it('gets its own index back before any other job: its git is clean at once and names only new work', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    const root = await checkout.mount();
    writeFiles(root, { 'src/a.txt': 'session\n' });
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions('commits/1'))).status).toBe('committed');
    expect(await checkout.thin()).toBe(true);
    await stopAllViews();
    // A terminal's box between turns mounts the view: the index is rebuilt from the baseline and the repository's.
    const view = await checkout.mount();
    expect(fs.existsSync(indexes().view)).toBe(true);
    expect(gitInView('status', '--porcelain')).toBe('');
    expect(gitInView('ls-files').split('\n').filter(Boolean).sort()).toEqual([
      'README.md',
      'src/a.txt',
      'src/b.txt',
    ]);
    writeFiles(view, { 'later.txt': 'x\n' });
    Checkout.markDirty(location());
    expect(gitInView('status', '--porcelain')).toBe('?? later.txt\n');
    expect(await checkout.uncommitted()).toEqual([{ path: 'later.txt', status: 'added' }]);
  });

  it('keeps its indexes while anything is uncommitted', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    const root = await checkout.mount();
    writeFiles(root, { 'src/a.txt': 'not committed\n' });
    Checkout.markDirty(location());
    expect(await checkout.thin()).toBe(false);
    expect(fs.existsSync(indexes().view) && fs.existsSync(indexes().backing)).toBe(true);
    expect(await checkout.uncommitted()).toEqual([{ path: 'src/a.txt', status: 'modified' }]);
  });

  it('keeps its indexes while a box still runs on the view (its git may read them), and thins once it ended', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    await checkout.mount();
    const view = runningView(path.join(dir, 'home', 's1'), location().checkout);
    if (view === undefined) throw new Error('no view is mounted');
    const box = boxOnView(path.join(dir, 'home', 's1'), location().checkout);
    try {
      await waitFor(() => overlayInUse(viewLayers(location(), { backing }).upper, view.pid).pids.length > 0);
      expect(await checkout.thin()).toBe(false);
      expect(fs.existsSync(indexes().view) && fs.existsSync(indexes().backing)).toBe(true);
    } finally {
      box.kill('SIGKILL');
      await new Promise((resolve) => box.once('exit', resolve));
    }
    expect(await checkout.thin()).toBe(true);
    expect(fs.existsSync(indexes().view) || fs.existsSync(indexes().backing)).toBe(false);
  });

  it('rebuilds an index a crash left half made (the temp file) and a copy is never thinned', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    expect(await checkout.thin()).toBe(true);
    // A rebuild killed before its rename leaves only a temp file; the index itself is still missing.
    fs.writeFileSync(`${indexes().view}.${process.pid}.keel-restore`, 'half an index');
    await stopAllViews();
    await checkout.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
    const copyLocation = {
      ...location(),
      checkout: path.join(dir, 'home', 's2', 'workspace', 'persistent', 'project'),
      workspaceRoot: path.join(dir, 'home', 's2', 'workspace'),
      stateDir: path.join(dir, 'home', 's2', 'checkouts', 'project'),
    };
    // A copy even when KEEL_CHECKOUT_KIND forces the view.
    const copy = await unforced(() => Checkout.open(spec(), copyLocation, { kind: 'copy' }));
    expect(copy.kind).toBe('worktree');
    expect(await copy.thin()).toBe(false);
    expect(fs.existsSync(path.join(copyLocation.stateDir, 'backing.index'))).toBe(true);
  });
});

describe('a thinned view whose seed git cannot read', () => {
  it('rebuilds its index without it: right, only without stat data', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    expect(await checkout.thin()).toBe(true);
    await stopAllViews();
    const stateFile = path.join(location().stateDir, 'state.json');
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
    const garbage = path.join(dir, 'not-an-index');
    fs.writeFileSync(garbage, 'DIRC but not really an index');
    fs.writeFileSync(stateFile, JSON.stringify({ ...state, repositoryIndex: garbage }));
    await checkout.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
    expect(gitInView('ls-files').split('\n').filter(Boolean).sort()).toEqual([
      'README.md',
      'src/a.txt',
      'src/b.txt',
    ]);
    // The next turn's snapshot cannot use it either: it starts from no index, and the view still commits.
    expect(await checkout.thin()).toBe(true);
    writeFiles(backing, { 'src/b.txt': 'the user\n' });
    await checkout.reset();
    const root = await checkout.mount();
    expect(read(path.join(root, 'src/b.txt'))).toBe('the user\n');
    expect(gitInView('status', '--porcelain')).toBe('');
    writeFiles(root, { 'src/a.txt': 'session\n' });
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions('commits/1'))).status).toBe('committed');
    expect(read(path.join(backing, 'src/a.txt'))).toBe('session\n');
    expect(git(backing, 'status', '--porcelain')).toBe(' M src/a.txt\n M src/b.txt\n');
  });
});

describe("a view's git in a repository that keeps an untracked cache", () => {
  it('prints no warning when made, reset or rebuilt after a thin: the view gets no cache naming another folder', async (context) => {
    if (skip !== undefined) context.skip();
    // The user's index holds an untracked cache naming the backing folder (made once, the setting not kept), as Keel's
    // private index did (its git ran with core.untrackedCache=true); git in the view, with the setting unset, warned.
    git(backing, '-c', 'core.untrackedCache=true', 'status', '--porcelain');
    expect(fs.readFileSync(path.join(backing, '.git', 'index')).includes('UNTR')).toBe(true);
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    const statusInView = (): { stdout: string; stderr: string } => {
      const view = runningView(path.join(dir, 'home', 's1'), location().checkout);
      if (view === undefined) throw new Error('no view is mounted');
      const status = spawnSync(
        'nsenter',
        [
          `--target=${view.pid}`,
          '--user',
          '--mount',
          '--preserve-credentials',
          `--wd=${location().checkout}`,
          '--',
          'git',
          'status',
          '--porcelain',
        ],
        { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
      );
      return { stdout: status.stdout, stderr: status.stderr };
    };
    const root = await checkout.mount();
    expect(statusInView()).toEqual({ stdout: '', stderr: '' });
    writeFiles(root, { 'src/a.txt': 'session\n' });
    Checkout.markDirty(location());
    expect(statusInView()).toEqual({ stdout: ' M src/a.txt\n', stderr: '' });
    expect((await checkout.commit(commitOptions('commits/1'))).status).toBe('committed');
    expect(await checkout.thin()).toBe(true);
    // Rebuilt from the repository's index (restoreViewIndex) when mounted between turns.
    await checkout.mount();
    expect(statusInView()).toEqual({ stdout: '', stderr: '' });
    // Made again from Keel's private index by the next reset: a view's keeps no untracked cache (its first snapshot,
    // seeded from the user's index, dropped it), so it is copied in as it is.
    await checkout.reset();
    expect(fs.readFileSync(path.join(location().stateDir, 'backing.index')).includes('UNTR')).toBe(false);
    await checkout.mount();
    expect(statusInView()).toEqual({ stdout: '', stderr: '' });
  });
});

describe("a view's known-clean status (the environment block's first status of a turn)", () => {
  it('is known clean when made, reset or committed, and not once anything may have written into it', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    expect(checkout.isKnownClean()).toBe(true);
    const root = await checkout.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
    writeFiles(root, { 'src/a.txt': 'session\n' });
    Checkout.markDirty(location());
    expect(checkout.isKnownClean()).toBe(false);
    expect((await checkout.commit(commitOptions('commits/1'))).status).toBe('committed');
    expect(checkout.isKnownClean()).toBe(true);
    // The commit built its tree without the view's index and dropped it; a box between turns mounts the view first
    // (a terminal's, a hook's), which brings it back.
    await checkout.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
    await checkout.reset();
    expect(checkout.isKnownClean()).toBe(true);
    await checkout.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
  });
});

describe('a view made without its baseline (a new turn sends its first request before the snapshot)', () => {
  it('holds no index, is known clean, and takes the baseline at the first job: what it wrote before stays its change', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view', deferBaseline: true });
    expect(checkout.kind).toBe('view');
    expect(readState(location().stateDir)?.pendingBaseline).toBe(true);
    const { view, backing: privateIndex } = indexes();
    expect(fs.existsSync(view) || fs.existsSync(privateIndex)).toBe(false);
    // What the environment block asks: the view is the backing folder, so its status is clean without a git.
    expect(checkout.isKnownClean()).toBe(true);
    const root = await checkout.mount({ baseline: 'later' });
    expect(readState(location().stateDir)?.pendingBaseline).toBe(true);
    expect(read(path.join(root, 'src/a.txt'))).toBe('one\n');
    // Written into the view before the baseline (a terminal), while the user edits the project.
    writeFiles(root, { 'new.txt': 'new\n' });
    Checkout.markDirty(location());
    writeFiles(backing, { 'src/b.txt': 'the user\n' });

    // Another handle, as the next process after a crash would find it: its first job takes the baseline.
    await stopAllViews();
    const later = Checkout.existing(spec(), location());
    if (!later) throw new Error('the view made without its baseline is not intact');
    expect((await later.uncommitted()).map((file) => `${file.status} ${file.path}`)).toEqual([
      'added new.txt',
    ]);
    expect(readState(location().stateDir)?.pendingBaseline).toBeUndefined();
    expect(fs.existsSync(view) && fs.existsSync(privateIndex)).toBe(true);
    await later.mount();
    // Only the session's file (untracked: the listing built its tree without staging anything in the view's index);
    // the user's edit is the baseline's.
    expect(gitInView('status', '--porcelain')).toBe('?? new.txt\n');
    expect((await later.commit(commitOptions('commits/p1'))).status).toBe('committed');
    expect(read(path.join(backing, 'new.txt'))).toBe('new\n');
    expect(read(path.join(backing, 'src/b.txt'))).toBe('the user\n');
  });

  it('is reset by taking its baseline, and what was written into it meanwhile is dropped', async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view', deferBaseline: true });
    const root = await checkout.mount({ baseline: 'later' });
    writeFiles(root, { 'stray.txt': 'stray\n' });
    Checkout.markDirty(location());
    await checkout.reset();
    expect(readState(location().stateDir)?.pendingBaseline).toBeUndefined();
    const again = await checkout.mount();
    expect(fs.existsSync(path.join(again, 'stray.txt'))).toBe(false);
    expect(gitInView('status', '--porcelain')).toBe('');
    expect(checkout.isKnownClean()).toBe(true);
    // A quiet one: the reset is the baseline alone, and the view's git is clean at once.
    await stopAllViews();
    fs.rmSync(path.join(dir, 'home'), { recursive: true, force: true });
    const quiet = await Checkout.open(spec(), location(), { kind: 'view', deferBaseline: true });
    await quiet.reset();
    expect(readState(location().stateDir)?.pendingBaseline).toBeUndefined();
    await quiet.mount();
    expect(gitInView('status', '--porcelain')).toBe('');
  });
});
