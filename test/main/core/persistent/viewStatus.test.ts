// Issue #36: a view's `git status --short` for the environment block from its upper layer and the baseline tree
// (viewStatus.ts), never a git over every file. Real overlay, real git, a real watcher: for every kind of change the
// lines are the ones git itself prints in the view, and wherever this way cannot answer exactly it answers nothing
// (the caller then runs git), with the reason.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  stopWatching,
  watchAhead,
  watchBackingFolders,
  watchedReady,
} from '../../../../main/core/persistent/backingWatch.js';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { pinViews, stopAllViews } from '../../../../main/core/persistent/viewHolder.js';
import { lastViewStatusWay } from '../../../../main/core/persistent/viewStatus.js';
import {
  git,
  gitInViewOf,
  ignoreForcedKind,
  makeRepo,
  makeTemp,
  overlayHere,
  projectLocation,
  writeFiles,
} from './support.js';

ignoreForcedKind();

let dir: string;
let backing: string;
let skip: string | undefined;

beforeEach(async () => {
  dir = makeTemp('keel-view-status-');
  const files: Record<string, string> = {
    '.gitignore': 'dist/\n*.log\nlogs/*\n!logs/keep.txt\nnode_modules/\n',
    'README.md': 'hello\n',
    'tool.sh': 'echo tool\n',
    'logs/keep.txt': 'kept\n',
  };
  for (let d = 0; d < 4; d++)
    for (let f = 0; f < 3; f++) files[`src/d${d}/deep/f${f}.ts`] = `export const v = ${d}${f};\n`;
  backing = makeRepo(path.join(dir, 'backing'), files);
  fs.chmodSync(path.join(backing, 'tool.sh'), 0o755);
  fs.symlinkSync('README.md', path.join(backing, 'readme-link'));
  fs.symlinkSync('tool.sh', path.join(backing, 'tool-link'));
  git(backing, 'add', '-A');
  git(backing, 'commit', '-qm', 'a mode and links');
  // Untracked in the user's repository, so in the session's baseline (a snapshot holds every file not ignored).
  fs.writeFileSync(path.join(backing, 'notes.txt'), "the user's untracked notes\n");
  const support = await overlayHere();
  skip = support.available ? undefined : support.reason;
  watchBackingFolders(true);
});

