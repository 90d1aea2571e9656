/** Thrown when another live process holds the session's writer lease. */
export class SessionLockedError extends Error {
  constructor(
    readonly sessionId: string,
    readonly holderPid: number,
  ) {
    super(`session ${sessionId} is open for writing in another process (pid ${holderPid})`);
    this.name = 'SessionLockedError';
  }
}

/** Thrown when a session id is not in the home. */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`no session ${sessionId}`);
    this.name = 'SessionNotFoundError';
  }
}

/** Thrown by create/importEvents when the home already has a session with that id. Nothing was written. */
export class SessionExistsError extends Error {
  constructor(readonly sessionId: string) {
    super(`a session ${sessionId} already exists (import without keeping the id to get a new one)`);
    this.name = 'SessionExistsError';
  }
}

/**
 * Thrown when a session's log file is damaged, empty or gone while its folder says it exists: names the
 * session, the file and, for one bad event, its seq, so a person knows what to restore.
 */
export class DamagedLogError extends Error {
  constructor(
    readonly sessionId: string,
    readonly file: string,
    readonly reason: string,
    readonly seq?: number,
  ) {
    super(
      `session ${sessionId}: ${seq === undefined ? '' : `event ${seq} of `}its log ${file} is damaged (${reason})`,
    );
    this.name = 'DamagedLogError';
  }
}

/** SQLite's answers for a file that is not a database or whose pages are malformed. */
export function isDatabaseDamage(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/** The events table's dense-seq trigger (events migration 001) refused a row: its seq was not the last + 1. */
export function isSeqRefusal(error: unknown): boolean {
  return error instanceof Error && error.message.includes('seq must be the last seq + 1');
}

/** An error's message alone (no class name), for one-line notices. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export { asDiskFull, DiskFullError } from '../../store/diskFull.js';
