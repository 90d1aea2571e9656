// Issue #36: a --commit direct segment's end tree from the watcher, with writes through a shared memory map seen
// (closeWrites.ts). Real inotify, real git, a real process writing through mmap(2) (Python's mmap module: a
// MAP_SHARED, PROT_WRITE mapping): such a write sends no event fs.watch asks for; the file's release sends
// IN_CLOSE_WRITE, and a mapping still held when the tree is made is found in the process's maps. Every end tree is
// compared with the full pass's.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stopWatching, watchBackingFolders } from '../../../../main/core/persistent/backingWatch.js';
import { closeWritesEnabled, mappedForWriting } from '../../../../main/core/persistent/closeWrites.js';
import { folderTree, lastFolderTreeWatched } from '../../../../main/core/persistent/directChanges.js';
import { copyIndexFile } from '../../../../main/core/persistent/state.js';
import { makeRepo, makeTemp } from './support.js';

let dir: string;
let backing: string;
let stateDir: string;
let holder: ChildProcess | undefined;

/** Writes `text` over the start of `file` through a shared writable mapping, closing the descriptor first. */
const MMAP_WRITER = [
  'import mmap, os, sys',
  'fd = os.open(sys.argv[1], os.O_RDWR)',
  'm = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)',
  'os.close(fd)',
  'data = sys.argv[2].encode()',
  'm[0:len(data)] = data',
  "if sys.argv[3] == 'hold':",
  "    print('written', flush=True)",
  '    sys.stdin.read()',
  'm.close()',
].join('\n');

const at = (rel: string) => path.join(backing, rel);

/** A process that writes through a mapping and exits (its mapping released). Same length: a mapping cannot grow. */
function mmapWrite(rel: string, text: string): void {
  expect(text.length).toBe(fs.readFileSync(at(rel), 'utf8').length);
  execFileSync('python3', ['-c', MMAP_WRITER, at(rel), text, 'exit']);
}

/**
 * A process that writes through a mapping and keeps it until its stdin closes: in a pid namespace of its own, as a
 * box's process is (bwrap), since only those are looked at.
 */
