import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * Small tmpfs mounts for full-disk tests: a real file system that really runs out of space (ENOSPC,
 * SQLITE_FULL), as a user's disk does. Mounting needs root (CAP_SYS_ADMIN); the tests run as root here and in
 * .ci/run. Where mounting is refused, `TMPFS_REFUSED` says why and the tests skip with that reason.
 */

function probe(): string | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
    if (mounted.error) return `mount could not run (${mounted.error.message})`;
    if (mounted.status !== 0) return `mount -t tmpfs is not permitted here (${mounted.stderr.trim()})`;
    spawnSync('umount', [dir]);
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Why a tmpfs cannot be mounted on this machine, or undefined when it can. */
export const TMPFS_REFUSED: string | undefined = probe();

/** Mounts a tmpfs of `size` (mount's syntax: `2m`) on the existing folder `dir`. */
export function mountTmpfs(dir: string, size = '2m'): void {
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) throw new Error(`mount tmpfs on ${dir} failed: ${mounted.stderr}`);
}

/** Unmounts `dir` when a tmpfs is mounted there (lazily, so a file still open does not keep it). */
export function unmountTmpfs(dir: string): void {
  spawnSync('umount', ['-l', dir]);
}

/**
 * Fills the file system holding `dir` to the last byte with `<dir>/<name>` and returns its path; `leave`
 * bytes are then given back (the file is cut by that much), so a test can leave room for part of a write.
 */
export function fillDisk(dir: string, leave = 0, name = 'filler'): string {
  const filler = path.join(dir, name);
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 7);
  try {
    for (const size of [block.length, 4096, 512, 1]) {
      for (;;) {
        try {
          fs.writeSync(fd, block, 0, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  if (leave > 0) fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - leave));
  return filler;
}

/** Bytes still free on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const stats = fs.statfsSync(dir);
  return stats.bavail * stats.bsize;
}
