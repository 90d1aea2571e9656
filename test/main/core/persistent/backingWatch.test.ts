// Issue #36: a snapshot of the backing folder staged from a watcher's changed paths (backingWatch.ts) instead of a
// stat pass over the whole folder. Real folders, real inotify, real git: after each kind of change a user or a build
// makes, the watched snapshot's tree is the tree a full `add -A` from an empty index gives, and what the watcher
// cannot vouch for (lost events, changed ignore rules, another watcher) makes the snapshot a full pass.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  backingChanges,
  stopWatching,
  watchAhead,
  watchBackingFolders,
  watchedReady,
} from '../../../../main/core/persistent/backingWatch.js';
import { mountsInside } from '../../../../main/sandbox/overlayInUse.js';
import { lastWatchedStaging } from '../../../../main/core/persistent/watchedStaging.js';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import { folderTree, lastFolderTreeWatched } from '../../../../main/core/persistent/directChanges.js';
import { lastSnapshotWay } from '../../../../main/core/persistent/snapshot.js';
import { copyIndexFile, readState } from '../../../../main/core/persistent/state.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { git, makeRepo, makeTemp, unforced, writeFiles, projectLocation } from './support.js';

let dir: string;
let backing: string;

const location = (): CheckoutLocation => projectLocation(dir);
const spec = (): PersistentDirSpec => ({ name: 'project', path: backing, commit: 'auto' });

beforeAll(() => watchBackingFolders(true));
afterAll(() => watchBackingFolders(false));

beforeEach(() => {
  dir = makeTemp('keel-watch-');
  const files: Record<string, string> = {
    '.gitignore': 'dist/\n*.log\n',
    'README.md': 'hello\n',
  };
  for (let d = 0; d < 6; d++)
    for (let f = 0; f < 4; f++) files[`src/d${d}/sub/f${f}.ts`] = `export const v${d}${f} = ${f};\n`;
  backing = makeRepo(path.join(dir, 'backing'), files);
  fs.mkdirSync(path.join(backing, 'dist'));
  fs.writeFileSync(path.join(backing, 'dist', 'kept.js'), 'kept\n');
  git(backing, 'add', '-f', 'dist/kept.js');
  git(backing, 'commit', '-qm', 'a tracked file in an ignored folder');
});

