// Issue #36: a view's commit builds the session's tree from the changed paths (viewTree.ts) instead of staging them in
// the view's 7 MB index. Real overlay, real git: the tree it commits is the tree `git add -A` gives for the same
// changes made in a plain copy of the project, and wherever this way cannot answer exactly (a link, an index the
// model's git wrote), the commit stages through the index as before, with the same result.
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stopWatching, watchBackingFolders } from '../../../../main/core/persistent/backingWatch.js';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import { sharedPartOf, splitIndexesFrom } from '../../../../main/core/persistent/sharedIndex.js';
import { fileStamp, readState } from '../../../../main/core/persistent/state.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { boxesOnView, stopAllViews } from '../../../../main/core/persistent/viewHolder.js';
import {
  git,
  ignoreForcedKind,
  makeRepo,
  makeTemp,
  overlayHere,
  writeFiles,
  projectLocation,
  gitInViewRun,
  boxOnView,
} from './support.js';

ignoreForcedKind();

let dir: string;
let backing: string;
let skip: string | undefined;

beforeEach(async () => {
  dir = makeTemp('keel-view-tree-');
  const files: Record<string, string> = { '.gitignore': 'dist/\n*.log\n', 'README.md': 'hello\n' };
  for (let d = 0; d < 4; d++)
    for (let f = 0; f < 3; f++) files[`src/d${d}/deep/f${f}.ts`] = `export const v = ${d}${f};\n`;
  files['tool.sh'] = 'echo tool\n';
  backing = makeRepo(path.join(dir, 'backing'), files);
  fs.chmodSync(path.join(backing, 'tool.sh'), 0o755);
  fs.symlinkSync('README.md', path.join(backing, 'readme-link'));
  fs.mkdirSync(path.join(backing, 'dist'));
  fs.writeFileSync(path.join(backing, 'dist', 'kept.js'), 'kept\n');
  git(backing, 'add', '-A');
  git(backing, 'add', '-f', 'dist/kept.js');
  git(backing, 'commit', '-qm', 'mode, link, a tracked file in an ignored folder');
  const support = await overlayHere();
  skip = support.available ? undefined : support.reason;
});

