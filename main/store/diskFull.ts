import fs from 'node:fs';
import path from 'node:path';

/** Below this much free space, a disk I/O error while writing is taken for a full disk. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** How a child program (git) says it: its words end up in the error's message. */
const OUT_OF_SPACE = /no space left on device|out of diskspace|disk quota exceeded/i;

/** What was being done when the disk filled: opening a file, creating a session, appending events. */
export type DiskFullStage = 'open' | 'create' | 'append';

/**
 * Thrown when a file Keel writes could not grow because its disk (or quota) is full. Names the file; a
 * session's log adds the session and the kinds of the events that were not recorded, so the message can say
 * what to do. Nothing acknowledged before it is lost: SQLite rolled the failed transaction back.
 */
export class DiskFullError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly sessionId?: string,
    readonly stage?: DiskFullStage,
    /** The kinds of the events whose append failed (undefined: no append was under way). */
    readonly kinds?: readonly string[],
  ) {
    super(`${file} could not be written: the disk is full (${reason})`);
    this.name = 'DiskFullError';
  }
}

/**
 * True when `error` says the disk is full: SQLite's SQLITE_FULL, ENOSPC / EDQUOT from the file system, or a
 * SQLite disk I/O error (a WAL's shared-memory file that could not grow says SQLITE_IOERR_SHMSIZE) while the
 * disk holding `file` has almost no space left.
 */
export function isDiskFull(error: unknown, file: string): boolean {
  if (error instanceof Error && OUT_OF_SPACE.test(error.message)) return true;
  // A refusal that keeps the file system's error as its cause (a confined write's, sandbox/pathErrors.ts).
  if (error instanceof Error && error.cause !== undefined && isDiskFull(error.cause, file)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true;
  if (!code.startsWith('SQLITE_IOERR')) return false;
  try {
    const stats = fs.statfsSync(path.dirname(file));
    return stats.bavail * stats.bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/**
 * `error` as a DiskFullError about `file` when it says the disk is full (one already naming a file keeps it,
 * with the caller's session and stage), else `error` unchanged: for `catch (e) { throw asDiskFull(e, …) }`.
 */
export function asDiskFull(
  error: unknown,
  file: string,
  context: { sessionId?: string; stage?: DiskFullStage; kinds?: readonly string[] } = {},
): unknown {
  if (error instanceof DiskFullError) {
    // The file it names stays; the caller knows better what was under way (creating a session, appending).
    const { file, reason } = error;
    return new DiskFullError(
      file,
      reason,
      error.sessionId ?? context.sessionId,
      context.stage ?? error.stage,
      error.kinds ?? context.kinds,
    );
  }
  // A file-system error names its own path, git quotes the file it could not write (the last one quoted);
  // SQLite's name none, so the caller's file is the one.
  // A refusal that wraps the file system's error (its cause) is told by that error's own words.
  let source: unknown = error;
  while (source instanceof Error && source.cause !== undefined && !OUT_OF_SPACE.test(source.message))
    source = source.cause;
  const own = (source as { path?: unknown } | null)?.path;
  const message = source instanceof Error ? source.message : String(source);
  const quoted = [...message.matchAll(/'(\/[^']+)'/g)].at(-1)?.[1];
  const where = typeof own === 'string' ? own : (quoted ?? file);
  if (!isDiskFull(error, where)) return error;
  // SQLite's words are the reason; anyone else's long message (git's output, a refused write) is cut to these.
  const reason = OUT_OF_SPACE.exec(message)?.[0] ?? message;
  return new DiskFullError(where, reason, context.sessionId, context.stage, context.kinds);
}
