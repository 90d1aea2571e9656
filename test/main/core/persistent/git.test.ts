import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  diffTrees,
  gitProcessCount,
  snapshotCommit,
  stageCommitAndDiff,
} from '../../../../main/core/persistent/git.js';
import { git, makeRepo, makeTemp, read } from './support.js';

let dir: string;

beforeEach(() => {
  dir = makeTemp('keel-git-');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const headTree = (repo: string) => git(repo, 'rev-parse', 'HEAD^{tree}').trim();

describe('stageCommitAndDiff', () => {
  it('stages the named paths, commits the tree on its parent and lists and patches the change, in one process', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), {
      'x.txt': 'a\nb\n',
      'gone.txt': 'bye\n',
      'same.txt': 's\n',
    });
    fs.writeFileSync(path.join(repo, 'bin.dat'), Buffer.from([0, 1, 2, 0, 255]));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'binary');
    const from = headTree(repo);
    const parent = git(repo, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(repo, 'x.txt'), 'a\nB\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    fs.writeFileSync(path.join(repo, 'bin.dat'), Buffer.from([9, 0, 8]));
    fs.mkdirSync(path.join(repo, 'odd dir'));
    fs.writeFileSync(path.join(repo, 'odd dir', 'tab\tname "q".txt'), 'new\n');
    fs.symlinkSync('x.txt', path.join(repo, 'link'));
    const paths = ['x.txt', 'gone.txt', 'bin.dat', 'odd dir/tab\tname "q".txt', 'link'];
    const side = { cwd: repo, env: {} };
    const file = path.join(dir, 'out', 'change.patch');
    const started = gitProcessCount();
    const staged = stageCommitAndDiff(side, { paths, from, message: 'snapshot', parent, patchFile: file });
    const [tree, commit, changes] = await Promise.all([staged.tree, staged.commit, staged.changes]);
    await staged.written;
    expect(gitProcessCount() - started).toBe(1);
    expect(git(repo, 'rev-parse', `${commit}^{tree}`).trim()).toBe(tree);
    expect(git(repo, 'rev-parse', `${commit}^`).trim()).toBe(parent);
    // The index holds exactly the committed tree.
    expect(git(repo, 'diff', '--cached', '--name-only', commit ?? '')).toBe('');
    expect(changes).toEqual(await diffTrees(side, from, tree));
    expect(changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual([
      'A link',
      'A odd dir/tab\tname "q".txt',
      'D gone.txt',
      'M bin.dat',
      'M x.txt',
    ]);
    expect(read(file)).toBe(git(repo, 'diff-tree', '-p', '--binary', '--no-renames', from, tree));
  });

  it('splits a listing longer than one pipe read from the patch after it', async () => {
    // ~250 bytes of listing per path: 800 paths are several 64 KiB pipe reads.
    const folder = `${'a-rather-long-folder-name/'.repeat(5)}leaf`;
    const repo = makeRepo(path.join(dir, 'repo'), { 'seed.txt': 'x\n' });
    fs.mkdirSync(path.join(repo, folder), { recursive: true });
    const from = headTree(repo);
    const paths: string[] = [];
    for (let i = 0; i < 800; i++) {
      fs.writeFileSync(path.join(repo, folder, `file-${i}.txt`), `${i}\n`);
      paths.push(`${folder}/file-${i}.txt`);
    }
    const file = path.join(dir, 'big.patch');
    const staged = stageCommitAndDiff(
      { cwd: repo, env: {} },
      { paths, from, message: 'm', parent: '', patchFile: file },
    );
    expect(await staged.changes).toHaveLength(800);
    await staged.written;
    const tree = await staged.tree;
    expect(read(file)).toBe(git(repo, 'diff-tree', '-p', '--binary', '--no-renames', from, tree));
  });

  it('answers the tree alone when nothing changed or no commit was asked for, and writes no patch', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), { 'x.txt': 'a\n' });
    const from = headTree(repo);
    const file = path.join(dir, 'none.patch');
    const same = stageCommitAndDiff(
      { cwd: repo, env: {} },
      { paths: [], from, message: 'm', patchFile: file },
    );
    expect(await same.tree).toBe(from);
    expect(await same.commit).toBeUndefined();
    expect(await same.changes).toEqual([]);
    await same.written;
    expect(fs.existsSync(file)).toBe(false);
    fs.writeFileSync(path.join(repo, 'x.txt'), 'changed\n');
    const treeOnly = stageCommitAndDiff({ cwd: repo, env: {} }, { paths: ['x.txt'], from });
    expect(await treeOnly.tree).not.toBe(from);
    expect(await treeOnly.commit).toBeUndefined();
  });

  it('rejects with git words when a step fails', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), { 'x.txt': 'a\n' });
    fs.writeFileSync(path.join(repo, 'x.txt'), 'changed\n');
    const staged = stageCommitAndDiff(
      { cwd: repo, env: {} },
      { paths: ['x.txt'], from: 'f'.repeat(40), message: 'm', patchFile: path.join(dir, 'p') },
    );
    await expect(staged.changes).rejects.toThrow(/failed \(exit \d+\): .*f{40}/);
    await expect(staged.written).rejects.toThrow(/failed/);
  });
});

describe('snapshotCommit', () => {
  it('reuses the baseline, names the HEAD when its tree matches, and otherwise commits on HEAD or baseline', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), { 'x.txt': 'a\n' });
    const side = { cwd: repo, env: {} };
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    const tree = headTree(repo);
    const base = { baseline: '', baselineTree: '', message: 'snap' };
    expect(await snapshotCommit(side, { ...base, baseline: head, baselineTree: tree, onHead: true })).toEqual(
      { tree },
    );
    expect(await snapshotCommit(side, { ...base, onHead: true })).toEqual({ tree, head, commit: head });
    fs.writeFileSync(path.join(repo, 'x.txt'), 'b\n');
    git(repo, 'add', '-A');
    const started = gitProcessCount();
    const onHead = await snapshotCommit(side, { ...base, onHead: true });
    expect(gitProcessCount() - started).toBe(1);
    expect(onHead.head).toBe(head);
    expect(git(repo, 'rev-parse', `${onHead.commit}^`).trim()).toBe(head);
    expect(git(repo, 'rev-parse', `${onHead.commit}^{tree}`).trim()).toBe(onHead.tree);
    const known = await snapshotCommit(side, {
      ...base,
      tree,
      baseline: head,
      baselineTree: 'other',
      onHead: false,
    });
    expect(known.tree).toBe(tree);
    expect(git(repo, 'rev-parse', `${known.commit}^`).trim()).toBe(head);
    const first = await snapshotCommit(side, { ...base, onHead: false });
    expect(git(repo, 'rev-list', '--count', first.commit ?? '').trim()).toBe('1');
  });

  it('fails with git words for a repository without a commit when the snapshot goes on HEAD', async () => {
    const repo = path.join(dir, 'empty');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q');
    await expect(
      snapshotCommit({ cwd: repo, env: {} }, { baseline: '', baselineTree: '', onHead: true, message: 'm' }),
    ).rejects.toThrow(/rev-parse.*failed/);
  });
});
