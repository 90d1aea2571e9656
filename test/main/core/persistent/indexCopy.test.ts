// A private index seeded from the repository's own (a direct session's first tree, a checkout's snapshot, a thinned
// view's restore) keeps git's "racily clean" judgement: a file changed again in the second git wrote the index, to the
// same size, is compared by content. A copy stamped with the time of copying made git trust that entry's stat (whole
// seconds where git is built without nanoseconds) and the tree held the file's older content. Real git, real files,
// real timing: the test waits for the start of a second so that the write, `git add` and the rewrite share one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkout } from '../../../../main/core/persistent/checkout.js';
import { folderTree } from '../../../../main/core/persistent/directChanges.js';
import { copyIndexFile, readState } from '../../../../main/core/persistent/state.js';
import { git, makeRepo, makeTemp, projectLocation, unforced } from './support.js';

let dir: string;

beforeEach(() => {
  dir = makeTemp('keel-index-copy-');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Until just after the next whole second. */
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 30);
const second = (file: string) => fs.statSync(file, { bigint: true }).mtimeNs / 1_000_000_000n;

/**
 * A repository whose index git wrote in the same second as `f`'s last change, made after `git add` with the same
 * size: the index's entry for `f` is racily clean. Tried again if the steps straddled a second.
 */
async function racyRepository(): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    const backing = makeRepo(path.join(dir, `backing${attempt}`), { 'README.md': 'hello\n' });
    await nextSecond();
    fs.writeFileSync(path.join(backing, 'f.txt'), 'first\n');
    git(backing, 'add', 'f.txt');
    fs.writeFileSync(path.join(backing, 'f.txt'), 'again\n');
    const shared = second(path.join(backing, 'f.txt')) === second(path.join(backing, '.git', 'index'));
    if (shared || attempt === 3) {
      expect(shared).toBe(true);
      // The seeding comes in a later second, as it does when a session starts after the user's `git add`.
      await nextSecond();
      return backing;
    }
  }
}

describe("a private index seeded from the repository's", () => {
  it('keeps the index file time, so git still compares a racily clean entry by content', async () => {
    const backing = await racyRepository();
    const copy = path.join(dir, 'copy.index');
    copyIndexFile(path.join(backing, '.git', 'index'), copy);
    expect(second(copy)).toBe(second(path.join(backing, '.git', 'index')));
    const changed = execFileSync('git', ['diff', '--name-only'], {
      cwd: backing,
      env: { ...process.env, GIT_INDEX_FILE: copy },
      encoding: 'utf8',
    });
    expect(changed).toBe('f.txt\n');
  });

  it("gives a direct session's first tree the file's content, not the content git staged", async () => {
    const backing = await racyRepository();
    const tree = await folderTree(
      path.join(dir, 'direct'),
      backing,
      'repository',
      path.join(backing, '.git'),
    );
    expect(
      execFileSync('git', ['cat-file', 'blob', `${tree}:f.txt`], { cwd: backing, encoding: 'utf8' }),
    ).toBe('again\n');
  });

  it("gives a new session's checkout the file's content", async () => {
    const backing = await racyRepository();
    const location = projectLocation(dir);
    await unforced(() =>
      Checkout.open({ name: 'project', path: backing, commit: 'auto' }, location, { kind: 'copy' }),
    );
    const state = readState(location.stateDir);
    const baseline = state?.baselineTree ?? '';
    expect(
      execFileSync('git', ['cat-file', 'blob', `${baseline}:f.txt`], { cwd: backing, encoding: 'utf8' }),
    ).toBe('again\n');
    expect(fs.readFileSync(path.join(state?.checkout ?? '', 'f.txt'), 'utf8')).toBe('again\n');
  });
});
