import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isLeaseStale } from '../../store/sessionIndex.js';
import { SessionLockedError } from './logErrors.js';

/**
 * Beside a log while the process creating it has not registered it yet: who is creating it. A folder with
 * a committed session_created and no index row is a crashed create only when this mark's process is gone.
 */
export const CREATING_MARK = 'creating.json';

export function writeCreatingMark(dir: string): void {
  const mark = { pid: process.pid, hostname: os.hostname(), acquiredAt: new Date().toISOString() };
  fs.writeFileSync(path.join(dir, CREATING_MARK), JSON.stringify(mark));
}

/** Throws SessionLockedError while a live process is still creating the session; clears a dead one's mark. */
export function assertNotBeingCreated(dir: string, id: string): void {
  const file = path.join(dir, CREATING_MARK);
  let mark: { pid: number; hostname: string; acquiredAt: string };
  try {
    mark = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof mark;
  } catch {
    return; // no mark (or one torn by a crash while it was written): nobody is creating it
  }
  if (typeof mark.pid === 'number' && !isLeaseStale(mark)) throw new SessionLockedError(id, mark.pid);
  fs.rmSync(file, { force: true });
}

/** Removes the mark once the session's index row committed. */
export function clearCreatingMark(dir: string): void {
  fs.rmSync(path.join(dir, CREATING_MARK), { force: true });
}
