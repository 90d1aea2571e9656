import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { sessionDir } from '../../../../main/core/paths.js';
import { listBackground } from '../../../../main/runner/background.js';
import { findMarkedProcesses } from '../../../../main/runner/processTree.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, harnessFor } from './support.js';

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
  });
});

function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