async function mmapWriteAndHold(rel: string, text: string): Promise<ChildProcess> {
  const boxed = ['--dev-bind', '/', '/', '--unshare-pid', '--die-with-parent'];
  const child = spawn('bwrap', [...boxed, 'python3', '-c', MMAP_WRITER, at(rel), text, 'hold'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('written')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the writer exited (${code})`)));
  });
  return child;
}

async function release(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin?.end();
  await exited;
}

/** The full pass from the repository's index, with the direct turn's excludes. */
function truth(): string {
  const index = path.join(dir, 'truth.index');
  copyIndexFile(path.join(backing, '.git', 'index'), index);
  const env = { ...process.env, GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1' };
  const excludes = ['-c', `core.excludesFile=${path.join(stateDir, 'exclude')}`];
  execFileSync('git', [...excludes, 'add', '-A'], { cwd: backing, env });
  return execFileSync('git', ['write-tree'], { cwd: backing, env, encoding: 'utf8' }).trim();
}

/** The blob a tree holds at `rel`, as text. */
function inTree(tree: string, rel: string): string {
  return execFileSync('git', ['cat-file', 'blob', `${tree}:${rel}`], { cwd: backing, encoding: 'utf8' });
}

const start = () => folderTree(stateDir, backing, 'repository', path.join(backing, '.git'));
const end = () => folderTree(stateDir, backing, 'repository', undefined, { end: true });

beforeAll(() => watchBackingFolders(true));
afterAll(() => watchBackingFolders(false));

beforeEach(async () => {
  dir = makeTemp('keel-close-');
  const files: Record<string, string> = { 'README.md': 'hello\n' };
  for (let d = 0; d < 3; d++) files[`src/d${d}/f.ts`] = `export const v${d} = 0;\n`;
  backing = makeRepo(path.join(dir, 'backing'), files);
  stateDir = path.join(dir, 'direct');
  // The first tree starts the watcher (a full pass); from the second on a start is staged from its events.
  await start();
});

afterEach(async () => {
  if (holder !== undefined && holder.exitCode === null) await release(holder);
  holder = undefined;
  closeWritesEnabled(true);
  stopWatching(backing);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a direct segment's end tree", () => {
  it('is staged from the watcher and holds a write a process made through a mapping it released', async () => {
    const before = await start();
    expect(lastFolderTreeWatched).toBe(true);
    mmapWrite('src/d1/f.ts', 'export const v1 = 7;\n');
    const after = await end();
    expect(lastFolderTreeWatched).toBe(true);
    expect(after).toBe(truth());
    expect(inTree(after, 'src/d1/f.ts')).toBe('export const v1 = 7;\n');
    expect(after).not.toBe(before);
  });

  it('holds what a mapping still held wrote (found in the live process maps), and the release is seen later', async () => {
    await start();
    holder = await mmapWriteAndHold('src/d2/f.ts', 'export const v2 = 5;\n');
    expect(mappedForWriting(backing)).toEqual(['src/d2/f.ts']);
    const after = await end();
    expect(lastFolderTreeWatched).toBe(true);
    expect(after).toBe(truth());
    expect(inTree(after, 'src/d2/f.ts')).toBe('export const v2 = 5;\n');
    await release(holder);
    expect(mappedForWriting(backing)).toEqual([]);
    // Nothing changed after the tree: the next start, staged from the release's event, is the same tree.
    expect(await start()).toBe(after);
    expect(lastFolderTreeWatched).toBe(true);
  });

  it("looks only at boxes' processes (a pid namespace of their own), not Keel's own helpers", async () => {
    const own = spawn('python3', ['-c', MMAP_WRITER, at('src/d0/f.ts'), 'export const v0 = 4;', 'hold'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    holder = own;
    await new Promise<void>((resolve) => own.stdout.once('data', () => resolve()));
    expect(mappedForWriting(backing)).toEqual([]);
    await release(own);
  });

  it('sees writes in a folder renamed since it was watched, under its new name', async () => {
    fs.renameSync(at('src/d0'), at('src/moved'));
    expect(await start()).toBe(truth());
    expect(lastFolderTreeWatched).toBe(true);
    mmapWrite('src/moved/f.ts', 'export const v0 = 9;\n');
    const after = await end();
    expect(lastFolderTreeWatched).toBe(true);
    expect(after).toBe(truth());
    expect(inTree(after, 'src/moved/f.ts')).toBe('export const v0 = 9;\n');
  });

  it('is the full pass when a changed file has a second name, whose change no event names', async () => {
    // A link made in an earlier segment, then a write through one name: the other name's folder has no event.
    fs.linkSync(at('src/d0/f.ts'), at('src/twin.ts'));
    expect(await start()).toBe(truth());
    expect(lastFolderTreeWatched).toBe(true);
    fs.writeFileSync(at('src/twin.ts'), 'export const w = 1;\n');
    const after = await end();
    expect(lastFolderTreeWatched).toBe(false);
    expect(after).toBe(truth());
    expect(inTree(after, 'src/d0/f.ts')).toBe('export const w = 1;\n');
    // A folder made in the segment holding a second name of a file elsewhere, written through it.
    await start();
    fs.mkdirSync(at('src/made'));
    fs.linkSync(at('src/d1/f.ts'), at('src/made/a.ts'));
    fs.writeFileSync(at('src/made/a.ts'), 'export const m = 2;\n');
    const made = await end();
    expect(lastFolderTreeWatched).toBe(false);
    expect(made).toBe(truth());
    expect(inTree(made, 'src/d1/f.ts')).toBe('export const m = 2;\n');
  });

  it('is the full pass where files closed after writing cannot be watched (no libc binding)', async () => {
    stopWatching(backing);
    closeWritesEnabled(false);
    await start();
    await start();
    expect(lastFolderTreeWatched).toBe(true);
    mmapWrite('src/d1/f.ts', 'export const v1 = 3;\n');
    const after = await end();
    expect(lastFolderTreeWatched).toBe(false);
    expect(after).toBe(truth());
    expect(inTree(after, 'src/d1/f.ts')).toBe('export const v1 = 3;\n');
  });
});
