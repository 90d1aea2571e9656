import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { runningView, stopAllViews } from '../../../../main/core/persistent/viewHolder.js';
import {
  git,
  ignoreForcedKind,
  makeRepo,
  makeTemp,
  overlayHere,
  read,
  unforced,
  writeFiles,
} from './support.js';
import { gitIn } from '../harness/support.js';

let dir: string;
let artifactsDir: string;

beforeEach(() => {
  dir = makeTemp('keel-checkout-');
  artifactsDir = path.join(dir, 'artifacts');
});

afterEach(async () => {
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

function location(session = 's1', name = 'project'): CheckoutLocation {
  return {
    workspaceRoot: path.join(dir, 'home', session, 'workspace'),
    checkout: path.join(dir, 'home', session, 'workspace', 'persistent', name),
    stateDir: path.join(dir, 'home', session, 'checkouts', name),
    locksRoot: path.join(dir, 'home', 'locks'),
  };
}

function spec(backing: string, name = 'project'): PersistentDirSpec {
  return { name, path: backing, commit: 'auto' };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const commitOptions = (stem = 'commits/1-project') => ({ artifactsDir, artifactStem: stem });

describe('a checkout of a sha256 repository', () => {
  it.for(['copy', 'view'] as const)(
    'commits, recognises its own commit at the next reset and follows the user (%s)',
    async (kind, context) => {
      if (kind === 'view' && !(await overlayHere()).available) context.skip();
      const backing = path.join(dir, 'sha256');
      fs.mkdirSync(backing);
      git(backing, 'init', '-q', '--object-format=sha256');
      writeFiles(backing, { 'a.txt': 'one\n', 'b.txt': 'two\n' });
      git(backing, 'add', '-A');
      git(backing, 'commit', '-qm', 'initial');
      // Both kinds a repository gets handle sha256 object ids, whatever KEEL_CHECKOUT_KIND forces.
      const checkout = await unforced(() => Checkout.open(spec(backing), location(), { kind }));
      expect(checkout.kind).toBe(kind === 'view' ? 'view' : 'worktree');
      const co = await checkout.mount();
      writeFiles(co, { 'a.txt': 'session\n' });
      Checkout.markDirty(location());
      expect((await checkout.commit(commitOptions())).status).toBe('committed');
      expect(read(path.join(backing, 'a.txt'))).toBe('session\n');
      await checkout.reset();
      expect(read(path.join(co, 'a.txt'))).toBe('session\n');
      writeFiles(backing, { 'b.txt': 'user\n' });
      await checkout.reset();
      expect(read(path.join(co, 'b.txt'))).toBe('user\n');
      expect(gitIn(location().checkout, 'status', '--porcelain')).toBe('');
    },
  );
});

describe.each(['worktree', 'shadow', 'view'] as const)('a %s checkout', (kind) => {
  let backing: string;
  // The suite's kind is its parameter: KEEL_CHECKOUT_KIND (a run with a kind forced) would make the worktree
  // suite's checkouts views, or the view suite's copies; here each kind keeps its own cases.
  ignoreForcedKind();

  /** The checkout, a view when the suite's kind is one (a full copy otherwise: the backing decides which). */
  const open = () => Checkout.open(spec(backing), location(), { kind: kind === 'view' ? 'view' : 'copy' });

  /** Git in the checkout: a view's runs in its holder's namespace, where its files are. */
  const gitCo = (...args: string[]): string => {
    if (kind !== 'view') return git(location().checkout, ...args);
    const view = runningView(path.join(dir, 'home', 's1'), location().checkout);
    if (view === undefined) throw new Error('no view is mounted');
    const enter = [
      `--target=${view.pid}`,
      '--user',
      '--mount',
      '--preserve-credentials',
      `--wd=${location().checkout}`,
    ];
    return execFileSync(
      'nsenter',
      [...enter, '--', 'git', '-c', 'user.name=T', '-c', 'user.email=t@t', ...args],
      {
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
      },
    );
  };

  beforeEach(() => {
    backing = path.join(dir, 'backing');
    const files = {
      'src/a.txt': 'one\ntwo\nthree\n',
      'README.md': 'hello\n',
      'bin/run.sh': '#!/bin/sh\necho run\n',
    };
    if (kind !== 'shadow') makeRepo(backing, files);
    else {
      fs.mkdirSync(backing);
      writeFiles(backing, files);
    }
    fs.chmodSync(path.join(backing, 'bin/run.sh'), 0o755);
    if (kind !== 'shadow') git(backing, 'commit', '-qam', 'executable');
  });

  it('starts equal to the backing folder, uncommitted work included, and reports its kind', async () => {
    writeFiles(backing, { 'notes.txt': 'untracked\n', 'README.md': 'hello, edited\n' });
    const checkout = await open();
    expect(checkout.kind).toBe(kind);
    const co = await checkout.mount();
    expect(read(path.join(co, 'src/a.txt'))).toBe('one\ntwo\nthree\n');
    expect(read(path.join(co, 'notes.txt'))).toBe('untracked\n');
    expect(read(path.join(co, 'README.md'))).toBe('hello, edited\n');
    expect(fs.statSync(path.join(co, 'bin/run.sh')).mode & 0o111).not.toBe(0);
    expect(await checkout.uncommitted()).toEqual([]);
    if (kind === 'worktree') {
      // The backing repository's branch, index and files are untouched.
      expect(git(backing, 'status', '--porcelain')).toBe(' M README.md\n?? notes.txt\n');
    }
  });

  it('reset discards every uncommitted write and follows the backing folder', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    writeFiles(co, { 'src/a.txt': 'changed\n', 'new/file.txt': 'x\n' });
    fs.rmSync(path.join(co, 'README.md'));
    Checkout.markDirty(location());
    writeFiles(backing, { 'later.txt': 'from the user\n' });
    expect((await checkout.uncommitted()).map((f) => `${f.status} ${f.path}`).sort()).toEqual([
      'added new/file.txt',
      'deleted README.md',
      'modified src/a.txt',
    ]);
    await checkout.reset();
    expect(read(path.join(co, 'src/a.txt'))).toBe('one\ntwo\nthree\n');
    expect(fs.existsSync(path.join(co, 'new'))).toBe(false);
    expect(read(path.join(co, 'README.md'))).toBe('hello\n');
    expect(read(path.join(co, 'later.txt'))).toBe('from the user\n');
    expect(await checkout.uncommitted()).toEqual([]);
  });

  it('keeps the ignored files the session made (build output) across a reset, and only those', async () => {
    writeFiles(backing, {
      '.gitignore': 'out/\ndist/\n*.log\n.env\n',
      '.env': 'KEY=backing\n',
      'out/user.txt': "the user's own build\n",
    });
    if (kind !== 'shadow') git(backing, 'add', '-A');
    const checkout = await open();
    const co = await checkout.mount();
    // The session removes the build folder and builds again (a view: an opaque folder over the backing's out/).
    fs.rmSync(path.join(co, 'out'), { recursive: true, force: true });
    writeFiles(co, {
      'out/bin/app': 'built\n',
      'src/debug.log': 'log\n',
      'src/new.txt': 'untracked\n',
      '.env': 'KEY=session\n',
      'src/a.txt': 'changed\n',
      'dist/js/deep/bundle.js': 'bundle\n',
      'gen/run.log': 'kept\n',
      'gen/sub/code.txt': 'not ignored\n',
    });
    fs.symlinkSync('bin/app', path.join(co, 'out', 'current'));
    Checkout.markDirty(location());
    writeFiles(backing, { 'later.txt': 'from the user\n' });
    await checkout.reset();
    expect(read(path.join(co, 'out/bin/app'))).toBe('built\n');
    expect(fs.readlinkSync(path.join(co, 'out/current'))).toBe('bin/app');
    expect(read(path.join(co, 'src/debug.log'))).toBe('log\n');
    expect(fs.existsSync(path.join(co, 'src/new.txt'))).toBe(false);
    // A new ignored folder whole; in a new folder that is not, its ignored files only.
    expect(read(path.join(co, 'dist/js/deep/bundle.js'))).toBe('bundle\n');
    expect(read(path.join(co, 'gen/run.log'))).toBe('kept\n');
    expect(fs.existsSync(path.join(co, 'gen/sub'))).toBe(false);
    expect(read(path.join(co, 'src/a.txt'))).toBe('one\ntwo\nthree\n');
    expect(read(path.join(co, 'later.txt'))).toBe('from the user\n');
    // A small ignored file of the backing folder is the backing's again (a copy refreshes its copy).
    expect(read(path.join(co, '.env'))).toBe('KEY=backing\n');
    // A copy's other ignored folders start empty; a view shows the backing's through the folder made again.
    expect(read(path.join(co, 'out/user.txt'))).toBe(kind === 'view' ? "the user's own build\n" : undefined);
    expect(await checkout.uncommitted()).toEqual([]);
    // The user stops ignoring logs: the session's log is theirs to commit, as any untracked file, then goes.
    writeFiles(backing, { '.gitignore': 'out/\ndist/\n.env\n' });
    Checkout.markDirty(location());
    await checkout.reset();
    expect(read(path.join(co, 'out/bin/app'))).toBe('built\n');
    expect(fs.existsSync(path.join(co, 'src/debug.log'))).toBe(false);
  });

  it('commits added, modified, deleted and executable files with hashes and a diff artifact', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    writeFiles(co, { 'src/a.txt': 'one\nTWO\nthree\n', 'src/deep/new.txt': 'new\n', 'tool.sh': 'echo\n' });
    fs.chmodSync(path.join(co, 'tool.sh'), 0o755);
    fs.rmSync(path.join(co, 'README.md'));
    Checkout.markDirty(location());
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('committed');
    if (report.status !== 'committed') return;
    expect(report.files.map((f) => f.path).sort()).toEqual([
      'README.md',
      'src/a.txt',
      'src/deep/new.txt',
      'tool.sh',
    ]);
    const readme = report.files.find((f) => f.path === 'README.md');
    expect(readme?.preHash).toMatch(/^[0-9a-f]{64}$/);
    expect(readme?.postHash).toBeNull();
    expect(report.files.find((f) => f.path === 'src/deep/new.txt')?.preHash).toBeNull();
    expect(read(path.join(backing, 'src/a.txt'))).toBe('one\nTWO\nthree\n');
    expect(read(path.join(backing, 'src/deep/new.txt'))).toBe('new\n');
    expect(fs.existsSync(path.join(backing, 'README.md'))).toBe(false);
    expect(fs.statSync(path.join(backing, 'tool.sh')).mode & 0o111).not.toBe(0);
    const patch = read(path.join(artifactsDir, report.diffArtifact)) ?? '';
    expect(patch).toContain('-two\n+TWO');
    expect(patch).toContain('deleted file mode');
    if (kind === 'shadow') {
      // The shadow repository names the committed state, so git never prunes it.
      const shadowDir = path.join(location().stateDir, 'shadow.git');
      const names = git(shadowDir, 'ls-tree', '-r', '--name-only', 'refs/keel/baseline').split('\n');
      expect(names).toContain('src/deep/new.txt');
      expect(names).not.toContain('README.md');
    }
    // Committed work is no longer uncommitted; a second commit has nothing to do.
    expect(await checkout.uncommitted()).toEqual([]);
    expect((await checkout.commit(commitOptions('commits/2-project'))).status).toBe('unchanged');
  });

  it('commits files bigger than a megabyte byte for byte, with the hashes before and after', async () => {
    const old = Buffer.alloc(2 * 1024 * 1024 + 3, 'o');
    fs.writeFileSync(path.join(backing, 'big.bin'), old);
    const checkout = await open();
    const fresh = Buffer.alloc(3 * 1024 * 1024 + 1, 'n');
    fresh[12345] = 0;
    fs.writeFileSync(path.join(await checkout.mount(), 'big.bin'), fresh);
    Checkout.markDirty(location());
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('committed');
    if (report.status !== 'committed') return;
    expect(fs.readFileSync(path.join(backing, 'big.bin')).equals(fresh)).toBe(true);
    expect(report.files).toEqual([{ path: 'big.bin', preHash: sha256(old), postHash: sha256(fresh) }]);
  });

  it.runIf(kind !== 'shadow')(
    'commits work the session committed with its own git in the checkout',
    async () => {
      const checkout = await open();
      const co = await checkout.mount();
      writeFiles(co, { 'src/a.txt': 'committed by the model\n' });
      gitCo('commit', '-qam', 'model commit');
      Checkout.markDirty(location());
      const report = await checkout.commit(commitOptions());
      expect(report.status).toBe('committed');
      expect(read(path.join(backing, 'src/a.txt'))).toBe('committed by the model\n');
      // The backing repository's history is untouched: the model's commit lives only in the checkout.
      expect(git(backing, 'log', '--format=%s', '-1').trim()).toBe('executable');
    },
  );

  it('merges a file the backing folder changed since the checkout', async () => {
    const checkout = await open();
    writeFiles(await checkout.mount(), { 'src/a.txt': 'ONE\ntwo\nthree\n' });
    Checkout.markDirty(location());
    writeFiles(backing, { 'src/a.txt': 'one\ntwo\nTHREE\n' });
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('committed');
    expect(report.status === 'committed' && report.files[0]?.merged).toBe(true);
    expect(read(path.join(backing, 'src/a.txt'))).toBe('ONE\ntwo\nTHREE\n');
  });

  it('brings merged results and edits made meanwhile into the checkout at the next reset', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    writeFiles(co, { 'src/a.txt': 'ONE\ntwo\nthree\n' });
    Checkout.markDirty(location());
    writeFiles(backing, { 'src/a.txt': 'one\ntwo\nTHREE\n', 'README.md': 'edited meanwhile\n' });
    expect((await checkout.commit(commitOptions())).status).toBe('committed');
    expect(read(path.join(co, 'src/a.txt'))).toBe('ONE\ntwo\nthree\n');
    await checkout.reset();
    expect(read(path.join(co, 'src/a.txt'))).toBe('ONE\ntwo\nTHREE\n');
    expect(read(path.join(co, 'README.md'))).toBe('edited meanwhile\n');
    if (kind !== 'shadow') {
      // The model's own git sees a clean checkout whose HEAD is the snapshot: `git diff` shows only its work.
      expect(gitCo('status', '--porcelain')).toBe('');
      writeFiles(co, { 'README.md': 'model edit\n' });
      expect(gitCo('status', '--porcelain')).toBe(' M README.md\n');
    }
  });

  it('after a commit, the next reset still brings in every later change to the backing folder', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    // Turn 1: the session edits two files; nobody touches the backing folder before the next reset.
    writeFiles(co, { 'src/a.txt': 'turn one\n', 'src/b.txt': 'new in turn one\n' });
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions())).status).toBe('committed');
    const untouched = fs.statSync(path.join(co, 'README.md')).mtimeMs;
    await checkout.reset();
    expect(read(path.join(co, 'src/a.txt'))).toBe('turn one\n');
    expect(fs.statSync(path.join(co, 'README.md')).mtimeMs).toBe(untouched);
    // Turn 2: after the commit the user edits a committed file again, another file, and an executable bit.
    writeFiles(co, { 'src/a.txt': 'turn two\n' });
    fs.rmSync(path.join(co, 'src/b.txt'));
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions('commits/2-project'))).status).toBe('committed');
    writeFiles(backing, { 'src/a.txt': 'user after turn two\n', 'README.md': 'user edit\n' });
    await checkout.reset();
    expect(read(path.join(co, 'src/a.txt'))).toBe('user after turn two\n');
    expect(read(path.join(co, 'README.md'))).toBe('user edit\n');
    expect(fs.existsSync(path.join(co, 'src/b.txt'))).toBe(false);
    // Turn 3: the user only changes the mode of the file the session committed.
    writeFiles(co, { 'bin/run.sh': '#!/bin/sh\necho changed\n' });
    Checkout.markDirty(location());
    expect((await checkout.commit(commitOptions('commits/3-project'))).status).toBe('committed');
    fs.chmodSync(path.join(backing, 'bin/run.sh'), 0o644);
    await checkout.reset();
    expect(fs.statSync(path.join(co, 'bin/run.sh')).mode & 0o111).toBe(0);
    expect(await checkout.uncommitted()).toEqual([]);
    if (kind !== 'shadow') expect(gitCo('status', '--porcelain')).toBe('');
  });

  it('follows backing changes into an untouched checkout, rewriting only the paths that changed', async () => {
    writeFiles(backing, { 'old/one.txt': '1\n', 'old/two.txt': '2\n', 'keep.txt': 'keep\n' });
    if (kind !== 'shadow') git(backing, 'add', '-A');
    const checkout = await open();
    const co = await checkout.mount();
    const kept = fs.statSync(path.join(co, 'keep.txt'));
    writeFiles(backing, { 'src/a.txt': 'user\n', 'fresh/deep/new.txt': 'new\n' });
    fs.rmSync(path.join(backing, 'old'), { recursive: true });
    fs.rmSync(path.join(backing, 'README.md'));
    writeFiles(backing, { 'README.md/now-a-folder.txt': 'x\n' });
    await checkout.reset();
    expect(read(path.join(co, 'src/a.txt'))).toBe('user\n');
    expect(read(path.join(co, 'fresh/deep/new.txt'))).toBe('new\n');
    expect(fs.existsSync(path.join(co, 'old'))).toBe(false);
    expect(read(path.join(co, 'README.md/now-a-folder.txt'))).toBe('x\n');
    const after = fs.statSync(path.join(co, 'keep.txt'));
    expect([after.ino, after.mtimeMs]).toEqual([kept.ino, kept.mtimeMs]);
    expect(await checkout.uncommitted()).toEqual([]);
    if (kind !== 'shadow') expect(gitCo('status', '--porcelain')).toBe('');
  });

  it('still follows the backing folder when files the checkout holds outside git are in the way', async () => {
    writeFiles(backing, { '.gitignore': 'out/\n' });
    if (kind !== 'shadow') git(backing, 'add', '-A');
    const checkout = await open();
    const co = await checkout.mount();
    // The session's build output (ignored: no commit carries it), and a file something wrote outside any
    // turn (nothing marked the checkout dirty).
    writeFiles(co, { 'out/result.txt': 'session build\n', 'stray.txt': 'stray\n' });
    // The user stops ignoring out/ and has files of those names.
    writeFiles(backing, { '.gitignore': '', 'out/result.txt': 'user file\n', 'stray.txt': 'user stray\n' });
    await checkout.reset();
    expect(read(path.join(co, 'out/result.txt'))).toBe('user file\n');
    expect(read(path.join(co, 'stray.txt'))).toBe('user stray\n');
    expect(await checkout.uncommitted()).toEqual([]);
  });

  it('brings back a dependency link and an ignored copy the session removed or changed', async () => {
    writeFiles(backing, {
      '.gitignore': 'node_modules/\n.env\n',
      'node_modules/pkg/index.js': 'module.exports = 1;\n',
      '.env': 'KEY=backing\n',
    });
    if (kind !== 'shadow') git(backing, 'add', '-A');
    const checkout = await open();
    const co = await checkout.mount();
    // A view shows the backing folder's own dependency folder (nothing to link); a copy links it.
    expect(fs.lstatSync(path.join(co, 'node_modules')).isSymbolicLink()).toBe(kind !== 'view');
    expect(read(path.join(co, '.env'))).toBe('KEY=backing\n');
    fs.rmSync(path.join(co, 'node_modules'), { recursive: true });
    writeFiles(co, { '.env': 'KEY=session\n', 'src/a.txt': 'session\n' });
    Checkout.markDirty(location());
    await checkout.reset();
    expect(fs.lstatSync(path.join(co, 'node_modules')).isSymbolicLink()).toBe(kind !== 'view');
    expect(read(path.join(co, 'node_modules/pkg/index.js'))).toBe('module.exports = 1;\n');
    expect(read(path.join(co, '.env'))).toBe('KEY=backing\n');
    expect(read(path.join(co, 'src/a.txt'))).toBe('one\ntwo\nthree\n');
  });

  it('saves refreshed stat data of the checkout, so later scans do not hash unchanged files again', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    const index =
      kind !== 'shadow'
        ? path.join(gitCo('rev-parse', '--absolute-git-dir').trim(), 'index')
        : path.join(location().stateDir, 'checkout.index');
    // Every file's stat data moves (content unchanged): git has to read them all once to know that.
    const past = new Date(Date.now() - 3_600_000);
    for (const file of ['src/a.txt', 'README.md', 'bin/run.sh'])
      fs.utimesSync(path.join(co, file), past, past);
    Checkout.markDirty(location());
    const before = fs.statSync(index, { bigint: true }).mtimeNs;
    expect(await checkout.uncommitted()).toEqual([]);
    const saved = fs.statSync(index, { bigint: true }).mtimeNs;
    // A view's listing reads no stat cache of git's: its changed files are its upper layer's, hashed (viewTree.ts), and
    // its index is left as the reset made it, for the commit to build its tree the same way.
    if (kind === 'view') expect(saved).toBe(before);
    else expect(saved).not.toBe(before);
    expect(await checkout.uncommitted()).toEqual([]);
    expect(fs.statSync(index, { bigint: true }).mtimeNs).toBe(saved);
  });

  it('notices a backing index it did not write itself (a crash between staging and saving)', async () => {
    const checkout = await open();
    const co = await checkout.mount();
    writeFiles(backing, { 'staged-elsewhere.txt': 'x\n' });
    // Someone stages into the private index without Keel recording it: the next `add -A` stages nothing new.
    const index = path.join(location().stateDir, 'backing.index');
    const side =
      kind === 'shadow'
        ? { GIT_DIR: path.join(location().stateDir, 'shadow.git'), GIT_WORK_TREE: backing }
        : {};
    execFileSync('git', ['add', '-A'], {
      cwd: backing,
      env: { ...process.env, ...side, GIT_INDEX_FILE: index },
    });
    await checkout.reset();
    expect(read(path.join(co, 'staged-elsewhere.txt'))).toBe('x\n');
  });

  it("redacts a commit's diff with the .env values of the checkout: the backing's and the session's own ignored ones", async () => {
    writeFiles(backing, { '.gitignore': '.env*\n', '.env': 'BACKING_TOKEN=backing-value-5e1f9a7c3d\n' });
    if (kind !== 'shadow') git(backing, 'add', '-A');
    const checkout = await open();
    const co = await checkout.mount();
    // The session's .env (ignored: never committed, in a view only in its upper layer) and a file that leaks both.
    writeFiles(co, {
      'config/.env.local': 'SESSION_TOKEN=session-value-8b2c4e6a0f\n',
      'src/leak.ts': 'export const both = ["backing-value-5e1f9a7c3d", "session-value-8b2c4e6a0f"];\n',
    });
    Checkout.markDirty(location());
    const report = await checkout.commit(commitOptions());
    if (report.status !== 'committed') throw new Error(`expected a commit, got ${report.status}`);
    const diff = read(path.join(artifactsDir, report.diffArtifact)) ?? '';
    expect(diff).toContain('+export const both');
    expect(diff).not.toContain('backing-value-5e1f9a7c3d');
    expect(diff).not.toContain('session-value-8b2c4e6a0f');
    expect(diff).toContain('[REDACTED:BACKING_TOKEN]');
    expect(diff).toContain('[REDACTED:SESSION_TOKEN]');
  });

  it('writes nothing on a conflict, names the file and keeps the session version as a patch', async () => {
    const checkout = await open();
    writeFiles(await checkout.mount(), { 'src/a.txt': 'one\nsession\nthree\n', 'other.txt': 'mine\n' });
    Checkout.markDirty(location());
    writeFiles(backing, { 'src/a.txt': 'one\nuser\nthree\n' });
    const report = await checkout.commit(commitOptions());
    expect(report).toMatchObject({ status: 'conflict', conflicts: ['src/a.txt'] });
    expect(read(path.join(backing, 'src/a.txt'))).toBe('one\nuser\nthree\n');
    expect(fs.existsSync(path.join(backing, 'other.txt'))).toBe(false);
    if (report.status !== 'conflict') return;
    const patch = read(path.join(artifactsDir, report.patchArtifact)) ?? '';
    expect(patch).toContain('+session');
    expect(patch).toContain('+mine');
  });

  it('never follows a link the session planted when committing', async () => {
    const checkout = await open();
    const secret = path.join(dir, 'secret.txt');
    fs.writeFileSync(secret, 'do not copy\n');
    fs.symlinkSync(secret, path.join(await checkout.mount(), 'leak.txt'));
    Checkout.markDirty(location());
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('committed');
    expect(fs.lstatSync(path.join(backing, 'leak.txt')).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(path.join(backing, 'leak.txt'))).toBe(secret);
  });

  it('commits a re-pointed link as the link itself, leaving the file it pointed to alone', async () => {
    fs.symlinkSync('README.md', path.join(backing, 'link'));
    const checkout = await open();
    fs.unlinkSync(path.join(await checkout.mount(), 'link'));
    fs.symlinkSync('src/a.txt', path.join(await checkout.mount(), 'link'));
    Checkout.markDirty(location());
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('committed');
    expect(fs.readlinkSync(path.join(backing, 'link'))).toBe('src/a.txt');
    expect(fs.lstatSync(path.join(backing, 'README.md')).isFile()).toBe(true);
    expect(read(path.join(backing, 'README.md'))).toBe('hello\n');
  });
});

describe('the kind of checkout a backing folder gets', () => {
  it('is a shadow for a repository with no commit yet, and a worktree for one with a file named HEAD', async () => {
    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty);
    git(empty, 'init', '-q');
    writeFiles(empty, { 'a.txt': 'a\n' });
    // A copy even when KEEL_CHECKOUT_KIND forces the view: the backing decides which copy.
    const first = await unforced(() => Checkout.open(spec(empty), location('s1'), { kind: 'copy' }));
    expect(first.kind).toBe('shadow');
    const named = makeRepo(path.join(dir, 'named'), { HEAD: 'a file, not a revision\n' });
    const checkout = await unforced(() => Checkout.open(spec(named), location('s2'), { kind: 'copy' }));
    expect(checkout.kind).toBe('worktree');
    expect(read(path.join(location('s2').checkout, 'HEAD'))).toBe('a file, not a revision\n');
  });
});
