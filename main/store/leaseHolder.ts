import os from 'node:os';

/** The process holding a session's writer lease. */
export type LeaseHolder = { pid: number; hostname: string; acquiredAt: string };

/** Leases taken before the machine booted (minus clock slack) belong to processes that are gone. */
const BOOT_SLACK_MS = 5_000;

/** True when the lease's holder is known to be gone: same host and its pid is dead or predates the boot. */
export function isLeaseStale(holder: LeaseHolder): boolean {
  if (holder.hostname !== os.hostname()) return false;
  const acquired = Date.parse(holder.acquiredAt);
  const bootedAt = Date.now() - os.uptime() * 1000;
  if (Number.isFinite(acquired) && acquired < bootedAt - BOOT_SLACK_MS) return true;
  return !isProcessAlive(holder.pid);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
