import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  endLeftoverBoxes,
  makeRunScratch,
  processStartTicks,
  recordBox,
  sweepDeadScratch,
} from '../../../main/runner/boxRecords.js';
import { wrapWithExitMarker } from '../../../main/runner/exitMarker.js';
import { findMarkedProcesses } from '../../../main/runner/processTree.js';
import { trackChild, waitForClose } from '../../support/childProcesses.js';
import { REPO_ROOT } from '../../support/cli.js';

/*
 * Issue 20, item 1: what a killed Keel leaves behind. The kill campaign itself (Keel SIGKILLed during real
 * commands) is test/main/cli/killDuringCommand.test.ts; these are the pieces it relies on, each on its own.
 */

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Waits until no process carries the run marker `runId` (up to `ms`); returns those still alive then. */
async function markedAfter(runId: string, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = findMarkedProcesses(runId);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the wait after a command', () => {
  it('ends when the process holding the pty dies, even with nothing else to kill it', async () => {
    // A stand-in for Keel: a node process that runs the exit-marker wrapper in a pty, in a session of its own
    // with no controlling terminal (as bwrap --new-session puts it: no SIGHUP reaches it), and no parent-death
    // signal. It is SIGKILLed once the marker arrived, while the wrapper waits. Before, the wait was
    // `exec sleep 86400`: it stayed for a day.
    const runId = randomUUID();
    const nonce = randomUUID().replace(/-/g, '');
    const wrapper = wrapWithExitMarker('echo done', nonce);
    const script = `
      const pty = require(${JSON.stringify(path.join(REPO_ROOT, 'node_modules', 'node-pty'))});
      const child = pty.spawn('setsid', ['-w', 'bash', '-c', process.env.WRAPPER], {
        env: { PATH: process.env.PATH, KEEL_RUN_ID: process.env.RUN },
      });
      let seen = '';
      child.onData((data) => {
        seen += data;
        if (seen.includes(${JSON.stringify(`keel-exit;${nonce};0`)})) process.stdout.write('marker\\n');
      });`;
    const keel = trackChild(
      spawn(process.execPath, ['-e', script], {
        env: { ...process.env, WRAPPER: wrapper, RUN: runId },
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    await new Promise<void>((resolve, reject) => {
      keel.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('marker')) resolve();
      });
      keel.once('close', () => reject(new Error('the stand-in ended before the marker')));
    });
    // The wrapper is waiting now (the marker comes last).
    expect(findMarkedProcesses(runId).length).toBeGreaterThan(0);
    keel.kill('SIGKILL');
    await waitForClose(keel);
    expect(await markedAfter(runId, 5_000)).toEqual([]);
  });

  it('keeps waiting while the pty is open, even when the command left stdin non-blocking', async () => {
    const runId = randomUUID();
    const nonce = randomUUID().replace(/-/g, '');
    const wrapper = wrapWithExitMarker(`python3 -c 'import os; os.set_blocking(0, False)'`, nonce);
    const script = `
      const pty = require(${JSON.stringify(path.join(REPO_ROOT, 'node_modules', 'node-pty'))});
      const child = pty.spawn('setsid', ['-w', 'bash', '-c', process.env.WRAPPER], {
        env: { PATH: process.env.PATH, KEEL_RUN_ID: process.env.RUN },
      });
      child.onData(() => undefined);`;
    const keel = trackChild(
      spawn(process.execPath, ['-e', script], {
        env: { ...process.env, WRAPPER: wrapper, RUN: runId },
        stdio: 'ignore',
      }),
    );
    // A wait that gave up on a failing read would end the wrapper (and the pty) at once.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(findMarkedProcesses(runId).length).toBeGreaterThan(0);
    keel.kill('SIGKILL');
    await waitForClose(keel);
    expect(await markedAfter(runId, 5_000)).toEqual([]);
  });
});