afterEach(async () => {
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

const location = (): CheckoutLocation => projectLocation(dir);
const spec = (): PersistentDirSpec => ({ name: 'project', path: backing, commit: 'auto' });

/** The tree `git add -A` gives after `change` is made in a plain copy of the project as it is now. */
function plainCopyTree(change: (root: string) => void): string {
  const copy = path.join(dir, `copy-${Date.now()}-${Math.random()}`);
  execFileSync('cp', ['-a', backing, copy]);
  change(copy);
  git(copy, 'add', '-A');
  return git(copy, 'write-tree').trim();
}

/** Makes `change` in a new view of the project and commits it: the committed tree and whether the view kept its index. */
async function commitInView(
  change: (root: string) => void,
  before: (checkout: Checkout) => void | Promise<void> = () => undefined,
): Promise<{ tree: string; viewIndexKept: boolean }> {
  const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
  expect(checkout.kind).toBe('view');
  const root = await checkout.mount();
  change(root);
  await before(checkout);
  Checkout.markDirty(location());
  const report = await checkout.commit({ artifactsDir: path.join(dir, 'artifacts'), artifactStem: 'c' });
  expect(report.status === 'conflict' ? report.conflicts : report.status).toBe('committed');
  const state = readState(location().stateDir);
  return {
    tree: state?.baselineTree ?? '',
    viewIndexKept: fs.existsSync(path.join(state?.gitDir ?? '', 'index')),
  };
}

/** Makes `change` in a new view and commits it, expecting a conflict: what it named, its patch, its index untouched. */
async function conflictInView(
  change: (root: string) => void,
): Promise<{ conflicts: string[]; patch: string; indexUntouched: boolean }> {
  const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
  const root = await checkout.mount();
  const index = path.join(readState(location().stateDir)?.gitDir ?? '', 'index');
  const before = fileStamp(index);
  change(root);
  Checkout.markDirty(location());
  const report = await checkout.commit({ artifactsDir: path.join(dir, 'artifacts'), artifactStem: 'c' });
  if (report.status !== 'conflict') throw new Error(`the commit was ${report.status}, not a conflict`);
  const patch = fs.readFileSync(path.join(dir, 'artifacts', report.patchArtifact), 'utf8');
  return { conflicts: report.conflicts, patch, indexUntouched: fileStamp(index) === before };
}

/** The patch part of `diff-tree -p` from the project's tree to `tree` (what a commit's patch artifact holds). */
function patchOf(tree: string): string {
  const from = git(backing, 'rev-parse', 'HEAD^{tree}').trim();
  return git(backing, 'diff-tree', '-r', '-p', '--binary', '--no-renames', from, tree);
}

const at = (root: string, rel: string) => path.join(root, rel);

/** Every kind of change a commit writes into the project: edits, new folders, deletions, modes, ignored files. */
const contentChanges = (root: string): void => {
  writeFiles(root, {
    'src/d0/deep/f1.ts': 'changed\n',
    'lib/new/tree/one.ts': 'one\n',
    'lib/two.ts': 'two\n',
    // Beside folder d0: git sorts a folder as its name and a slash, after `d0.ts`.
    'src/d0.ts': 'a file named as a folder with a dot\n',
    'build.log': 'ignored, not committed\n',
    'dist/bundle.js': 'ignored, not committed\n',
    'dist/kept.js': 'tracked though ignored: committed\n',
  });
  fs.rmSync(at(root, 'src/d1/deep/f0.ts'));
  // A whole folder goes (its parent then holds nothing else of it).
  fs.rmSync(at(root, 'src/d2'), { recursive: true });
  fs.chmodSync(at(root, 'src/d0/deep/f2.ts'), 0o755);
  fs.chmodSync(at(root, 'tool.sh'), 0o644);
};

/** A folder replaced by a file of its name, a file by a folder (a commit names them as conflicts: merge.ts). */
const replacements = (root: string): void => {
  fs.rmSync(at(root, 'src/d3/deep'), { recursive: true });
  fs.writeFileSync(at(root, 'src/d3/deep'), 'now a file\n');
  fs.rmSync(at(root, 'README.md'));
  writeFiles(root, { 'README.md/inside.md': 'now a folder\n' });
};

const relink = (root: string): void => {
  fs.rmSync(at(root, 'readme-link'));
  fs.symlinkSync('tool.sh', at(root, 'readme-link'));
};

describe("a view's commit", () => {
  it('builds the tree git would stage, for every kind of change, without its index', async (context) => {
    if (skip !== undefined) context.skip();
    const truth = plainCopyTree(contentChanges);
    const { tree, viewIndexKept } = await commitInView(contentChanges);
    expect(tree).toBe(truth);
    // Built without the view's index, which then held the old baseline: dropped, the next reset installs one.
    expect(viewIndexKept).toBe(false);
    // The project has exactly the session's tree now (what the commit wrote), the ignored files not among it.
    expect(plainCopyTree(() => undefined)).toBe(truth);
    expect(fs.existsSync(path.join(backing, 'build.log'))).toBe(false);
  });

  it("lists what is uncommitted without writing the view's index, so the commit after still builds its tree", async (context) => {
    if (skip !== undefined) context.skip();
    const truth = plainCopyTree(contentChanges);
    const { tree, viewIndexKept } = await commitInView(contentChanges, async (checkout) => {
      const index = path.join(readState(location().stateDir)?.gitDir ?? '', 'index');
      const before = fileStamp(index);
      // A review's list mid-turn (the app's Changes view): the turn's tools marked the view dirty.
      Checkout.markDirty(location());
      const listed = (await checkout.uncommitted()).map((file) => `${file.status} ${file.path}`);
      expect(listed.sort()).toEqual(
        [
          'deleted src/d1/deep/f0.ts',
          'deleted src/d2/deep/f0.ts',
          'deleted src/d2/deep/f1.ts',
          'deleted src/d2/deep/f2.ts',
          'added lib/new/tree/one.ts',
          'added lib/two.ts',
          'added src/d0.ts',
          'modified dist/kept.js',
          'modified src/d0/deep/f1.ts',
          'modified src/d0/deep/f2.ts',
          'modified tool.sh',
        ].sort(),
      );
      expect(fileStamp(index)).toBe(before);
    });
    expect(tree).toBe(truth);
    expect(viewIndexKept).toBe(false);
  });

  it('builds the tree of files replaced by folders and folders by files (a conflict: its patch is that tree)', async (context) => {
    if (skip !== undefined) context.skip();
    const both = (root: string) => {
      contentChanges(root);
      replacements(root);
    };
    const truth = plainCopyTree(both);
    const report = await conflictInView(both);
    expect(report.conflicts).toEqual(['README.md/inside.md', 'src/d3/deep']);
    // The view's index was not written (no update-index): the tree was built without it.
    expect(report.indexUntouched).toBe(true);
    expect(report.patch).toBe(patchOf(truth));
  });

  it('stages through the index where it cannot answer exactly: a link changed', async (context) => {
    if (skip !== undefined) context.skip();
    const changes = (root: string) => {
      contentChanges(root);
      relink(root);
    };
    const truth = plainCopyTree(changes);
    const { tree, viewIndexKept } = await commitInView(changes);
    expect(tree).toBe(truth);
    expect(viewIndexKept).toBe(true);
  });

  it('stages replacements through the index too (update-index --replace): the same conflict and patch', async (context) => {
    if (skip !== undefined) context.skip();
    const changes = (root: string) => {
      contentChanges(root);
      replacements(root);
      relink(root);
    };
    const truth = plainCopyTree(changes);
    const report = await conflictInView(changes);
    expect(report.conflicts).toEqual(['README.md/inside.md', 'src/d3/deep']);
    expect(report.indexUntouched).toBe(false);
    expect(report.patch).toBe(patchOf(truth));
  });

  it('stages through the index in a repository that ignores the executable bit (core.fileMode false)', async (context) => {
    if (skip !== undefined) context.skip();
    git(backing, 'config', 'core.fileMode', 'false');
    const truth = plainCopyTree(contentChanges);
    const { tree, viewIndexKept } = await commitInView(contentChanges);
    // The recorded modes stay (tool.sh executable, f2.ts not), as git keeps them when it ignores the bit.
    expect(tree).toBe(truth);
    expect(viewIndexKept).toBe(true);
  });

  it('stages through the index while a box runs on the view (its git may read the index after the commit)', async (context) => {
    if (skip !== undefined) context.skip();
    const edit = (root: string) => fs.writeFileSync(path.join(root, 'src/d0/deep/f0.ts'), 'edited\n');
    const truth = plainCopyTree(edit);
    let box: ChildProcess | undefined;
    try {
      const { tree, viewIndexKept } = await commitInView(edit, async () => {
        box = boxOnView(path.join(dir, 'home', 's1'), location().checkout);
        const state = readState(location().stateDir);
        for (let i = 0; i < 250 && state && !boxesOnView(location(), state); i++)
          await new Promise((resolve) => setTimeout(resolve, 20));
      });
      expect(tree).toBe(truth);
      expect(viewIndexKept).toBe(true);
      // What the box's git sees right after the commit: the view is its new baseline, nothing to commit.
      expect(
        gitInViewRun(path.join(dir, 'home', 's1'), location().checkout, ['status', '--porcelain']),
      ).toMatchObject({
        stdout: '',
      });
    } finally {
      box?.kill('SIGKILL');
      if (box) await new Promise((resolve) => box?.once('exit', resolve));
    }
  });

  it("stages through the index once the model's git wrote it (it may hold what the model staged)", async (context) => {
    if (skip !== undefined) context.skip();
    const edit = (root: string) => fs.writeFileSync(path.join(root, 'src/d0/deep/f0.ts'), 'edited\n');
    const truth = plainCopyTree(edit);
    const { tree, viewIndexKept } = await commitInView(edit, () => {
      // As a `git status` in the box that refreshed the index: rewritten by rename, the same entries.
      const index = path.join(readState(location().stateDir)?.gitDir ?? '', 'index');
      fs.copyFileSync(index, `${index}.model`);
      fs.renameSync(`${index}.model`, index);
    });
    expect(tree).toBe(truth);
    expect(viewIndexKept).toBe(true);
  });
});

describe("a watched view's private index, split in two", () => {
  beforeEach(() => {
    const more: Record<string, string> = {};
    for (let i = 0; i < 50; i++) more[`more/m${i}.ts`] = `export const m = ${i};\n`;
    writeFiles(backing, more);
    git(backing, 'add', '-A');
    git(backing, 'commit', '-qm', 'more files: an index worth splitting');
    // Files written in the second an index is written are "racily clean": git keeps them out of a shared part. A
    // project's files are older than that; so are these.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const age = (folder: string): void => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        if (entry.name === '.git') continue;
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) age(full);
        else if (entry.isFile()) fs.utimesSync(full, hourAgo, hourAgo);
      }
    };
    age(backing);
    watchBackingFolders(true);
    // The test project's index is a few kilobytes: split from 2 KB (a split index's own part is far smaller).
    splitIndexesFrom(2_000);
  });
  afterEach(() => {
    stopWatching(backing);
    watchBackingFolders(false);
    splitIndexesFrom(1024 * 1024);
  });

  const sharedParts = (folder: string) =>
    fs.readdirSync(folder).filter((name) => name.startsWith('sharedindex.'));

  it("writes only its changed part, the view's git reads it without a word, and the repository's .git gets none", async (context) => {
    if (skip !== undefined) context.skip();
    const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
    await checkout.reset();
    const state = () => readState(location().stateDir);
    const privateIndex = path.join(location().stateDir, 'backing.index');
    const gitDir = state()?.gitDir ?? '';
    // Split: the shared part in the view's git folder and beside the private index, never in the repository's .git.
    expect(sharedParts(location().stateDir)).toHaveLength(1);
    expect(sharedParts(gitDir)).toEqual(sharedParts(location().stateDir));
    expect(sharedParts(path.join(backing, '.git'))).toEqual([]);
    const whole = fs.statSync(
      path.join(location().stateDir, sharedParts(location().stateDir)[0] as string),
    ).size;
    expect(fs.statSync(privateIndex).size).toBeLessThan(whole / 2);

    for (let turn = 0; turn < 3; turn++) {
      const root = await checkout.mount();
      writeFiles(root, { [`src/d${turn}/deep/f1.ts`]: `turn ${turn}\n`, [`new/t${turn}.ts`]: 'new\n' });
      Checkout.markDirty(location());
      expect(
        (await checkout.commit({ artifactsDir: path.join(dir, 'artifacts'), artifactStem: `t${turn}` }))
          .status,
      ).toBe('committed');
      // The user edits the project between turns; once, adds more than git's own 20% of new entries, past which git
      // writes a new shared part itself (into the repository's .git: Keel's gits never do, Keel splits again).
      fs.writeFileSync(path.join(backing, 'README.md'), `the user, turn ${turn}\n`);
      if (turn === 1)
        for (let i = 0; i < 40; i++)
          fs.writeFileSync(path.join(backing, `more/added${i}.ts`), `export const a = ${i};\n`);
      await checkout.reset();
      // The snapshot is the full pass's tree, from the split index.
      expect(state()?.baselineTree).toBe(plainCopyTree(() => undefined));
      // Before the big change, its own part holds a few entries. (After it, how many stay there for a while depends on
      // the clock: git keeps entries changed in the second before a write out of a shared part, "racily clean".)
      if (turn === 0) expect(fs.statSync(privateIndex).size).toBeLessThan(whole / 2);
      await checkout.mount();
      const status = gitInViewRun(path.join(dir, 'home', 's1'), location().checkout, [
        'status',
        '--porcelain',
      ]);
      expect(status).toEqual({ status: 0, stdout: '', stderr: '' });
      expect(sharedParts(path.join(backing, '.git'))).toEqual([]);
    }

    // Thinned: every shared part goes with both indexes; the next reset seeds, snapshots and splits again.
    expect(await checkout.thin()).toBe(true);
    expect([...sharedParts(location().stateDir), ...sharedParts(gitDir)]).toEqual([]);
    await checkout.reset();
    expect(state()?.baselineTree).toBe(plainCopyTree(() => undefined));
    await checkout.mount();
    expect(
      gitInViewRun(path.join(dir, 'home', 's1'), location().checkout, ['status', '--porcelain']),
    ).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    expect(sharedParts(path.join(backing, '.git'))).toEqual([]);
  });
});