afterEach(async () => {
  stopWatching(backing);
  watchBackingFolders(false);
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

const location = (): CheckoutLocation => projectLocation(dir);
const spec = (): PersistentDirSpec => ({ name: 'project', path: backing, commit: 'auto' });
const at = (root: string, rel: string) => path.join(root, rel);

/** A new view of the project, reset once (the watcher in place before its snapshot), and its merged folder. */
async function openView(): Promise<{ checkout: Checkout; root: string }> {
  const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
  expect(checkout.kind).toBe('view');
  await checkout.reset();
  const root = await checkout.mount();
  Checkout.markDirty(location());
  return { checkout, root };
}

/** What git itself prints in the view's `folder`, as the environment block asks it (its index left alone). */
function gitStatus(folder = ''): string[] {
  const text = gitInViewOf(path.join(dir, 'home', 's1'), location().checkout, [
    '-C',
    folder === '' ? '.' : folder,
    '--no-optional-locks',
    '-c',
    'core.quotePath=false',
    '-c',
    'status.relativePaths=true',
    'status',
    '--short',
    '--untracked-files=normal',
    '--',
    '.',
  ]).trimEnd();
  return text === '' ? [] : text.split('\n');
}

/** Every kind of change a session makes that git status names, and some it does not. */
const everyChange = (root: string): void => {
  writeFiles(root, {
    // Modified; written with the same bytes (copied up, not a change); new in a tracked folder.
    'src/d0/deep/f1.ts': 'changed\n',
    'src/d0/deep/f0.ts': 'export const v = 00;\n',
    'src/d0/deep/new.ts': 'new\n',
    // New folders, as git collapses them (`lib/`), one inside a tracked folder (`src/d1/fresh/`).
    'lib/new/tree/one.ts': 'one\n',
    'lib/two.ts': 'two\n',
    'src/d1/fresh/a/b.ts': 'b\n',
    // A file named as a folder with a dot (sorts before `d0/` in a tree, not in a status).
    'src/d0.ts': 'dot\n',
    // Ignored: a pattern, a folder, the negation's other side; and what the negation lets in.
    'build.log': 'ignored\n',
    'dist/bundle.js': 'ignored\n',
    'logs/today.txt': 'ignored\n',
    'notes.txt': 'the session changed the notes\n',
    // Names starting `.git` that are ordinary files and folders.
    '.github/workflows/ci.yml': 'on: push\n',
    'src/d0/.gitkeep': '',
    // An install: ignored as a whole, inside a new folder too (which then shows for its other file).
    'node_modules/pkg/index.js': 'ignored\n',
    'tools/node_modules/x/y.js': 'ignored\n',
    'tools/run.sh': 'new\n',
    // A new folder holding only ignored files: not shown.
    'traces/today.log': 'ignored\n',
  });
  fs.writeFileSync(at(root, 'logs/keep.txt'), 'kept, changed\n');
  // Touched only: copied up, the same bytes.
  const later = new Date(Date.now() + 5_000);
  fs.utimesSync(at(root, 'src/d2/deep/f2.ts'), later, later);
  // Deleted: a file, a whole folder.
  fs.rmSync(at(root, 'src/d1/deep/f0.ts'));
  fs.rmSync(at(root, 'src/d2/deep/f0.ts'));
  fs.rmSync(at(root, 'src/d3'), { recursive: true });
  // Modes and kinds: the executable bit both ways, a file made a link, a link made a file, a link retargeted.
  fs.chmodSync(at(root, 'src/d0/deep/f2.ts'), 0o755);
  fs.chmodSync(at(root, 'tool.sh'), 0o644);
  fs.rmSync(at(root, 'src/d1/deep/f1.ts'));
  fs.symlinkSync('f2.ts', at(root, 'src/d1/deep/f1.ts'));
  fs.rmSync(at(root, 'tool-link'));
  fs.writeFileSync(at(root, 'tool-link'), 'now a file\n');
  fs.rmSync(at(root, 'readme-link'));
  fs.symlinkSync('notes.txt', at(root, 'readme-link'));
  // A file replaced by a folder, a folder by a file.
  fs.rmSync(at(root, 'README.md'));
  writeFiles(root, { 'README.md/inside.md': 'now a folder\n' });
  fs.rmSync(at(root, 'src/d2/deep'), { recursive: true });
  fs.writeFileSync(at(root, 'src/d2/deep'), 'now a file\n');
};

describe("a view's status", () => {
  it('prints what git prints in the view, for every kind of change, from the root and from a folder', async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout, root } = await openView();
    expect(await checkout.status('')).toEqual([]);
    expect(lastViewStatusWay).toEqual({ known: true });
    everyChange(root);
    const known = await checkout.status('');
    expect(lastViewStatusWay).toEqual({ known: true });
    expect(known).toEqual(gitStatus());
    // What that is, so a git that changed its mind shows here rather than agreeing with a wrong answer.
    expect(known).toEqual([
      ' D README.md',
      ' M logs/keep.txt',
      ' M notes.txt',
      ' M readme-link',
      ' M src/d0/deep/f1.ts',
      ' M src/d0/deep/f2.ts',
      ' D src/d1/deep/f0.ts',
      ' T src/d1/deep/f1.ts',
      ' D src/d2/deep/f0.ts',
      ' D src/d2/deep/f1.ts',
      ' D src/d2/deep/f2.ts',
      ' D src/d3/deep/f0.ts',
      ' D src/d3/deep/f1.ts',
      ' D src/d3/deep/f2.ts',
      ' T tool-link',
      ' M tool.sh',
      // README.md/ (a folder now) is not shown: git drops an untracked entry whose name its index holds.
      '?? .github/',
      '?? lib/',
      '?? src/d0.ts',
      '?? src/d0/.gitkeep',
      '?? src/d0/deep/new.ts',
      '?? src/d1/fresh/',
      '?? src/d2/deep',
      '?? tools/',
    ]);
    // A folder of the view (a command's folder below the root): its own lines, relative to it.
    for (const folder of ['src', 'src/d0'])
      expect({ folder, lines: await checkout.status(folder) }).toEqual({ folder, lines: gitStatus(folder) });
    expect(await checkout.status('src/d1')).toEqual([' D deep/f0.ts', ' T deep/f1.ts', '?? fresh/']);
  });

  it('never lists a folder an install made that the rules ignore as a whole (thousands of files)', async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout, root } = await openView();
    const installed: Record<string, string> = {};
    for (let i = 0; i < 2_500; i++) installed[`node_modules/p${i % 50}/f${i}.js`] = 'x\n';
    writeFiles(root, { ...installed, 'src/d0/deep/f1.ts': 'changed\n' });
    expect(await checkout.status('')).toEqual([' M src/d0/deep/f1.ts']);
    expect(lastViewStatusWay).toEqual({ known: true });
    expect(gitStatus()).toEqual([' M src/d0/deep/f1.ts']);
  });

  it('in a one-turn host (no watching), from a watch started ahead: the baseline taken after its walk is marked', async (context) => {
    if (skip !== undefined) context.skip();
    stopWatching(backing);
    watchBackingFolders(false);
    // As `keel run`'s first turn: the view made without its baseline, the watch started, the baseline at the first tool.
    const checkout = await Checkout.open(spec(), location(), { kind: 'view', deferBaseline: true });
    watchAhead(backing);
    expect(await watchedReady(backing)).toBe(true);
    await checkout.takeBaseline();
    const root = await checkout.mount();
    Checkout.markDirty(location());
    writeFiles(root, { 'src/d0/deep/f1.ts': 'changed\n', 'new.ts': 'new\n' });
    expect(await checkout.status('')).toEqual([' M src/d0/deep/f1.ts', '?? new.ts']);
    expect(lastViewStatusWay).toEqual({ known: true });
    expect(gitStatus()).toEqual([' M src/d0/deep/f1.ts', '?? new.ts']);
    // The user's edit of the project is seen by that watch too: git answers.
    fs.writeFileSync(path.join(backing, 'README.md'), 'the user\n');
    expect(await checkout.status('')).toBeUndefined();
  });

  it("in a one-turn host's continued session (reset before the watch started ahead was ready): marked once it is", async (context) => {
    if (skip !== undefined) context.skip();
    stopWatching(backing);
    watchBackingFolders(false);
    const unpin = pinViews(path.join(dir, 'home', 's1'));
    try {
      // As `keel run --session`: the view exists, its reset's snapshot comes before any watcher could vouch for it.
      const { checkout, root } = await openView();
      writeFiles(root, { 'src/d0/deep/f1.ts': 'changed\n' });
      expect(await checkout.status('')).toBeUndefined();
      const way = lastViewStatusWay;
      expect(way.known ? '' : way.why).toMatch(/no watch/);
      expect(await checkout.confirmWatch()).toBe(false); // nothing watches the folder yet
      watchAhead(backing);
      expect(await checkout.confirmWatch()).toBe(true);
      writeFiles(root, { 'new.ts': 'new\n' });
      expect(await checkout.status('')).toEqual([' M src/d0/deep/f1.ts', '?? new.ts']);
      expect(lastViewStatusWay).toEqual({ known: true });
      expect(gitStatus()).toEqual([' M src/d0/deep/f1.ts', '?? new.ts']);
      expect(await checkout.confirmWatch()).toBe(false); // marked already: nothing to do
      fs.writeFileSync(path.join(backing, 'README.md'), 'the user\n');
      expect(await checkout.status('')).toBeUndefined();
    } finally {
      unpin();
    }
  });

  it('is never marked when the backing folder changed since the reset, nor outside a turn', async (context) => {
    if (skip !== undefined) context.skip();
    stopWatching(backing);
    watchBackingFolders(false);
    const { checkout, root } = await openView();
    writeFiles(root, { 'src/d0/deep/f1.ts': 'changed\n' });
    watchAhead(backing);
    expect(await watchedReady(backing)).toBe(true);
    // No turn pins the views: a job left after the turn's end does nothing.
    expect(await checkout.confirmWatch()).toBe(false);
    const unpin = pinViews(path.join(dir, 'home', 's1'));
    try {
      // The user's edit after the reset: the lower layer is no longer the baseline, git shows it as the view's change.
      fs.writeFileSync(path.join(backing, 'src/d3/deep/f0.ts'), 'the user, meanwhile\n');
      expect(await checkout.confirmWatch()).toBe(false);
      expect(await checkout.status('')).toBeUndefined();
      expect(gitStatus()).toEqual([' M src/d0/deep/f1.ts', ' M src/d3/deep/f0.ts']);
    } finally {
      unpin();
    }
  });

  it('follows the changes of a later turn (a new baseline, the gitlink check by its diff)', async (context) => {
    if (skip !== undefined) context.skip();
    const first = await openView();
    writeFiles(first.root, { 'src/d0/deep/f1.ts': 'turn one\n', 'added.ts': 'a\n' });
    const report = await first.checkout.commit({
      artifactsDir: path.join(dir, 'artifacts'),
      artifactStem: 'c',
    });
    expect(report.status).toBe('committed');
    const { checkout, root } = await openView();
    expect(await checkout.status('')).toEqual([]);
    fs.rmSync(at(root, 'added.ts'));
    writeFiles(root, { 'src/d0/deep/f1.ts': 'turn two\n' });
    expect(await checkout.status('')).toEqual([' D added.ts', ' M src/d0/deep/f1.ts']);
    expect(lastViewStatusWay).toEqual({ known: true });
    expect(gitStatus()).toEqual([' D added.ts', ' M src/d0/deep/f1.ts']);
  });
});

