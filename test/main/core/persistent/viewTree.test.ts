// Issue #36: a view's commit builds the session's tree from the changed paths (viewTree.ts) instead of staging them in
// the view's 7 MB index. Real overlay, real git: the tree it commits is the tree `git add -A` gives for the same
// changes made in a plain copy of the project, and wherever this way cannot answer exactly (a link, an index the
// model's git wrote), the commit stages through the index as before, with the same result.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkout, type CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import { fileStamp, readState } from '../../../../main/core/persistent/state.js';
import type { PersistentDirSpec } from '../../../../main/core/persistent/types.js';
import { stopAllViews } from '../../../../main/core/persistent/viewHolder.js';
import {
  git,
  ignoreForcedKind,
  makeRepo,
  makeTemp,
  overlayHere,
  writeFiles,
  projectLocation,
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
  before: (checkout: Checkout) => void = () => undefined,
): Promise<{ tree: string; viewIndexKept: boolean }> {
  const checkout = await Checkout.open(spec(), location(), { kind: 'view' });
  expect(checkout.kind).toBe('view');
  const root = await checkout.mount();
  change(root);
  before(checkout);
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
