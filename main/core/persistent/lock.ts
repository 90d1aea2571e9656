import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** How long a commit waits for another session's commit to the same backing folder. */
const WAIT_MS = 60_000;
const POLL_MS = 15;

/** Thrown when another live process kept a backing folder locked for longer than the wait. */
export class BackingBusyError extends Error {
  constructor(readonly backing: string) {
    super(`${backing} is being committed to by another session; try again in a moment`);
    this.name = 'BackingBusyError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the lock folder's owner is a process on this host that no longer runs. */
function isStale(lockDir: string): boolean {
  try {
    const owner = JSON.parse(fs.readFileSync(path.join(lockDir, 'owner.json'), 'utf8')) as {
      pid?: number;
      hostname?: string;
    };
    if (owner.hostname !== os.hostname() || typeof owner.pid !== 'number') return false;
    return !isAlive(owner.pid);
  } catch {
    // No owner file yet: the owner is between mkdir and writing it, or died there. Give it a second.
    try {
      return Date.now() - fs.statSync(lockDir).mtimeMs > 1_000;
    } catch {
      return false;
    }
  }
}

/** In-process holders, so two sessions of one process queue instead of polling each other. */
const local = new Map<string, Promise<void>>();

/**
 * Runs `use` while holding the lock of one backing folder across processes (a folder under `locksRoot`
 * named by the folder's path hash; mkdir is the atomic claim, a dead owner's lock is taken over). Commits
 * from two sessions to one Persistent Dir therefore never interleave their check-then-write.
 */
export async function withBackingLock<T>(
  locksRoot: string,
  backing: string,
  use: () => Promise<T>,
): Promise<T> {
  const name = createHash('sha256').update(backing).digest('hex').slice(0, 32);
  const lockDir = path.join(locksRoot, `persistent-${name}`);
  const previous = local.get(lockDir) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const chained = previous.then(() => mine);
  local.set(lockDir, chained);
  await previous;
  try {
    await acquire(locksRoot, lockDir, backing);
    try {
      return await use();
    } finally {
      fs.rmSync(lockDir, { recursive: true, force: true });
    }
  } finally {
    release();
    if (local.get(lockDir) === chained) local.delete(lockDir);
  }
}

async function acquire(locksRoot: string, lockDir: string, backing: string): Promise<void> {
  fs.mkdirSync(locksRoot, { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(
        path.join(lockDir, 'owner.json'),
        JSON.stringify({ pid: process.pid, hostname: os.hostname() }),
      );
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (isStale(lockDir)) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new BackingBusyError(backing);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
