import { readdirSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import { canCreateRunCgroups } from '../../../main/runner/cgroup.js';
import { boxedSandbox, createArea, run, type RunnerArea } from './runnerFixtures.js';

let area: RunnerArea;
let sandbox: SandboxInfo;
let cgroups = false;

beforeAll(async () => {
  area = createArea();
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
  cgroups = canCreateRunCgroups();
});
afterAll(() => area.cleanup());

function processCount(): number {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length;
}

describe('runaway commands under hard bounds', () => {
  it('contains a fork bomb (pids cgroup + PID namespace + wall clock) and leaves nothing behind', async (context) => {
    if (!cgroups) {
      // Never run a fork bomb unbounded on a shared machine: RLIMIT_NPROC does not bind root.
      context.skip('no writable pids cgroup here, so a fork bomb cannot be bounded');
      return;
    }
    const baseline = processCount();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, processCount())), 25);
    const result = await run(area, sandbox, 'bomb() { bomb | bomb & }; bomb; sleep 30', {
      pidsMax: 64,
      timeoutMs: 2_000,
    });
    clearInterval(sampler);
    expect(result.limits.pids).toBe('cgroup');
    expect(result.timedOut).toBe(true);
    // The cap was reached: fork() failed inside the box.
    expect(result.excerpt).toMatch(/fork: (retry: )?Resource temporarily unavailable/);
    expect(peak - baseline).toBeLessThan(400);
    // bash keeps retrying fork() under the cap, so the wall clock ends it: everything in the box dies.
    const settled = processCount();
    expect(settled - baseline).toBeLessThan(50);
    console.log(
      `fork bomb: peak +${peak - baseline} processes system-wide with pids.max=64, ${result.durationMs} ms`,
    );
  });

  it('kills a memory hog at the cgroup memory cap and reports it', async (context) => {
    if (!cgroups) {
      context.skip('no writable memory cgroup here; the RLIMIT_AS test covers the cap');
      return;
    }
    const result = await run(area, sandbox, 'python3 -c "x = bytearray(1024 * 1024 * 1024); print(len(x))"', {
      memoryMb: 128,
    });
    expect(result.limits.memory).toBe('cgroup');
    expect(result.killedForMemory).toBe(true);
    expect(result.exitCode).not.toBe(0);
    expect(result.excerpt).not.toContain('1073741824');
  });

  it('refuses a memory hog its allocation under RLIMIT_AS and recognises the failure', async () => {
    const result = await run(area, sandbox, 'python3 -c "x = bytearray(1024 * 1024 * 1024); print(len(x))"', {
      memoryMb: 256,
      useCgroup: false,
    });
    expect(result.limits.memory).toBe('rlimit');
    expect(result.excerpt).toContain('MemoryError');
    expect(result.killedForMemory).toBe(true);
    expect(result.exitCode).toBe(1);
  });

  it('does not flag a normal failure as a memory kill', async () => {
    const result = await run(area, sandbox, 'echo failing; exit 2', { memoryMb: 256, useCgroup: false });
    expect(result.exitCode).toBe(2);
    expect(result.killedForMemory).toBe(false);
  });

  it('captures a 100 MB flood whole in the artifact with a bounded excerpt and bounded runner memory', async () => {
    const line = 'the quick brown fox jumps over the lazy dog 0123456789';
    const total = 100_000_000;
    const before = process.memoryUsage().rss;
    let peak = before;
    let liveBytes = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const started = performance.now();
    const result = await run(area, sandbox, `yes '${line}' | head -c ${total}; echo; echo END-OF-FLOOD`, {
      timeoutMs: 120_000,
      onData: (text) => (liveBytes += Buffer.byteLength(text)),
    });
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    expect(result.exitCode).toBe(0);
    // The pty turns each LF into CRLF, so the artifact holds the flood plus one byte per line.
    const lines = Math.ceil(total / (line.length + 1));
    expect(statSync(result.artifact).size).toBe(result.bytes);
    expect(result.bytes).toBeGreaterThanOrEqual(total + lines);
    expect(liveBytes).toBe(result.bytes);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.excerpt)).toBeLessThan(17 * 1024);
    expect(result.excerpt).toMatch(/\[\.\.\. \d+ bytes left out here; the whole output is in .+\]/);
    expect(result.excerpt).toContain('END-OF-FLOOD');
    expect(result.excerpt.startsWith(line)).toBe(true);
    const growthMb = (peak - before) / 1024 / 1024;
    console.log(
      `100 MB flood: ${(result.bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s ` +
        `(${(result.bytes / 1e6 / seconds).toFixed(0)} MB/s), runner RSS growth ${growthMb.toFixed(1)} MB`,
    );
    expect(growthMb).toBeLessThan(200);
  }, 150_000);
});
