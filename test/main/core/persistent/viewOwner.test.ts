import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimViews,
  holdsViews,
  processStart,
  readViewOwner,
  releaseViews,
  VIEW_OWNER_FILE,
  ViewOwnedError,
} from '../../../../main/core/persistent/viewOwner.js';
import { spawnTypescript, waitForExit, waitForLine } from '../../store/support/childProcess.js';
import { makeTemp } from './support.js';

// Issue #36: the claim on a session's copy-on-write views (one mount owner per session), between real processes.

const CLAIMER = path.join(import.meta.dirname, 'viewOwnerClaim.ts');
let dir: string;

beforeEach(() => {
  dir = path.join(makeTemp('keel-view-owner-'), 'checkouts');
});
afterEach(() => {
  releaseViews(dir);
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

const writeClaim = (claim: object) =>
  fs.writeFileSync(path.join(dir, VIEW_OWNER_FILE), JSON.stringify({ what: 'keel run', at: 'x', ...claim }));

describe.runIf(process.platform === 'linux')('the claim on a session’s views', () => {
  it('refuses this process while another live one holds it, and is taken over once that one is killed', async () => {
    const other = spawnTypescript(CLAIMER, [dir]);
    await waitForLine(other, /^claimed$/);
    expect(readViewOwner(dir)).toMatchObject({ pid: other.pid, start: processStart(other.pid as number) });
    expect(() => claimViews(dir)).toThrow(ViewOwnedError);
    expect(() => claimViews(dir)).toThrow(
      new RegExp(`in use by .* \\(pid ${other.pid}\\); finish or stop what it runs in this session`),
    );
    // Giving it up never removes another's claim.
    releaseViews(dir);
    expect(readViewOwner(dir)?.pid).toBe(other.pid);
    other.kill('SIGKILL');
    await waitForExit(other);
    claimViews(dir);
    expect(holdsViews(dir)).toBe(true);
    expect(readViewOwner(dir)?.pid).toBe(process.pid);
    // Now the other way round: a second process is refused with this one named.
    const refused = spawnTypescript(CLAIMER, [dir]);
    expect(await waitForLine(refused, /^refused: /)).toMatch(new RegExp(`\\(pid ${process.pid}\\)`));
    expect(await waitForExit(refused)).toBe(3);
    releaseViews(dir);
    expect(fs.existsSync(path.join(dir, VIEW_OWNER_FILE))).toBe(false);
  });

  it('takes over a claim whose pid now names another process (a different start time), an unreadable one, and one behind a stale takeover lock', () => {
    fs.mkdirSync(dir, { recursive: true });
    // The parent process is alive, but started at another time than the claim says: not the owner.
    writeClaim({ pid: process.ppid, start: '1' });
    claimViews(dir);
    expect(readViewOwner(dir)).toMatchObject({ pid: process.pid, start: processStart(process.pid) });
    releaseViews(dir);
    fs.writeFileSync(path.join(dir, VIEW_OWNER_FILE), '{"half');
    claimViews(dir);
    expect(readViewOwner(dir)?.pid).toBe(process.pid);
    releaseViews(dir);
    // A takeover lock a process killed mid-takeover left behind (old) does not block the claim for good.
    writeClaim({ pid: 2 ** 22 + 1, start: '5' });
    const lock = path.join(dir, `${VIEW_OWNER_FILE}.takeover`);
    fs.mkdirSync(lock);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    claimViews(dir);
    expect(readViewOwner(dir)?.pid).toBe(process.pid);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('lets exactly one of several processes racing for a dead owner’s claim win', async () => {
    fs.mkdirSync(dir, { recursive: true });
    writeClaim({ pid: 2 ** 22 + 1, start: '5' });
    const racers = [0, 1, 2].map(() => spawnTypescript(CLAIMER, [dir]));
    const answers = await Promise.all(racers.map((racer) => waitForLine(racer, /^(claimed|refused: .*)$/)));
    expect(answers.filter((answer) => answer === 'claimed')).toHaveLength(1);
    const winner = racers[answers.indexOf('claimed')];
    expect(readViewOwner(dir)?.pid).toBe(winner?.pid);
    winner?.kill('SIGTERM');
    await Promise.all(racers.map((racer) => waitForExit(racer)));
    expect(readViewOwner(dir)).toBeUndefined();
  });
});