describe("a view's status leaves to git what it cannot answer exactly", () => {
  const leftToGit = async (checkout: Checkout, why: RegExp): Promise<void> => {
    expect(await checkout.status('')).toBeUndefined();
    const way = lastViewStatusWay;
    expect(way.known).toBe(false);
    expect(way.known ? '' : way.why).toMatch(why);
  };

  it('a change in the backing folder since the reset (the lower layer git would compare): until the next reset', async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout, root } = await openView();
    writeFiles(root, { 'src/d0/deep/f1.ts': 'the session\n' });
    expect(await checkout.status('')).toEqual([' M src/d0/deep/f1.ts']);
    fs.writeFileSync(path.join(backing, 'src/d3/deep/f0.ts'), 'the user, meanwhile\n');
    await leftToGit(checkout, /backing folder changed/);
    // Git shows the user's edit as a change of the view's (its index holds the reset's snapshot).
    expect(gitStatus()).toEqual([' M src/d0/deep/f1.ts', ' M src/d3/deep/f0.ts']);
    await checkout.reset();
    expect(await checkout.status('')).toEqual([]);
  });

  it('no watcher of the backing folder (a one-turn host)', async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout, root } = await openView();
    writeFiles(root, { 'src/d0/deep/f1.ts': 'the session\n' });
    stopWatching(backing);
    watchBackingFolders(false);
    await leftToGit(checkout, /no watcher/);
  });

  it("the view's index written by the model's git", async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout, root } = await openView();
    writeFiles(root, { 'src/d0/deep/f1.ts': 'the session\n' });
    gitInViewOf(path.join(dir, 'home', 's1'), location().checkout, ['add', 'src/d0/deep/f1.ts']);
    await leftToGit(checkout, /index or HEAD/);
    expect(gitStatus()).toEqual(['M  src/d0/deep/f1.ts']);
  });

  it('a changed ignore file, a nested repository, a name git quotes (each until the next reset)', async (context) => {
    if (skip !== undefined) context.skip();
    const { checkout } = await openView();
    const cases: [(root: string) => void, RegExp][] = [
      [(root) => fs.appendFileSync(at(root, '.gitignore'), '!dist/\n'), /a git file/],
      [
        (root) => {
          writeFiles(root, { 'made/inner.ts': 'x\n' });
          gitInViewOf(path.join(dir, 'home', 's1'), location().checkout, ['init', '-q', 'made']);
        },
        /nested repository/,
      ],
      [(root) => writeFiles(root, { 'a name.ts': 'x\n', 'b\\c.ts': 'x\n' }), /quotes/],
    ];
    for (const [change, why] of cases) {
      change(await checkout.mount());
      await leftToGit(checkout, why);
      await checkout.reset();
      expect(await checkout.status('')).toEqual([]);
      Checkout.markDirty(location());
    }
    writeFiles(await checkout.mount(), { 'a name.ts': 'x\n' });
    expect(gitStatus()).toEqual(['?? "a name.ts"']);
  });

  it('core.fileMode off in the repository', async (context) => {
    if (skip !== undefined) context.skip();
    git(backing, 'config', 'core.fileMode', 'false');
    const { checkout, root } = await openView();
    fs.chmodSync(at(root, 'tool.sh'), 0o644);
    await leftToGit(checkout, /core\.fileMode/);
    expect(gitStatus()).toEqual([]);
  });

  it('a gitlink in the baseline (git looks into submodules)', async (context) => {
    if (skip !== undefined) context.skip();
    const head = git(backing, 'rev-parse', 'HEAD').trim();
    fs.mkdirSync(path.join(backing, 'sub'));
    git(backing, 'update-index', '--add', '--cacheinfo', `160000,${head},sub`);
    git(backing, 'commit', '-qm', 'an unpopulated submodule');
    const { checkout, root } = await openView();
    fs.rmdirSync(at(root, 'sub'));
    await leftToGit(checkout, /gitlink/);
    expect(gitStatus()).toEqual([' D sub']);
  });
});