afterEach(() => {
  stopWatching(backing);
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The tree a full `add -A` of the backing folder gives from the repository's own index (what the private index starts
 * from: a file it tracks stays tracked though ignored), with the checkout's excludes.
 */
function fullPassTree(): string {
  const index = path.join(dir, 'truth.index');
  copyIndexFile(path.join(backing, '.git', 'index'), index);
  const env = { ...process.env, GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1' };
  const excludes = ['-c', `core.excludesFile=${path.join(location().stateDir, 'exclude')}`];
  execFileSync('git', [...excludes, 'add', '-A'], { cwd: backing, env });
  return execFileSync('git', ['write-tree'], { cwd: backing, env, encoding: 'utf8' }).trim();
}

/** A copy checkout of the backing folder (the snapshot is the same for every kind), reset once watched. */
async function watchedCheckout(): Promise<Checkout> {
  const checkout = await unforced(() => Checkout.open(spec(), location(), { kind: 'copy' }));
  // The first snapshot of this process is a full pass (it starts the watcher); the next one is watched.
  await checkout.reset();
  return checkout;
}

/** Resets the checkout and returns its snapshot's tree and how the snapshot was taken. */
async function snapshotAfter(checkout: Checkout): Promise<{ tree: string; way: typeof lastSnapshotWay }> {
  await checkout.reset();
  const state = readState(location().stateDir);
  return { tree: state?.baselineTree ?? '', way: lastSnapshotWay };
}

const at = (rel: string) => path.join(backing, rel);

describe('a watched snapshot', () => {
  it('stages only the changed paths and its tree is always the full pass tree', async () => {
    const checkout = await watchedCheckout();
    const steps: [string, () => void][] = [
      ['nothing changed', () => undefined],
      ['a deep file changed', () => fs.writeFileSync(at('src/d1/sub/f2.ts'), 'changed\n')],
      [
        'a new folder tree made in one go',
        () =>
          writeFiles(backing, { 'lib/a/b/c/one.ts': '1\n', 'lib/a/b/two.ts': '2\n', 'lib/three.ts': '3\n' }),
      ],
      ['a file inside the new tree changed', () => fs.writeFileSync(at('lib/a/b/c/one.ts'), 'one again\n')],
      ['a tracked file deleted', () => fs.rmSync(at('src/d0/sub/f0.ts'))],
      ['a folder of tracked files deleted', () => fs.rmSync(at('src/d2'), { recursive: true })],
      ['a folder renamed', () => fs.renameSync(at('src/d3'), at('src/moved'))],
      ['a file in the renamed folder changed', () => fs.writeFileSync(at('src/moved/sub/f1.ts'), 'moved\n')],
      [
        'a folder replaced by a file, a file by a folder',
        () => {
          fs.rmSync(at('src/d4/sub'), { recursive: true });
          fs.writeFileSync(at('src/d4/sub'), 'now a file\n');
          fs.rmSync(at('README.md'));
          writeFiles(backing, { 'README.md/inside.md': 'now a folder\n' });
        },
      ],
      ['a file made executable', () => fs.chmodSync(at('src/d5/sub/f3.ts'), 0o755)],
      ['a link made', () => fs.symlinkSync('src/d5/sub/f0.ts', at('link.ts'))],
      [
        'ignored files written, a tracked one in an ignored folder changed',
        () => {
          fs.writeFileSync(at('build.log'), 'noise\n');
          fs.writeFileSync(at('dist/bundle.js'), 'out\n');
          fs.writeFileSync(at('dist/kept.js'), 'kept, changed\n');
        },
      ],
      [
        'a file made and removed before the snapshot',
        () => {
          fs.writeFileSync(at('src/d5/brief.ts'), 'brief\n');
          fs.rmSync(at('src/d5/brief.ts'));
        },
      ],
      [
        'a folder removed and made again, with a file in it',
        () => {
          fs.rmSync(at('src/d5'), { recursive: true });
          writeFiles(backing, { 'src/d5/again.ts': 'again\n' });
        },
      ],
      ['a file in the folder made again changed', () => fs.writeFileSync(at('src/d5/again.ts'), 'changed\n')],
      [
        "a folder's .gitignore now ignores a file it holds",
        () => {
          fs.writeFileSync(at('src/d1/sub/.gitignore'), 'f3.ts\n');
        },
      ],
      [
        'a repository made inside the folder, then committed to',
        () => {
          makeRepo(at('vendor/lib'), { 'x.ts': 'x\n' });
        },
      ],
      [
        'the nested repository committed again (its HEAD moved, no file of the project changed)',
        () => {
          fs.writeFileSync(at('vendor/lib/x.ts'), 'x2\n');
          git(at('vendor/lib'), 'commit', '-qam', 'again');
        },
      ],
    ];
    const staging = new Map<string, typeof lastWatchedStaging>();
    for (const [what, change] of steps) {
      change();
      const { tree, way } = await snapshotAfter(checkout);
      expect({ what, way: way.watched }).toEqual({ what, way: true });
      expect({ what, tree }).toEqual({ what, tree: fullPassTree() });
      staging.set(what, lastWatchedStaging);
    }
    // Files and links alone go through `update-index` (no pathspec matched against every entry); a folder through `add`.
    expect(
      [
        'a deep file changed',
        'a tracked file deleted',
        'a file made executable',
        'a link made',
        'ignored files written, a tracked one in an ignored folder changed',
      ].map((what) => staging.get(what)),
    ).toEqual(Array(5).fill('update-index'));
    expect(
      ['a new folder tree made in one go', 'a folder of tracked files deleted', 'a folder renamed'].map(
        (what) => staging.get(what),
      ),
    ).toEqual(Array(3).fill('add'));
  });

  it('sees a change made just before the snapshot: every event before it is counted first', async () => {
    const checkout = await watchedCheckout();
    for (let round = 0; round < 5; round++) {
      fs.writeFileSync(at(`src/d${round}/sub/f1.ts`), `round ${round}\n`);
      const { tree, way } = await snapshotAfter(checkout);
      expect(way).toEqual({ watched: true, paths: 1 });
      expect(tree).toBe(fullPassTree());
    }
  });

  it('takes a full pass when it cannot vouch: ignore rules changed, another watcher, events lost', async () => {
    const checkout = await watchedCheckout();
    fs.appendFileSync(path.join(backing, '.git', 'info', 'exclude'), 'src/d0/\n');
    let taken = await snapshotAfter(checkout);
    expect(taken.way).toEqual({ watched: false, why: 'the ignore rules changed' });
    expect(taken.tree).toBe(fullPassTree());

    fs.appendFileSync(at('.gitignore'), 'README.md\n');
    taken = await snapshotAfter(checkout);
    expect(taken.way).toEqual({ watched: false, why: 'the top .gitignore changed' });
    expect(taken.tree).toBe(fullPassTree());

    // Another watcher (a new process, or this one after its watcher stopped) never vouches for the last snapshot.
    stopWatching(backing);
    taken = await snapshotAfter(checkout);
    expect(taken.way).toEqual({ watched: false, why: 'the folder was not watched yet' });
    taken = await snapshotAfter(checkout);
    expect(taken.way).toEqual({ watched: true, paths: 0 });

    // A burst as long as the overflow mark (here 50 events; inotify's queue holds 16,384) voids the watcher: events
    // beyond the queue are dropped without a word from Node.
    stopWatching(backing);
    watchBackingFolders(true, { overflowAt: 50 });
    try {
      await snapshotAfter(checkout);
      for (let i = 0; i < 60; i++) fs.writeFileSync(at(`src/d1/sub/burst${i}.ts`), `${i}\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      taken = await snapshotAfter(checkout);
      expect(taken.way.watched).toBe(false);
      expect(taken.way.watched ? '' : (taken.way.why ?? '')).toMatch(/events came at once/);
      expect(taken.tree).toBe(fullPassTree());
    } finally {
      watchBackingFolders(true);
    }
  });

  it('is a full pass when the private index is not the one the last snapshot left', async () => {
    const checkout = await watchedCheckout();
    const index = path.join(location().stateDir, 'backing.index');
    // Something else rewrote the private index (a crash mid-snapshot, an older Keel): its stamp no longer matches.
    fs.copyFileSync(index, `${index}.copy`);
    fs.renameSync(`${index}.copy`, index);
    fs.writeFileSync(at('src/d1/sub/f0.ts'), 'after the rewrite\n');
    const taken = await snapshotAfter(checkout);
    expect(taken.way.watched).toBe(false);
    expect(taken.tree).toBe(fullPassTree());
  });

  it('is never used when the process does not watch (a one-turn keel run)', async () => {
    watchBackingFolders(false);
    try {
      const checkout = await watchedCheckout();
      fs.writeFileSync(at('src/d1/sub/f0.ts'), 'unwatched\n');
      const taken = await snapshotAfter(checkout);
      expect(taken.way).toEqual({ watched: false });
      expect(taken.tree).toBe(fullPassTree());
    } finally {
      watchBackingFolders(true);
    }
  });
});

describe('a folder the watcher refuses (every snapshot a full pass)', () => {
  it('holds a name that is not UTF-8 (events could not name it)', async () => {
    fs.writeFileSync(Buffer.from(`${at('src/d2/sub')}/caf\xe9.ts`, 'latin1'), 'latin-1 name\n');
    watchBackingFolders(false);
    try {
      watchAhead(backing);
      expect(await watchedReady(backing)).toBe(false);
      const found = await backingChanges(backing, undefined, 'stamp');
      expect(found).toEqual({ mark: undefined, paths: undefined, why: 'a name in it is not UTF-8' });
    } finally {
      watchBackingFolders(true);
    }
  });

  it('has another filesystem mounted inside (its first walk lists folders without an lstat of each)', () => {
    // /proc/self/mountinfo's lines: the mount point is the fifth field, a space in it written \040.
    const table = [
      '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      '98 22 0:45 / /home/me/work\\040tree/cache rw - tmpfs tmpfs rw',
      '99 22 0:46 / /home/me/work\\040treeside rw - tmpfs tmpfs rw',
    ].join('\n');
    expect(mountsInside('/home/me/work tree', table)).toBe('cache');
    expect(mountsInside('/home/me/other', table)).toBeUndefined();
    // The root itself mounted (a project on its own disk) is no mount inside it; a sibling sharing its prefix neither.
    expect(mountsInside('/home/me/work tree/cache', table)).toBeUndefined();
    expect(mountsInside('/proc/self', fs.readFileSync('/proc/self/mountinfo', 'utf8'))).toBeUndefined();
  });
});

describe("a --commit direct turn's folder trees", () => {
  it('stage only what changed once watched, and are the full pass tree', async () => {
    const stateDir = path.join(dir, 'direct');
    const gitDir = path.join(backing, '.git');
    /** The full pass from the repository's index, with the direct turn's excludes (dependency folders). */
    const truth = () => {
      const index = path.join(dir, 'direct-truth.index');
      copyIndexFile(path.join(gitDir, 'index'), index);
      const env = { ...process.env, GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1' };
      const excludes = ['-c', `core.excludesFile=${path.join(stateDir, 'exclude')}`];
      execFileSync('git', [...excludes, 'add', '-A'], { cwd: backing, env });
      return execFileSync('git', ['write-tree'], { cwd: backing, env, encoding: 'utf8' }).trim();
    };
    expect(await folderTree(stateDir, backing, 'repository', gitDir)).toBe(truth());
    expect(lastFolderTreeWatched).toBe(false);
    const steps: (() => void)[] = [
      () => fs.writeFileSync(at('src/d1/sub/f1.ts'), 'direct\n'),
      () => writeFiles(backing, { 'node_modules/pkg/index.js': 'a dependency\n', 'fresh/new.ts': 'new\n' }),
      () => fs.rmSync(at('src/d2'), { recursive: true }),
      () => undefined,
    ];
    for (const step of steps) {
      step();
      // A segment's start (what changed since the last tree is the user's and the last turn's): watched. The record
      // of the last tree names the git folder.
      expect(await folderTree(stateDir, backing, 'repository')).toBe(truth());
      expect(lastFolderTreeWatched).toBe(true);
    }
    // A segment's end (what the turn's own commands did): watched too where writes through shared memory maps are
    // (closeWrites.test.ts has those writes and the machines without it).
    fs.writeFileSync(at('src/d3/sub/f0.ts'), 'by a command\n');
    expect(await folderTree(stateDir, backing, 'repository', undefined, { end: true })).toBe(truth());
    expect(lastFolderTreeWatched).toBe(true);
    // Its mark still serves the next start.
    fs.writeFileSync(at('src/d3/sub/f1.ts'), 'by the user\n');
    expect(await folderTree(stateDir, backing, 'repository')).toBe(truth());
    expect(lastFolderTreeWatched).toBe(true);
  });
});

describe('the overflow rule', () => {
  it("rests on the watcher being the only fs.watch of Keel's process: no other file of main/ watches", () => {
    // Another watcher's events would share the inotify queue without being counted, so a lost event could go unseen.
    const root = path.resolve(__dirname, '../../../../main');
    const watching: string[] = [];
    const visit = (folder: string): void => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) visit(full);
        else if (
          /\.tsx?$/.test(entry.name) &&
          /\bfs\.watch\(|\bwatch\(\s*[^)]*persistent|chokidar/.test(fs.readFileSync(full, 'utf8'))
        )
          watching.push(path.relative(root, full));
      }
    };
    visit(root);
    expect(watching).toEqual(['core/persistent/backingWatch.ts']);
  });
});
