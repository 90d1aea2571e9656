import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * One build at a time per checkout, whoever asks: parallel test files (vitest workers) that all find dist/ or
 * out/ stale must compile once, not race two compilers over the same output. The lock is a folder in the temp
 * dir, named by the build and a hash of the checkout, so worktrees side by side never wait on each other.
 */

/** The repository root (this file is test/support/buildOnce.ts, or dist/test/support/buildOnce.js when compiled). */
export const REPO_ROOT = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

/** Longer than any build: a lock this old was left by a crashed run and is taken over. */
const LOCK_STALE_MS = 180_000;

const CHECKOUT_KEY = crypto.createHash('sha1').update(REPO_ROOT).digest('hex').slice(0, 12);

/**
 * Runs `build` when `isStale()` is true, holding the lock folder of `name` so that one process builds while the
 * others wait (up to 180 s); each waiter asks `isStale()` again once it holds the lock, so what another just
 * built is not built twice. `build` throws when it could not make the outputs fresh.
 */
export async function buildOnce(
  name: string,
  isStale: () => boolean,
  build: () => void | Promise<void>,
): Promise<void> {
  if (!isStale()) return;
  const lock = path.join(os.tmpdir(), `keel-${name}-build-${CHECKOUT_KEY}.lock`);
  await takeLock(lock, name);
  try {
    if (!isStale()) return;
    await build();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

async function takeLock(lock: string, name: string): Promise<void> {
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const lockTime = fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - lockTime > LOCK_STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited too long for another ${name} build (lock ${lock})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
