import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../../../../main/core/persistent/git.js';
import { overlayChanges } from '../../../../main/core/persistent/overlayChanges.js';
import { snapshot } from '../../../../main/core/persistent/snapshot.js';
import { copyIndexFile, type CheckoutContext } from '../../../../main/core/persistent/state.js';
import { makeViewGit } from '../../../../main/core/persistent/viewGit.js';
import { detectSandbox, wrapCommand } from '../../../../main/sandbox/box.js';
import { clearLayers, OverlayView } from '../../../../main/sandbox/overlayView.js';
import { git, makeRepo, makeTemp } from './support.js';

// Issue #36: a copy-on-write view of a repository whose git, in the box, behaves as a worktree checkout's does: the
// snapshot (the user's uncommitted work included) is its clean starting point, and only the session's work shows.
const run = promisify(execFile);
let root: string;
let backing: string;
let view: OverlayView;
let checkout: string;

beforeAll(async () => {
  root = makeTemp('keel-viewgit-');
  backing = makeRepo(path.join(root, 'project'), {
    'src/a.ts': 'export const a = 1;\n',
    'src/b.ts': 'export const b = 1;\n',
    'README.md': 'readme\n',
  });
  // The user's own uncommitted work: part of the snapshot, so not the session's.
  fs.writeFileSync(path.join(backing, 'src', 'a.ts'), 'export const a = 2;\n');
  fs.writeFileSync(path.join(backing, 'notes.md'), 'untracked\n');
  const stateDir = path.join(root, 'state');
  fs.mkdirSync(stateDir);
  checkout = path.join(root, 'workspace', 'persistent', 'project');
  const context: CheckoutContext = {
    spec: { name: 'project', path: backing, commit: 'auto' },
    location: {
      workspaceRoot: path.join(root, 'workspace'),
      checkout,
      stateDir,
      locksRoot: path.join(root, 'locks'),
    },
    state: {
      version: 1,
      kind: 'worktree',
      backing,
      checkout,
      gitDir: '',
      baseline: '',
      baselineTree: '',
      links: [],
      copies: {},
      clean: false,
      head: '',
      backingHead: '',
      objectFormat: 'sha1',
    },
  };
  copyIndexFile(path.join(backing, '.git', 'index'), path.join(stateDir, 'backing.index'));
  const taken = await snapshot(context);
  const upper = path.join(stateDir, 'upper');
  await makeViewGit({
    backing,
    checkout,
    upper,
    commit: taken.commit,
    backingIndex: path.join(stateDir, 'backing.index'),
    locksRoot: context.location.locksRoot,
  });
  view = await OverlayView.start({
    lower: backing,
    upper,
    work: path.join(stateDir, 'work'),
    mountpoint: checkout,
  });
});

afterAll(async () => {
  await view.stop();
  clearLayers(view.layers);
  fs.rmSync(root, { recursive: true, force: true });
});

async function inBox(command: string): Promise<string> {
  const sandbox = await detectSandbox();
  const wrapped = wrapCommand({ sandbox, command, workspace: checkout, network: 'none' });
  const [file, ...args] = view.enter(wrapped.argv);
  return (await run(file as string, args, { env: { ...process.env, ...wrapped.env } })).stdout;
}

describe.runIf(process.platform === 'linux')("a view's git", () => {
  it('starts clean from the snapshot, shows only the session work, and leaves the project and its git alone', async () => {
    const projectStatus = git(backing, 'status', '--short');
    // Nothing of the project was written: the host folder holds the `.git` file alone.
    expect(fs.readdirSync(checkout)).toEqual(['.git']);
    expect(await inBox('git status --short && cat src/a.ts')).toBe('export const a = 2;\n');
    await inBox('echo "export const b = 3;" > src/b.ts && rm README.md && echo new > src/c.ts');
    expect(await inBox('git status --short')).toBe(' D README.md\n M src/b.ts\n?? src/c.ts\n');
    expect(git(backing, 'status', '--short')).toBe(projectStatus);
    expect(fs.readFileSync(path.join(backing, 'src', 'b.ts'), 'utf8')).toBe('export const b = 1;\n');
    // The `.git` file in upper is the view's own, not a change of the project's.
    const sides = { lower: backing, upper: view.layers.upper, view: view.hostPath(checkout), own: ['.git'] };
    expect(overlayChanges(sides)).toEqual([
      { path: 'README.md', change: 'deleted' },
      { path: 'src/b.ts', change: 'written' },
      { path: 'src/c.ts', change: 'written' },
    ]);
  });

  it("runs Keel's own git in the view's namespace: there the folder is the view, outside an empty mount point", async () => {
    const inView = await runGit({ cwd: checkout, env: {}, inView: view.pid }, ['status', '--short']);
    expect(inView.stdout.toString('utf8')).toBe(await inBox('git status --short'));
    // The same git in Keel's own namespace reads the host's mount point, which holds the `.git` file alone.
    const outside = await runGit({ cwd: checkout, env: {} }, ['status', '--short']);
    expect(outside.stdout.toString('utf8')).toContain(' D src/a.ts');
  });

  it('resets: the view down, upper emptied but for its `.git` file, the next view is the project and git is clean', async () => {
    await inBox('echo reset-me > src/a.ts && mkdir -p out && echo o > out/o.txt');
    await view.stop();
    clearLayers(view.layers, ['.git']);
    expect(fs.readdirSync(view.layers.upper)).toEqual(['.git']);
    view = await OverlayView.start(view.layers);
    expect(await inBox('git status --short && cat src/a.ts && ls')).toBe(
      'export const a = 2;\nREADME.md\nnotes.md\nsrc\n',
    );
  });
});
