import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isLeaseStale } from '../../store/sessionIndex.js';
import {
  DamagedLogError,
  SessionExistsError,
  SessionLockedError,
  SessionNotFoundError,
} from './logErrors.js';
import { artifactsDir, eventsFile, sessionAreaDir, sessionDir, sessionsDir } from '../paths.js';

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

/**
 * Claims `<home>/sessions/<id>` for a new session (a non-recursive mkdir is the atomic claim: of two processes
 * creating one id, one gets EEXIST, SessionExistsError), marks it as being created and makes its folders. A
 * folder left by a create that died before its log was named (its creator's mark, no events.sqlite: a crash, a
 * full disk) is not a session: it is removed and claimed again, so the same id can be created after a crash.
 */
export function claimSessionFolder(home: string, id: string): string {
  const dir = sessionDir(home, id);
  fs.mkdirSync(sessionsDir(home), { recursive: true });
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!isDeadCreate(dir)) throw new SessionExistsError(id);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir);
  }
  try {
    writeCreatingMark(dir);
    fs.mkdirSync(artifactsDir(dir));
    fs.mkdirSync(sessionAreaDir(dir), { recursive: true });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true }); // a full disk: the claim is given back, nothing left
    throw error;
  }
  return dir;
}

/** A folder whose creator's mark names a process that is gone and that never got its events.sqlite. */
function isDeadCreate(dir: string): boolean {
  if (fs.existsSync(eventsFile(dir))) return false;
  try {
    const mark = JSON.parse(fs.readFileSync(path.join(dir, CREATING_MARK), 'utf8')) as {
      pid: number;
      hostname: string;
      acquiredAt: string;
    };
    return typeof mark.pid === 'number' && isLeaseStale(mark);
  } catch {
    return false; // no mark (another creator's claim before it wrote one) or a torn one: not ours to remove
  }
}

/** Removes the mark once the session's index row committed. */
export function clearCreatingMark(dir: string): void {
  fs.rmSync(path.join(dir, CREATING_MARK), { force: true });
}

/**
 * Throws unless `<dir>/events.sqlite` is there to open: SessionNotFoundError for no folder, an empty one or a
 * create that never got that far (its mark is there); DamagedLogError when a session's folder has lost its
 * log or holds an empty one, which is damage, not absence.
 */
export function assertLogPresent(dir: string, id: string): void {
  const file = eventsFile(dir);
  const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
  if (size !== undefined && size > 0) return;
  // An empty folder is a create between its claim (mkdir) and its mark, not a session that lost its log.
  const held = entriesOf(dir) > 0;
  const session = held && !fs.existsSync(path.join(dir, CREATING_MARK));
  if (!session && size === undefined) throw new SessionNotFoundError(id);
  if (session)
    throw new DamagedLogError(id, file, size === undefined ? 'the file is missing' : 'the file is empty');
}

function entriesOf(dir: string): number {
  try {
    return fs.readdirSync(dir).length;
  } catch {
    return 0; // no folder (or it went meanwhile)
  }
}
