import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diffTrees, diffTreesWithPatch } from '../../../../main/core/persistent/git.js';
import { git, makeRepo, makeTemp, read } from './support.js';

let dir: string;

beforeEach(() => {
  dir = makeTemp('keel-git-');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Stages everything in `repo` and returns the index's tree. */
function treeOf(repo: string): string {
  git(repo, 'add', '-A');
  return git(repo, 'write-tree').trim();
}

describe('diffTreesWithPatch', () => {
  it('lists the same changes as diffTrees and writes the same patch as a separate diff-tree -p', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), { 'x.txt': 'a\nb\n', 'gone.txt': 'bye\n' });
    fs.writeFileSync(path.join(repo, 'bin.dat'), Buffer.from([0, 1, 2, 0, 255]));
    const from = treeOf(repo);
    fs.writeFileSync(path.join(repo, 'x.txt'), 'a\nB\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    fs.writeFileSync(path.join(repo, 'bin.dat'), Buffer.from([9, 0, 8]));
    fs.mkdirSync(path.join(repo, 'odd dir'));
    fs.writeFileSync(path.join(repo, 'odd dir', 'tab\tname "q".txt'), 'new\n');
    fs.symlinkSync('x.txt', path.join(repo, 'link'));
    const to = treeOf(repo);
    const side = { cwd: repo, env: {} };
    const file = path.join(dir, 'out', 'change.patch');
    const both = diffTreesWithPatch(side, from, to, file);
    const changes = await both.changes;
    await both.written;
    expect(changes).toEqual(await diffTrees(side, from, to));
    expect(changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual([
      'A link',
      'A odd dir/tab\tname "q".txt',
      'D gone.txt',
      'M bin.dat',
      'M x.txt',
    ]);
    expect(read(file)).toBe(git(repo, 'diff-tree', '-p', '--binary', '--no-renames', from, to));
  });

  it('splits a listing longer than one pipe read from the patch after it', async () => {
    // ~250 bytes of listing per path: 800 paths are several 64 KiB pipe reads.
    const folder = `${'a-rather-long-folder-name/'.repeat(5)}leaf`;
    const repo = makeRepo(path.join(dir, 'repo'), { 'seed.txt': 'x\n' });
    fs.mkdirSync(path.join(repo, folder), { recursive: true });
    const from = treeOf(repo);
    for (let i = 0; i < 800; i++) fs.writeFileSync(path.join(repo, folder, `file-${i}.txt`), `${i}\n`);
    const to = treeOf(repo);
    const side = { cwd: repo, env: {} };
    const file = path.join(dir, 'big.patch');
    const both = diffTreesWithPatch(side, from, to, file);
    expect(await both.changes).toHaveLength(800);
    await both.written;
    expect(read(file)).toBe(git(repo, 'diff-tree', '-p', '--binary', '--no-renames', from, to));
  });

  it('rejects both answers with git words when a tree does not exist', async () => {
    const repo = makeRepo(path.join(dir, 'repo'), { 'x.txt': 'a\n' });
    const both = diffTreesWithPatch(
      { cwd: repo, env: {} },
      '0'.repeat(40),
      treeOf(repo),
      path.join(dir, 'p'),
    );
    await expect(both.changes).rejects.toThrow(/git diff-tree/);
    await expect(both.written).rejects.toThrow(/git diff-tree/);
  });
});
