import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { sessionDir } from '../../../../main/core/paths.js';
import { listBackground } from '../../../../main/runner/background.js';
import { findMarkedProcesses } from '../../../../main/runner/processTree.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { callTool, eventsOf, harnessFor, toolResultsSeen } from './support.js';

// Issue #32: a background command lives across the session's turns in the host that runs them, and dies when
// the session is stopped (a turn's Stop) or its host stops the session's processes (archive, delete, quit).

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-bg-stop-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'a.txt': 'a\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The processes of the session's background commands still alive after up to `ms`. */
async function aliveAfter(id: string, ms: number): Promise<number[]> {
  const runIds = listBackground(sessionDir(home, id)).flatMap((e) => (e.runId === null ? [] : [e.runId]));
  const deadline = Date.now() + ms;
  for (;;) {
    const left = runIds.flatMap((runId) => findMarkedProcesses(runId));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(process.platform !== 'linux')('a session stopped with a background command running', () => {
  it('keeps it across turns, and kills it when a turn of the session is stopped', async () => {
    const harness = harnessFor(home, server, {});
    await harness.sessions.getOrCreate({ id: 'bg', create: { projectFolder: project, persistentDirs: {} } });
    server.enqueue(
      callTool('run_command', { command: 'echo up; sleep 300', background: true, ready_text: 'up' }, 'srv'),
      { kind: 'reply', text: 'started' },
    );
    const first = await generateHarness({
      harness,
      session: 'bg',
      messages: [{ role: 'user', content: 'start' }],
    });
    expect(first.outcome.status).toBe('completed');
    const runIds = listBackground(sessionDir(home, 'bg')).flatMap((e) => (e.runId === null ? [] : [e.runId]));
    expect(runIds).toHaveLength(1);
    expect(runIds.flatMap((runId) => findMarkedProcesses(runId)).length).toBeGreaterThan(0);

    // The next turn runs a long command and is stopped while it runs.
    server.enqueue(callTool('run_command', { command: 'touch waiting; sleep 60' }, 'wait'), {
      kind: 'reply',
      text: 'never',
    });
    const controller = new AbortController();
    const second = generateHarness({
      harness,
      session: 'bg',
      messages: [{ role: 'user', content: 'wait' }],
      signal: controller.signal,
    });
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(path.join(project, 'waiting')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    controller.abort();
    await second;
    const left = runIds.flatMap((runId) => findMarkedProcesses(runId));
    expect(left).toEqual([]);
    expect(listBackground(sessionDir(home, 'bg'))).toEqual([]);
    // The log is the truth: its end is recorded by the stopped turn, outside any call.
    const ends = eventsOf(home, 'bg').filter((e) => e.kind === 'background_exited');
    expect(ends).toMatchObject([
      { handle: 'bg-srv', reason: 'session_stopped', command: 'echo up; sleep 300', outsideCall: true },
    ]);

    // The next request tells the model, and a read of the handle says how it ended.
    server.discardPending();
    server.enqueue(callTool('command_output', { handle: 'bg-srv' }, 'read'), { kind: 'reply', text: 'ok' });
    await generateHarness({ harness, session: 'bg', messages: [{ role: 'user', content: 'is it up?' }] });
    expect(JSON.stringify(server.requests.at(-2)?.body)).toContain(
      '[background command bg-srv (echo up; sleep 300) is not running: it was killed when the session was stopped; it is never started again by itself]',
    );
    expect(toolResultsSeen(server).at(-1)).toMatch(
      /background command bg-srv \(echo up; sleep 300\) is gone: it was killed when the session was stopped/,
    );
    expect(eventsOf(home, 'bg').filter((e) => e.kind === 'background_exited')).toHaveLength(1);
  });

  it("ends with the host's stop of the session's processes (archive, delete, quit)", async () => {
    const harness = harnessFor(home, server, {});
    await harness.sessions.getOrCreate({ id: 'bg2', create: { projectFolder: project, persistentDirs: {} } });
    server.enqueue(
      callTool('run_command', { command: 'echo up; sleep 300', background: true, ready_text: 'up' }, 'srv'),
      { kind: 'reply', text: 'started' },
    );
    await generateHarness({ harness, session: 'bg2', messages: [{ role: 'user', content: 'start' }] });
    expect(listBackground(sessionDir(home, 'bg2'))).toHaveLength(1);
    const alive = await aliveAfter('bg2', 0);
    expect(alive.length).toBeGreaterThan(0);
    await harness.stopMcp('bg2');
    expect(listBackground(sessionDir(home, 'bg2'))).toEqual([]);
    expect(alive.filter((pid) => fs.existsSync(`/proc/${pid}`) && !isZombie(pid))).toEqual([]);
    expect(eventsOf(home, 'bg2').filter((e) => e.kind === 'background_exited')).toMatchObject([
      { handle: 'bg-srv', reason: 'session_stopped', outsideCall: true },
    ]);
  });

  it("records keel_ended when the host stops every session's processes (quit)", async () => {
    const harness = harnessFor(home, server, {});
    await harness.sessions.getOrCreate({
      id: 'quit',
      create: { projectFolder: project, persistentDirs: {} },
    });
    server.enqueue(
      callTool('run_command', { command: 'echo up; sleep 300', background: true, ready_text: 'up' }, 'srv'),
      { kind: 'reply', text: 'started' },
    );
    await generateHarness({ harness, session: 'quit', messages: [{ role: 'user', content: 'start' }] });
    await harness.stopMcp();
    expect(listBackground(sessionDir(home, 'quit'))).toEqual([]);
    expect(eventsOf(home, 'quit').filter((e) => e.kind === 'background_exited')).toMatchObject([
      { handle: 'bg-srv', reason: 'keel_ended', outsideCall: true },
    ]);
  });

  it('tells the model of a command a Keel that ended ran (from the log alone), once', async () => {
    const harness = harnessFor(home, server, {});
    await harness.sessions.getOrCreate({
      id: 'lost',
      create: { projectFolder: project, persistentDirs: {} },
    });
    server.enqueue({ kind: 'reply', text: 'hello' });
    await generateHarness({ harness, session: 'lost', messages: [{ role: 'user', content: 'hi' }] });
    // What a crashed Keel leaves: the start in the log, and nothing running here.
    const log = SessionLog.open(home, 'lost', { write: true });
    log.append(
      {
        kind: 'background_started',
        handle: 'bg-dev',
        command: 'npm run dev',
        toolCallId: 'dev',
        artifact: 'x.log',
      },
      { expectedLastSeq: log.lastSeq() },
    );
    log.close();
    server.enqueue(
      callTool('command_output', { handle: 'bg-dev' }, 'r1'),
      callTool('stop_command', { handle: 'bg-never' }, 'r2'),
      { kind: 'reply', text: 'restarting it' },
    );
    const turn = await generateHarness({
      harness,
      session: 'lost',
      messages: [{ role: 'user', content: 'check the dev server' }],
    });
    expect(turn.outcome.status).toBe('completed');
    const first = JSON.stringify(server.requests.at(-3)?.body);
    const note =
      '[background command bg-dev (npm run dev) is not running: it ended with the Keel that ran it (Keel quit or crashed); it is never started again by itself]';
    expect(first).toContain(note);
    // The note sits before the new prompt.
    expect(first.indexOf(note)).toBeLessThan(first.indexOf('check the dev server'));
    const [lostRead, neverStarted] = toolResultsSeen(server).slice(-2);
    expect(lostRead).toMatch(/bg-dev \(npm run dev\) is gone: it ended with the Keel that ran it/);
    expect(neverStarted).toMatch(/no background command bg-never was started in this session/);
    expect(eventsOf(home, 'lost').filter((e) => e.kind === 'background_exited')).toMatchObject([
      { handle: 'bg-dev', reason: 'keel_ended', outsideCall: true },
    ]);
  });
});

function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
