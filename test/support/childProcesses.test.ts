import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isRunning,
  killTrackedChildren,
  setCurrentTest,
  trackChild,
  waitForClose,
} from './childProcesses.js';
import { makeTempDir, REPO_ROOT, removeTempDir } from './cli.js';

const sleeper = () => trackChild(spawn('sleep', ['1000'], { stdio: 'ignore' }));

/** Reads lines from `child`'s stdout until `count` have come. */
function readLines(child: ReturnType<typeof spawn>, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const lines = text.split('\n').slice(0, -1);
      if (lines.length >= count) resolve(lines);
    });
  });
}

describe('tracked child processes', () => {
  it('kills a child still running and resolves once it has closed: its pid is gone', async () => {
    const child = sleeper();
    const pid = child.pid ?? 0;
    expect(isRunning(pid)).toBe(true);
    expect(await killTrackedChildren()).toEqual([pid]);
    expect(isRunning(pid)).toBe(false);
    expect(await waitForClose(child)).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('kills the whole process group of a detached child, grandchildren included', async () => {
    const child = trackChild(
      spawn('sh', ['-c', 'sleep 1000 & echo "$!"; sleep 1000 & echo "$!"; wait'], {
        detached: true,
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    const grandchildren = (await readLines(child, 2)).map(Number);
    expect(grandchildren.map(isRunning)).toEqual([true, true]);
    await killTrackedChildren();
    expect([child.pid ?? 0, ...grandchildren].map(isRunning)).toEqual([false, false, false]);
  });

  it('kills only the children started during the named test', async ({ task }) => {
    try {
      setCurrentTest('first');
      const first = sleeper();
      setCurrentTest('second');
      const second = sleeper();
      expect(await killTrackedChildren({ startedDuring: 'first' })).toEqual([first.pid]);
      expect([first.pid ?? 0, second.pid ?? 0].map(isRunning)).toEqual([false, true]);
    } finally {
      setCurrentTest(task.id);
      await killTrackedChildren();
    }
  });

  it('resolves waitForClose only once stdout has ended, not at exit: later output is still delivered', async () => {
    // The killed shell's background job keeps stdout open and writes a line half a second after the kill.
    const child = trackChild(
      spawn('sh', ['-c', '(sleep 0.5; echo late) & echo started; exec sleep 1000'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    await readLines(child, 1);
    child.kill('SIGKILL');
    expect(await waitForClose(child)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(text).toBe('started\nlate\n');
  });

  it('in a Vitest run, kills a failed test’s children when it ends and the rest when the file ends', () => {
    const dir = makeTempDir('keel-tracked-');
    try {
      const pidsFile = path.join(dir, 'pids');
      const vitest = path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
      const config = path.join(REPO_ROOT, 'test', 'fixtures', 'leftChildren', 'vitest.config.ts');
      const result = spawnSync(process.execPath, [vitest, 'run', '--config', config], {
        cwd: REPO_ROOT,
        env: { ...process.env, KEEL_FIXTURE_PIDS_FILE: pidsFile },
        encoding: 'utf8',
        timeout: 60_000,
      });
      const output = `${result.stdout}${result.stderr}`;
      expect(output).toMatch(/^tests: 2 passed, 1 failed, 0 skipped$/m);
      expect(output).toContain("expected 'this assertion' to be 'failing'");
      expect(result.status).toBe(1);
      const pids = Object.fromEntries(
        fs
          .readFileSync(pidsFile, 'utf8')
          .trim()
          .split('\n')
          .map((line) => line.split(' ')),
      ) as Record<string, string>;
      expect(Object.keys(pids).sort()).toEqual(['failed', 'passed']);
      expect(Object.values(pids).map((pid) => isRunning(Number(pid)))).toEqual([false, false]);
    } finally {
      // Were the helper broken, its sleepers must not outlive this test either.
      for (const line of fs
        .readFileSync(path.join(dir, 'pids'), { encoding: 'utf8', flag: 'a+' })
        .split('\n')) {
        const pid = Number(line.split(' ')[1]);
        if (pid > 0 && isRunning(pid)) process.kill(pid, 'SIGKILL');
      }
      removeTempDir(dir);
    }
  }, 90_000);
});
