import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import {
  boxedSandbox,
  createArea,
  noSandbox,
  processesMatching,
  run,
  waitFor,
  type RunnerArea,
} from './runnerFixtures.js';

let area: RunnerArea;
let bwrap: SandboxInfo;

beforeAll(async () => {
  area = createArea();
  bwrap = await boxedSandbox();
  expect(bwrap.kind, bwrap.reason).toBe('bwrap');
});
afterAll(() => area.cleanup());

/** Every way a command commonly leaves something running, each with a unique `sleep` marker. */
function escapees(): { script: string; markers: Record<string, string> } {
  const base = `${randomInt(1000, 9999)}.${randomInt(100000, 999999)}`;
  const daemonSeconds = `6${base}`;
  const markers: Record<string, string> = {
    background: `sleep 1${base}`,
    nohup: `sleep 2${base}`,
    setsid: `sleep 3${base}`,
    doubleForkSetsid: `sleep 4${base}`,
    disowned: `sleep 5${base}`,
    pythonDaemon: `sleep ${daemonSeconds}`,
  };
  const script = [
    `${markers.background} &`,
    `nohup ${markers.nohup} >/dev/null 2>&1 &`,
    `setsid ${markers.setsid} >/dev/null 2>&1 &`,
    `( setsid bash -c '${markers.doubleForkSetsid}' >/dev/null 2>&1 & ) &`,
    `${markers.disowned} & disown`,
    // A classic daemon: fork, setsid, fork again, parent exits, grandchild re-parented to init.
    `python3 -c "import os,sys
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
os.execvp('sleep', ['sleep', '${daemonSeconds}'])" &`,
  ].join('\n');
  return { script, markers };
}

async function expectAllStarted(markers: Record<string, string>): Promise<void> {
  const started = await waitFor(
    () => Object.values(markers).every((m) => processesMatching(m).length > 0),
    3_000,
  );
  const missing = Object.entries(markers).filter(([, m]) => processesMatching(m).length === 0);
  expect(started, `not started: ${missing.map(([name]) => name).join(', ')}`).toBe(true);
}

function survivors(markers: Record<string, string>): string[] {
  return Object.entries(markers)
    .filter(([, marker]) => processesMatching(marker).length > 0)
    .map(([name]) => name);
}

describe.each([
  ['inside bwrap', () => bwrap],
  ['without a sandbox', () => noSandbox],
])('killing the whole tree %s', (_label, sandbox) => {
  it('kills background, nohup, setsid, double-forked and daemonised processes on timeout', async () => {
    const { script, markers } = escapees();
    let ready!: () => void;
    const sawStarted = new Promise<void>((resolve) => (ready = resolve));
    const pending = run(area, sandbox(), `${script}\necho STARTED\nsleep 60`, {
      timeoutMs: 2_500,
      onData: (text) => {
        if (text.includes('STARTED')) ready();
      },
    });
    await sawStarted;
    await expectAllStarted(markers);
    const result = await pending;
    expect(result.timedOut).toBe(true);
    expect(survivors(markers)).toEqual([]);
  });

  it('kills what a finished command left running in the background', async () => {
    const { script, markers } = escapees();
    const result = await run(area, sandbox(), `${script}\nsleep 0.5\necho done`);
    expect(result.exitCode).toBe(0);
    expect(result.excerpt).toContain('done');
    expect(survivors(markers)).toEqual([]);
  });
});

describe('killing without a sandbox', () => {
  it('also finds an escapee that cleared its environment, through the run cgroup', async () => {
    const marker = `sleep 7${randomInt(1000, 9999)}.${randomInt(100000, 999999)}`;
    const command = `( env -i setsid ${marker.replace('sleep', '/bin/sleep')} >/dev/null 2>&1 & ) & sleep 0.5; echo done`;
    const result = await run(area, noSandbox, command);
    if (result.limits.pids !== 'cgroup') {
      console.warn(
        'skipped: no writable cgroup here, an env-clearing double-fork escapes an unboxed run (documented)',
      );
      return;
    }
    expect(result.exitCode).toBe(0);
    expect(processesMatching(marker.replace('sleep ', ''))).toEqual([]);
  });
});
