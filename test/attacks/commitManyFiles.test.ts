// Attack corpus (issue 38): a command that makes tens of thousands of files made the turn's commit write
// them all into the project, one confined fsync'd write and its kept copies each: 60-80 s at the turn's end,
// with no bound and no word to anyone. Past `maxFiles` (COMMIT_MAX_FILES; lowered here so the test makes
// hundreds of files, not thousands) the commit writes nothing and holds every change back for a person,
// saying why; granted, they are written.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkout, type CheckoutLocation } from '../../main/core/persistent/checkout.js';
import { COMMIT_MAX_FILES } from '../../main/core/persistent/commit.js';
import { stopAllViews } from '../../main/core/persistent/viewHolder.js';
import { makeRepo, makeTemp } from '../main/core/persistent/support.js';

let dir: string;
let backing: string;
let location: CheckoutLocation;

beforeEach(() => {
  dir = makeTemp('keel-many-files-');
  backing = makeRepo(path.join(dir, 'project'), { 'README.md': 'project\n' });
  location = {
    workspaceRoot: path.join(dir, 'home', 's1', 'workspace'),
    checkout: path.join(dir, 'home', 's1', 'workspace', 'persistent', 'project'),
    stateDir: path.join(dir, 'home', 's1', 'checkouts', 'project'),
    locksRoot: path.join(dir, 'home', 'locks'),
  };
});
afterEach(async () => {
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * What a model's command does in the checkout: `count` new files under gen/, made by a shell loop, in the checkout's
 * files as Keel reaches them (`root`: the checkout, or a copy-on-write view's merged folder through its holder).
 */
function makeFiles(root: string, count: number): void {
  execFileSync(
    'bash',
    ['-c', `mkdir gen && for i in $(seq 1 ${count}); do echo "$i" > "gen/f$i.txt"; done`],
    {
      cwd: root,
    },
  );
  Checkout.markDirty(location);
}

const options = (stem: string, maxFiles: number) => ({
  artifactsDir: path.join(dir, 'artifacts'),
  artifactStem: stem,
  keepStore: path.join(dir, 'kept'),
  maxFiles,
});

describe('attack: a command that makes more files than a commit writes without asking', () => {
  it('has a bound by default', () => {
    expect(COMMIT_MAX_FILES).toBe(2000);
  });

  it('writes nothing, holds every change back saying why; granted, they are written', async () => {
    const checkout = await Checkout.open({ name: 'project', path: backing, commit: 'auto' }, location);
    makeFiles(await checkout.mount(), 300);
    const report = await checkout.commit(options('commits/1-project', 100));
    expect(report.status).toBe('unchanged');
    expect(report.held?.files).toHaveLength(300);
    expect(new Set(report.held?.files.map((file) => file.reason))).toEqual(
      new Set(['300 changed files are more than a commit writes to project without asking (100)']),
    );
    // The approval shows the diff (cut), and the patch artifact keeps the whole change.
    expect(report.held?.diff).toContain('+++ b/gen/f1.txt');
    expect(fs.existsSync(path.join(backing, 'gen'))).toBe(false);

    const granted = await checkout.commit({
      ...options('commits/2-project', 100),
      approvedHeld: report.held?.files ?? [],
    });
    expect(granted.applied?.files).toHaveLength(300);
    expect(granted.applied?.conflicts).toEqual([]);
    expect(fs.readFileSync(path.join(backing, 'gen', 'f300.txt'), 'utf8')).toBe('300\n');
  });

  it('under the bound, commits as before', async () => {
    const checkout = await Checkout.open({ name: 'project', path: backing, commit: 'auto' }, location);
    makeFiles(await checkout.mount(), 100);
    const report = await checkout.commit(options('commits/1-project', 100));
    expect(report.status).toBe('committed');
    expect(report.held).toBeUndefined();
    expect(fs.readFileSync(path.join(backing, 'gen', 'f100.txt'), 'utf8')).toBe('100\n');
  });
});
