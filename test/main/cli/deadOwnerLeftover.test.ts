import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { findMarkedProcesses } from '../../../main/runner/processTree.js';
import { readProcess, HOST_PID_NAMESPACE, type SeenProcess } from '../../support/boxProbe.js';
import { runKeel } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { startKeel, type KeelProcess } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs } from '../../support/sessionFixture.js';

/*
 * The leftover of issue 20: a Keel killed between bwrap's clone and bwrap releasing its child leaves that
 * child waiting in bwrap's setup for ever (never armed against bwrap, it outlives it; it runs nothing). Resume
 * ends it by its run marker; a session never resumed used to keep it. Here the state is made for real: the
 * built CLI runs a boxed command with its temp folder in the test's, this test fills the run's lifeline FIFO
 * (bwrap's --json-status-fd) the moment it appears, so bwrap blocks writing its status right after the clone
 * and before the release, and then Keel is SIGKILLed. The next start of a host (`keel sessions`, the
 * handlers of the app and keel serve) must end the child without resuming anything, and never touch a live
 * Keel's.
 */

let tmp: string;
const held: number[] = [];
/** The runs a test held: whatever of them a failing test leaves is killed after it. */
const runs: string[] = [];

const cli = useCliFixture('keel-leftover-', {
  prepare: ({ dir }) => {
    tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
  },
  cleanup: () => {
    for (const fd of held.splice(0)) fs.closeSync(fd);
    for (const pid of runs.splice(0).flatMap((runId) => findMarkedProcesses(runId))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for Keel's run scratch folder in `tmp` and its lifeline FIFO, opens the FIFO (read-write, so the open
 * never waits) and fills its buffer: the next write, bwrap's status after its clone, blocks. Returns the
 * folder and the run id it names. Yields to the event loop between looks (the provider server runs here).
 */
async function holdBwrapInSetup(keelPid: number): Promise<{ scratch: string; runId: string }> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    const name = fs.readdirSync(tmp).find((entry) => entry.startsWith(`keel-run-${keelPid}-`));
    const fifo = name === undefined ? undefined : path.join(tmp, name, 'lifeline');
    if (name !== undefined && fifo !== undefined && fs.existsSync(fifo)) {
      const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
      held.push(fd);
      const block = Buffer.alloc(4096, 120);
      for (;;) {
        try {
          fs.writeSync(fd, block);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw error;
        }
      }
      const scratch = path.join(tmp, name);
      const runId = fs.readFileSync(path.join(scratch, 'run-id'), 'utf8');
      runs.push(runId);
      return { scratch, runId };
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('Keel made no run scratch folder with a lifeline');
}

/** The living processes carrying the run's marker. */
function marked(runId: string): SeenProcess[] {
  return findMarkedProcesses(runId).flatMap((pid) => readProcess(pid) ?? []);
}

/** Waits until `check` holds for the run's marked processes (up to 10 s); returns them. */
async function until(runId: string, check: (seen: SeenProcess[]) => boolean): Promise<SeenProcess[]> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const seen = marked(runId);
    if (check(seen) || performance.now() > deadline) return seen;
    await sleep(20);
  }
}

/** A bwrap child caught in setup: in a PID namespace of its own, still bwrap's program, running nothing. */
const inSetup = (p: SeenProcess) =>
  p.pidNamespace !== HOST_PID_NAMESPACE && p.nsPids.length > 1 && /^\S*bwrap /.test(p.cmdline);

/** Starts `keel run` with a boxed command, holds its bwrap in setup, and returns it with its run. */
async function startHeldRun(): Promise<{ run: KeelProcess; scratch: string; runId: string }> {
  cli.server.enqueue({
    kind: 'reply',
    toolCalls: [{ name: 'run_command', arguments: { command: 'echo ran >> ledger.txt' } }],
  });
  const run = startKeel(
    cli.home,
    newSessionArgs(cli, { policy: 'full-auto', prompt: 'go', extra: ['--commit', 'direct'] }),
    { TMPDIR: tmp },
  );
  const { scratch, runId } = await holdBwrapInSetup(run.child.pid as number);
  // bwrap (Keel's child) and its clone, waiting to be released: two processes of the run.
  const seen = await until(runId, (found) => found.length === 2 && found.some(inSetup));
  expect(seen.filter(inSetup), JSON.stringify(seen)).toHaveLength(1);
  return { run, scratch, runId };
}

/** Kills Keel and returns the child it left in bwrap's setup, once bwrap itself is gone. */
async function killKeel(run: KeelProcess, runId: string): Promise<SeenProcess> {
  run.child.kill('SIGKILL');
  await run.done;
  const left = await until(runId, (found) => found.length === 1);
  expect(left, JSON.stringify(left)).toHaveLength(1);
  const child = left[0] as SeenProcess;
  expect(inSetup(child)).toBe(true);
  expect(child.ppid).not.toBe(run.child.pid);
  // It is a leftover: it stays (nothing arms it, nothing releases it).
  await sleep(500);
  expect(readProcess(child.pid)?.startTicks).toBe(child.startTicks);
  return child;
}

function sessionId(): string {
  const [id, ...rest] = fs.readdirSync(path.join(cli.home, 'sessions'));
  expect(rest).toEqual([]);
  return id as string;
}

describe('a bwrap child a killed Keel left in setup', () => {
  it('is ended by the next keel start without a resume, and a live Keel’s never is', async () => {
    const { run, scratch, runId } = await startHeldRun();

    // While its Keel lives, another start leaves everything of it alone.
    expect(runKeel(cli.home, ['sessions'], { env: { TMPDIR: tmp } }).code).toBe(0);
    expect(marked(runId)).toHaveLength(2);
    expect(fs.existsSync(scratch)).toBe(true);

    const child = await killKeel(run, runId);
    expect(fs.existsSync(scratch)).toBe(true);
    const id = sessionId();
    const logged = eventsOf(cli.home, id).map((event) => event.kind);
    expect(logged.at(-1)).toBe('tool_call_started');

    const listed = runKeel(cli.home, ['sessions'], { env: { TMPDIR: tmp } });
    expect(listed.code, listed.stderr).toBe(0);
    expect(readProcess(child.pid)?.startTicks === child.startTicks).toBe(false);
    expect(marked(runId)).toEqual([]);
    expect(fs.existsSync(scratch)).toBe(false);
    // Nothing was resumed or run: the log is as the kill left it, the command never ran.
    expect(eventsOf(cli.home, id).map((event) => event.kind)).toEqual(logged);
    expect(fs.existsSync(path.join(cli.project, 'ledger.txt'))).toBe(false);
  }, 60_000);

  it('is ended when the app or keel serve starts (their handler table)', async () => {
    const { run, scratch, runId } = await startHeldRun();
    const child = await killKeel(run, runId);

    // os.tmpdir() reads TMPDIR when the sweep starts: the handlers' start looks in the test's temp folder.
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    let handlers: ReturnType<typeof createHandlers>;
    try {
      handlers = createHandlers({
        home: cli.home,
        mode: 'serve',
        version: '1',
        env: { PATH: process.env.PATH ?? '' },
      });
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
    try {
      // The handlers start the sweep and do not wait for it: its end is the folder's removal.
      await expect.poll(() => fs.existsSync(scratch), { timeout: 10_000 }).toBe(false);
      expect(readProcess(child.pid)?.startTicks === child.startTicks).toBe(false);
      expect(marked(runId)).toEqual([]);
      expect(fs.existsSync(path.join(cli.project, 'ledger.txt'))).toBe(false);
    } finally {
      await handlers.close();
    }
  }, 60_000);
});