describe('scratch folders of a killed Keel', () => {
  it('are removed on the next start when their owner is dead, never while it lives', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-sweep-test-'));
    made.push(tmp);
    // A dead owner: a process that has exited (its pid is free, or names another process).
    const gone = trackChild(spawn('true'));
    const gonePid = gone.pid as number;
    await waitForClose(gone);
    const mine = processStartTicks(process.pid) ?? '0';
    const names = {
      dead: `keel-run-${gonePid}-1-AbC123`,
      reused: `keel-run-${process.pid}-${Number(mine) + 7}-AbC123`,
      deadTerminal: `keel-terminal-${gonePid}-1-xYz789`,
      live: `keel-run-${process.pid}-${mine}-AbC123`,
      legacyOld: 'keel-run-Old123',
      legacyYoung: 'keel-run-New123',
      other: 'keel-runner-test-abcdef',
    };
    for (const name of Object.values(names)) {
      fs.mkdirSync(path.join(tmp, name, 'home'), { recursive: true });
      fs.writeFileSync(path.join(tmp, name, 'home', 'x'), 'x');
    }
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    fs.utimesSync(path.join(tmp, names.legacyOld), dayAgo, dayAgo);

    expect(await sweepDeadScratch(tmp)).toBe(4);
    expect(fs.readdirSync(tmp).sort()).toEqual([names.live, names.legacyYoung, names.other].sort());
  });

  it('are named after their owner and name their run, so the sweep can tell', async () => {
    const runId = randomUUID();
    const scratch = makeRunScratch('run', runId);
    made.push(scratch);
    expect(path.basename(scratch)).toMatch(
      new RegExp(`^keel-run-${process.pid}-${processStartTicks(process.pid)}-[A-Za-z0-9]{6}$`),
    );
    expect(fs.readFileSync(path.join(scratch, 'run-id'), 'utf8')).toBe(runId);
    expect(await sweepDeadScratch(path.dirname(scratch))).toBeGreaterThanOrEqual(0);
    expect(fs.existsSync(scratch)).toBe(true);
  });

  it('end the processes of a dead owner’s run first, but none of a live owner’s or older than the owner', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-sweep-test-'));
    made.push(tmp);
    const gone = trackChild(spawn('true'));
    const gonePid = gone.pid as number;
    await waitForClose(gone);
    const marked = (runId: string) =>
      trackChild(
        spawn('/bin/sh', ['-c', 'sleep 60 & wait'], {
          detached: true,
          stdio: 'ignore',
          env: { ...process.env, KEEL_RUN_ID: runId },
        }),
      );
    const runs = { dead: randomUUID(), live: randomUUID(), older: randomUUID() };
    const boxes = { dead: marked(runs.dead), live: marked(runs.live), older: marked(runs.older) };
    for (const id of Object.values(runs)) {
      for (let wait = 0; wait < 200 && findMarkedProcesses(id).length < 2; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(findMarkedProcesses(id)).toHaveLength(2);
    }
    const started = Number(processStartTicks(boxes.older.pid as number));
    const mine = processStartTicks(process.pid) ?? '0';
    const folders = {
      // A dead Keel started long before its run (tick 1 after boot).
      dead: `keel-run-${gonePid}-1-AbC123`,
      live: `keel-run-${process.pid}-${mine}-AbC123`,
      // A dead Keel that started after the marked process: that process cannot be of its run.
      older: `keel-run-${gonePid}-${started + 100}-XyZ789`,
    };
    for (const [key, name] of Object.entries(folders)) {
      fs.mkdirSync(path.join(tmp, name));
      fs.writeFileSync(path.join(tmp, name, 'run-id'), runs[key as keyof typeof runs]);
    }

    expect(await sweepDeadScratch(tmp)).toBe(2);
    expect(fs.readdirSync(tmp)).toEqual([folders.live]);
    expect(findMarkedProcesses(runs.dead)).toEqual([]);
    expect(await waitForClose(boxes.dead)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(findMarkedProcesses(runs.live)).toHaveLength(2);
    expect(findMarkedProcesses(runs.older)).toHaveLength(2);
    for (const box of [boxes.live, boxes.older]) process.kill(-(box.pid as number), 'SIGKILL');
    await Promise.all([waitForClose(boxes.live), waitForClose(boxes.older)]);
  });
});

describe('the record of a box', () => {
  it('is written before the spawn, so a Keel killed right after it still leaves a box resume can end', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-boxes-test-'));
    made.push(dir);
    const runId = randomUUID();
    // What execute() writes before node-pty spawns: no pid yet.
    recordBox(dir, { runId, pid: null, cgroupProcsFiles: [] });
    // The box it started, which the kill left running (its record never got the pid).
    const box = trackChild(
      spawn('/bin/sh', ['-c', 'sleep 60 & sleep 60 & wait'], {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, KEEL_RUN_ID: runId },
      }),
    );
    for (let wait = 0; wait < 200 && findMarkedProcesses(runId).length < 3; wait += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(findMarkedProcesses(runId).length).toBe(3);
    expect(await endLeftoverBoxes(dir)).toBe(1);
    expect(findMarkedProcesses(runId)).toEqual([]);
    expect(await waitForClose(box)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