describe("the split index's link, as git writes it", () => {
  it('names the shared part of an index of version 2, 3 (extended flags) and 4 (prefix-compressed paths)', () => {
    for (const version of [2, 3, 4]) {
      const repo = makeRepo(path.join(dir, `v${version}`), {
        'a/one.txt': '1\n',
        'a/b/two.txt': '2\n',
        'a/b/c/three-with-a-longer-name.txt': '3\n',
      });
      const index = path.join(repo, '.git', 'index');
      git(repo, '-c', `index.version=${version}`, 'update-index', '--index-version', String(version));
      // Whole: no link.
      expect(sharedPartOf(fs.readFileSync(index))).toBeUndefined();
      git(repo, 'update-index', '--split-index');
      writeFiles(repo, { 'a/b/two.txt': 'changed\n', 'new.txt': 'new\n' });
      git(repo, 'add', '-A');
      // An intent-to-add entry carries extended flags (what makes git write version 3).
      if (version === 3) {
        writeFiles(repo, { 'later.txt': 'later\n' });
        git(repo, 'add', '-N', 'later.txt');
      }
      const bytes = fs.readFileSync(index);
      expect(bytes.readUInt32BE(4)).toBe(version);
      const shared = fs
        .readdirSync(path.join(repo, '.git'))
        .filter((name) => name.startsWith('sharedindex.'));
      // git may have written a second shared part as it added (past its 20%): the link names one of them.
      expect(shared).toContain(sharedPartOf(bytes));
    }
  });
});
