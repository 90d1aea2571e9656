import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir, runKeel } from '../../support/cli.js';
import { sessionWithCheckout } from '../../support/checkoutSession.js';
import { makeRepo } from '../core/persistent/support.js';

// Issue 36: `keel gc` through the built CLI: the dry run lists and removes nothing, the run reclaims; a bad flag
// is refused with what to give.

beforeAll(ensureCliBuilt, 180_000);

let dir: string;
let home: string;
let project: string;

beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-cli-gc-'));
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/a.ts': 'a\n' });
});

afterEach(() => removeTempDir(dir));

describe('keel gc', () => {
  it('lists with --dry-run, reclaims without it, and refuses a bad --idle-minutes', async () => {
    const id = await sessionWithCheckout(home, project, 'auto');
    const checkout = path.join(home, 'sessions', id, 'workspace', 'persistent', 'project');

    const kept = runKeel(home, ['gc', '--dry-run']);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/kept +active in the last 60 minutes/);

    const dry = runKeel(home, ['gc', '--dry-run', '--idle-minutes', '0']);
    expect(dry.stdout).toContain(id);
    expect(dry.stdout).toMatch(/would reclaim/);
    expect(dry.stdout).toMatch(/would reclaim \d+\.\d MB of \d+\.\d MB \(bound 2048\.0 MB\)/);
    expect(fs.existsSync(checkout)).toBe(true);

    const run = runKeel(home, ['gc', '--idle-minutes', '0', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { reclaimedBytes: number; entries: { action: string }[] };
    expect(report.entries.map((entry) => entry.action)).toEqual(['reclaimed']);
    expect(report.reclaimedBytes).toBeGreaterThan(0);
    expect(fs.existsSync(checkout)).toBe(false);
    expect(runKeel(home, ['gc']).stdout).toBe('no checkouts to reclaim\n');

    const bad = runKeel(home, ['gc', '--idle-minutes', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Expected a number of minutes, 0 or more.');
  });
});
