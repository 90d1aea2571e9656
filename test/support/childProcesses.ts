import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/*
 * The one place tests hand the child processes they start, so none outlives a failing assertion.
 * `childProcessesSetup.ts` (a Vitest setup file) kills, after each failed test, the children that test
 * started, and at the end of each test file every tracked child still alive. Plain Node: no Vitest import.
 */

/** How a child ended: its exit code, or the signal that killed it. */
export type ChildEnd = { code: number | null; signal: NodeJS.Signals | null };

type Tracked = {
  child: ChildProcess;
  /** True when the child leads its own process group (spawned `detached`): the whole group is killed. */
  leadsGroup: boolean;
  /** The id of the test that was running when it started; undefined for a `beforeAll` or module scope. */
  startedDuring: string | undefined;
  closed: Promise<ChildEnd>;
};

/** How long a killed child may take to close before its pipes are cut (a grandchild may hold them), and after. */
const CLOSE_GRACE_MS = 5_000;

const alive = new Map<ChildProcess, Tracked>();
const closedOf = new WeakMap<ChildProcess, Promise<ChildEnd>>();
let currentTest: string | undefined;

// Last resort when the worker exits before the hooks ran (e.g. it was told to stop): no child survives it.
process.on('exit', () => {
  for (const tracked of alive.values()) kill(tracked);
});

/** Records which test is running (undefined between tests); children started meanwhile belong to it. */
export function setCurrentTest(testId: string | undefined): void {
  currentTest = testId;
}

/**
 * Tracks `child` until it has exited and its stdio has closed, so `killTrackedChildren` can end it; returns
 * it unchanged. Call it right after `spawn`, before the child could have closed.
 */
export function trackChild<T extends ChildProcess>(child: T): T {
  const closed = new Promise<ChildEnd>((resolve) => {
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      alive.delete(child);
      resolve({ code, signal });
    });
  });
  closedOf.set(child, closed);
  // A child that never started (ENOENT) emits `error` and `close`; one that did has a pid.
  if (child.pid !== undefined) {
    alive.set(child, { child, leadsGroup: leadsGroup(child.pid), startedDuring: currentTest, closed });
  }
  return child;
}

/**
 * Resolves once a tracked child has exited and its stdout and stderr have closed: every line it wrote
 * has been delivered to the `data` listeners by then, which `exit` alone does not promise.
 */
export function waitForClose(child: ChildProcess): Promise<ChildEnd> {
  const closed = closedOf.get(child);
  if (!closed)
    throw new Error(`child ${child.pid ?? '(never started)'} is not tracked: start it with trackChild`);
  return closed;
}

/**
 * SIGKILLs every tracked child still alive (its whole process group when it leads one), or only those
 * started during the test `startedDuring`, and resolves once each has closed; returns their pids. Rejects,
 * naming it, if one has still not closed twice CLOSE_GRACE_MS after the kill.
 */
export async function killTrackedChildren(filter: { startedDuring?: string } = {}): Promise<number[]> {
  const doomed = [...alive.values()].filter(
    (tracked) => filter.startedDuring === undefined || tracked.startedDuring === filter.startedDuring,
  );
  for (const tracked of doomed) kill(tracked);
  const closes = await Promise.allSettled(doomed.map(awaitClose));
  const failure = closes.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return doomed.map((tracked) => tracked.child.pid ?? -1);
}

function kill(tracked: Tracked): void {
  const pid = tracked.child.pid;
  if (pid === undefined) return;
  try {
    // A group outlives its leader while any member lives, so it is signalled even after the leader exited.
    if (tracked.leadsGroup) process.kill(-pid, 'SIGKILL');
    else if (tracked.child.exitCode === null && tracked.child.signalCode === null)
      tracked.child.kill('SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function awaitClose(tracked: Tracked): Promise<void> {
  if (await closesWithin(tracked, CLOSE_GRACE_MS)) return;
  // Something it started still holds the pipes open: stop reading them so `close` comes.
  for (const stream of tracked.child.stdio) stream?.destroy();
  if (await closesWithin(tracked, CLOSE_GRACE_MS)) return;
  throw new Error(
    `child ${tracked.child.pid} (${tracked.child.spawnargs.join(' ')}) did not close after SIGKILL`,
  );
}

async function closesWithin(tracked: Tracked, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const closed = await Promise.race([tracked.closed.then(() => true), late]);
  clearTimeout(timer);
  return closed;
}

/** Whether `pid` is a live process: it exists and is not a zombie waiting to be reaped (Linux /proc). */
export function isRunning(pid: number): boolean {
  try {
    return statFields(pid)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether `pid` leads its own process group (Linux /proc; elsewhere false, and the pid alone is killed). */
function leadsGroup(pid: number): boolean {
  try {
    return Number(statFields(pid)[2]) === pid;
  } catch {
    return false;
  }
}

/** The fields of /proc/PID/stat after the parenthesised command name: state, ppid, pgrp, ... */
function statFields(pid: number): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
