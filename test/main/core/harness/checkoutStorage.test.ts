import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkoutStorage,
  collectCheckouts,
  enforceCheckoutBound,
} from '../../../../main/core/harness/checkoutStorage.js';
import { withWritableSession } from '../../../../main/core/harness/lock.js';
import { Checkout } from '../../../../main/core/persistent/checkout.js';
import { checkoutLocation } from '../../../../main/core/persistent/config.js';
import { prepareTurn, takeViewBaselines } from '../../../../main/core/persistent/turnCheckouts.js';
import type { CommitModel } from '../../../../main/core/persistent/types.js';
import { stopSessionViews } from '../../../../main/core/persistent/viewHolder.js';
import { writeSettings, readSettings } from '../../../../main/store/settings.js';
import { sessionWithCheckout as makeSession } from '../../../support/checkoutSession.js';
import { git, makeRepo, makeTemp, read } from '../persistent/support.js';
import { filesOf, gitIn } from './support.js';

// Issue #36: `keel gc` and the storage bound reclaim idle sessions' checkouts, never what is not yet in the
// backing folder or the log, and a reclaimed checkout is made again by the session's next turn.

let dir: string;
let home: string;
let project: string;

beforeEach(() => {
  dir = makeTemp('keel-gc-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'README.md': 'r\n' });
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const sessionWithCheckout = (commit: CommitModel) => makeSession(home, project, commit);

const dataDir = (id: string) => path.join(home, 'sessions', id);
const checkoutOf = (id: string) => checkoutLocation(dataDir(id), 'project');
/**
 * Runs `fn` on a session's checkout files as its turn sees them: a copy-on-write view (KEEL_CHECKOUT_KIND=view) is
 * mounted by no process between turns (its host folder is an empty mount point), so it is mounted for the call
 * and let go after, as a `keel run` that ended leaves it.
 */
async function inCheckout<T>(id: string, fn: (files: string) => T): Promise<T> {
  return withWritableSession(home, id, async (log) => {
    await prepareTurn(log, { newTurn: false });
    try {
      return fn(filesOf(checkoutOf(id).checkout));
    } finally {
      await stopSessionViews(log.dir);
    }
  });
}

const worktreeAdmins = () => fs.readdirSync(path.join(project, '.git', 'worktrees'));

describe('keel gc: reclaiming checkouts', () => {
  it('reclaims a clean idle checkout (files, state, worktree admin), keeps one with uncommitted changes, and the next turn makes it again', async () => {
    const clean = await sessionWithCheckout('auto');
    const manual = await sessionWithCheckout('manual');
    // The manual session's turn left a change for review: it is in no log and not in the project yet.
    await inCheckout(manual, (files) =>
      fs.writeFileSync(path.join(files, 'src', 'a.ts'), 'changed by the session\n'),
    );
    Checkout.markDirty(checkoutOf(manual));
    expect(worktreeAdmins()).toHaveLength(2);

    const listed = checkoutStorage(home);
    expect(listed.entries.map((entry) => entry.sessionId).sort()).toEqual([clean, manual].sort());
    expect(listed.totalBytes).toBeGreaterThan(0);

    // Just active: kept under the default idle time (settings: 60 minutes).
    const recent = await collectCheckouts(home, { dryRun: true });
    expect(recent.entries.every((entry) => entry.action === 'kept')).toBe(true);
    expect(recent.entries[0]?.reason).toMatch(/active in the last 60 minutes/);

    const dry = await collectCheckouts(home, { dryRun: true, idleMs: 0 });
    const byId = (report: typeof dry, id: string) => report.entries.find((entry) => entry.sessionId === id);
    expect(byId(dry, clean)?.action).toBe('would reclaim');
    expect(byId(dry, manual)).toMatchObject({ action: 'kept' });
    expect(byId(dry, manual)?.reason).toMatch(/1 uncommitted change \(src\/a\.ts\)/);
    expect(fs.existsSync(checkoutOf(clean).checkout)).toBe(true);

    const done = await collectCheckouts(home, { idleMs: 0, measure: true });
    expect(byId(done, clean)?.action).toBe('reclaimed');
    expect(done.reclaimedBytes).toBe(byId(done, clean)?.bytes);
    expect(fs.existsSync(checkoutOf(clean).checkout)).toBe(false);
    expect(fs.existsSync(checkoutOf(clean).stateDir)).toBe(false);
    expect(fs.existsSync(path.join(dataDir(clean), 'reclaiming'))).toBe(false);
    expect(worktreeAdmins()).toHaveLength(1);
    // The log and the project are untouched; the kept session still holds its change.
    expect(fs.existsSync(path.join(dataDir(clean), 'events.sqlite'))).toBe(true);
    expect(git(project, 'status', '--porcelain')).toBe('');
    expect(read(path.join(project, 'src', 'a.ts'))).toBe('a\n');
    expect(await inCheckout(manual, (files) => read(path.join(files, 'src', 'a.ts')))).toBe(
      'changed by the session\n',
    );
    expect(checkoutStorage(home).entries.map((entry) => entry.sessionId)).toEqual([manual]);

    // The reclaimed session's next turn makes its checkout again, from the project as it is now.
    fs.writeFileSync(path.join(project, 'src', 'b.ts'), 'b edited by the user\n');
    await withWritableSession(home, clean, (log) => prepareTurn(log, { newTurn: true }));
    expect(read(path.join(filesOf(checkoutOf(clean).checkout), 'src', 'b.ts'))).toBe(
      'b edited by the user\n',
    );
    expect(read(path.join(filesOf(checkoutOf(clean).checkout), 'README.md'))).toBe('r\n');
  });

  it('keeps an auto session whose commit is owed, and reclaims only down to the bound, oldest first', async () => {
    const older = await sessionWithCheckout('auto');
    const newer = await sessionWithCheckout('auto');
    const owed = await sessionWithCheckout('auto');
    // A turn started and its auto commit has not run (a crash): the checkout holds what the commit will carry.
    fs.writeFileSync(path.join(checkoutOf(owed).stateDir, 'turn-pending'), '');
    const sizes = checkoutStorage(home).entries;
    const one = sizes.find((entry) => entry.sessionId === older)?.bytes ?? 0;
    // Room for all but one checkout: only the oldest reclaimable one goes.
    const report = await collectCheckouts(home, {
      idleMs: 0,
      untilBytes: sizes.reduce((total, entry) => total + entry.bytes, 0) - one,
      now: Date.now() + 1,
    });
    const action = (id: string) => report.entries.find((entry) => entry.sessionId === id);
    expect(action(older)?.action).toBe('reclaimed');
    expect(action(newer)).toMatchObject({ action: 'kept', reason: 'within the bound' });
    expect(fs.existsSync(checkoutOf(newer).checkout)).toBe(true);

    const all = await collectCheckouts(home, { idleMs: 0 });
    expect(all.entries.find((entry) => entry.sessionId === owed)).toMatchObject({
      action: 'kept',
      reason: 'its turn’s auto commit is owed',
    });
    expect(fs.existsSync(checkoutOf(owed).checkout)).toBe(true);
  });

  it('a reclaim a crash cut off after the checkout left the workspace: the next turn makes it again, gc removes the rest', async () => {
    const id = await sessionWithCheckout('auto');
    const location = checkoutOf(id);
    // The first step of a reclaim (reclaim.ts): the checkout renamed out of the workspace; then the process died.
    const trash = path.join(dataDir(id), 'reclaiming');
    fs.mkdirSync(trash);
    fs.renameSync(location.checkout, path.join(trash, 'project-1'));
    expect(Checkout.existing({ name: 'project', path: project, commit: 'auto' }, location)).toBeUndefined();

    // As the turn's first command would find it: a view made anew takes its baseline before that command runs.
    await withWritableSession(home, id, async (log) => {
      await prepareTurn(log, { newTurn: true });
      await takeViewBaselines(log.dir);
    });
    expect(read(path.join(filesOf(location.checkout), 'src', 'a.ts'))).toBe('a\n');
    expect(gitIn(location.checkout, 'status', '--porcelain')).toBe('');

    const report = await collectCheckouts(home, { idleMs: 0 });
    expect(report.entries[0]?.action).toBe('reclaimed');
    expect(fs.existsSync(trash)).toBe(false);
    expect(fs.existsSync(location.checkout)).toBe(false);
    // The admin folder the crash left: `worktree add -f` of the same path took it over, and gc removed it.
    expect(worktreeAdmins()).toEqual([]);
  });

  it('after a turn that made a checkout, the bound reclaims other idle sessions’ checkouts; later turns do not look', async () => {
    fs.mkdirSync(home, { recursive: true });
    writeSettings(home, {
      ...readSettings(home),
      checkouts: { storageLimitMB: 0, idleMinutes: 0, kind: 'auto' },
    });
    const older = await sessionWithCheckout('auto');
    expect(await enforceCheckoutBound(home, older)).toMatchObject({ reclaimedBytes: 0 });
    const current = await sessionWithCheckout('auto');
    const report = await enforceCheckoutBound(home, current);
    expect(report?.entries.find((entry) => entry.sessionId === older)?.action).toBe('reclaimed');
    expect(report?.entries.find((entry) => entry.sessionId === current)?.reason).toBe(
      'the session running now',
    );
    expect(fs.existsSync(checkoutOf(older).checkout)).toBe(false);
    expect(fs.existsSync(checkoutOf(current).checkout)).toBe(true);
    // Its checkout measured now: the next turn's check is a stat, no pass over the home.
    expect(await enforceCheckoutBound(home, current)).toBeUndefined();
  });

  it('reads the bound from settings.json and keeps a setting the UI does not send', () => {
    fs.mkdirSync(home, { recursive: true });
    expect(readSettings(home).checkouts).toEqual({ storageLimitMB: 2048, idleMinutes: 60, kind: 'auto' });
    writeSettings(home, {
      ...readSettings(home),
      checkouts: { storageLimitMB: 100, idleMinutes: 5, kind: 'auto' },
    });
    expect(checkoutStorage(home).limitBytes).toBe(100 * 1024 * 1024);
  });
});
