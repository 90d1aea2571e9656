import fs from 'node:fs';
import path from 'node:path';
import { ZodError } from 'zod';
import {
  asDiskFull,
  DamagedLogError,
  DiskFullError,
  HarnessError,
  HarnessSessionBusyError,
  RulesError,
  SessionExistsError,
  SessionLockedError,
  SessionNotFoundError,
  SetupTrustError,
  UnknownCompactionError,
} from '../core/harness/errors.js';
import { UncommittedChangesError } from '../core/harness/newTurn.js';
import { eventsFile, sessionDir } from '../core/harness/start.js';
import { ExitCode } from './exitCodes.js';

/** An error meant for the person at the terminal: `message` is one line; `details` are printed below it. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.usage,
    readonly details: readonly string[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** What the user sees for a failure: one line (plus optional detail lines) and the exit code. */
export type ErrorReport = { message: string; details: readonly string[]; exitCode: number };

/**
 * Maps anything a command can throw to a report a person can act on. Never includes a stack:
 * unknown errors become their message on one line with exit code 1.
 */
export function describeError(
  error: unknown,
  home: string | undefined,
  argv: readonly string[] = [],
): ErrorReport {
  const report = (message: string, exitCode: number, details: readonly string[] = []): ErrorReport => ({
    message: oneLine(message),
    details: details.map(oneLine),
    exitCode,
  });
  if (error instanceof CliError) return report(error.message, error.exitCode, error.details);
  if (error instanceof UncommittedChangesError) {
    return report(
      `session ${error.sessionId} has uncommitted changes in ${error.what} that a new turn would discard: ` +
        `keel commit ${error.sessionId} applies them, keel discard ${error.sessionId} drops them`,
      ExitCode.usage,
    );
  }
  // The harness's refusals (the log says no, no such grant): the person's input does not apply.
  if (error instanceof HarnessError) return report(error.message, ExitCode.usage);
  if (error instanceof DamagedLogError) {
    const file = path.isAbsolute(error.file) || home === undefined ? error.file : path.join(home, error.file);
    const event = error.seq === undefined ? '' : `event ${error.seq} of `;
    return report(
      `session ${error.sessionId}: ${event}its log ${file} is damaged (${error.reason}); restore that file ` +
        'from a backup, or import the session again from an export (keel import FILE)',
      ExitCode.failure,
    );
  }
  // Whatever said it (SQLite, the file system, git), a full disk is told as one: file, session, what to do.
  const full = asDiskFull(error, home ?? 'the Keel home');
  if (full instanceof DiskFullError) return report(describeDiskFull(full, home, argv), ExitCode.failure);
  if (error instanceof SessionNotFoundError) {
    return report(`no session ${error.sessionId} (see keel sessions)`, ExitCode.usage);
  }
  if (error instanceof SessionLockedError || error instanceof HarnessSessionBusyError) {
    return report(
      `session ${error.sessionId} is in use by another Keel process (pid ${error.holderPid}); ` +
        'wait for it to finish or stop it, then retry',
      ExitCode.failure,
    );
  }
  if (error instanceof SessionExistsError) return report(error.message, ExitCode.usage);
  if (error instanceof UnknownCompactionError) return report(error.message, ExitCode.usage);
  if (error instanceof SetupTrustError || error instanceof RulesError)
    return report(error.message, ExitCode.usage);
  if (error instanceof ZodError) {
    const first = error.issues[0];
    return report(
      `a stored event does not match the event schema (${first ? `${first.path.join('.')}: ${first.message}` : 'invalid'}); ` +
        'the session database may be corrupt or from a newer Keel',
      ExitCode.failure,
    );
  }
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code?.startsWith('SQLITE_')) {
    const where = home ? ` in ${home}` : '';
    if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
      const file = home === undefined ? undefined : findDamagedDatabase(home, argv);
      return report(
        file === undefined
          ? `a Keel database${where} is corrupt or not a database (${message})`
          : `${file} is corrupt or not a database (${message}); restore it from a backup or move it aside`,
        ExitCode.failure,
      );
    }
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      return report(
        `a Keel database${where} is busy in another process (${message}); retry`,
        ExitCode.failure,
      );
    }
    return report(`database error${where}: ${message} (${code})`, ExitCode.failure);
  }
  return report(message, ExitCode.failure);
}

/**
 * A full disk, said as what happened and what to do: the file, the session, and whether `keel resume`
 * continues (the turn's events up to the failed append are recorded) or the command is run again (nothing of
 * it was recorded: the disk was full before its prompt or its first write).
 */
function describeDiskFull(error: DiskFullError, home: string | undefined, argv: readonly string[]): string {
  const what = `${error.file} could not be written: the disk is full (${error.reason})`;
  const id = error.sessionId ?? sessionNamed(home, argv);
  if (error.stage === 'create' || id === undefined) {
    const created = error.stage === 'create' ? 'no session was created: ' : '';
    return `${created}${what}. Free space on that disk, then run the command again`;
  }
  const recordedNothing = error.stage === 'open' || error.kinds?.includes('user_message') === true;
  if (recordedNothing && argv.includes('run')) {
    return (
      `session ${id}: ${what}. The prompt was not recorded; free space on that disk, then send it again ` +
      `(keel run --session ${id} PROMPT)`
    );
  }
  if (recordedNothing && !argv.includes('resume')) {
    return `session ${id}: ${what}. Nothing of this command was recorded; free space on that disk, then run it again`;
  }
  return (
    `session ${id}: ${what}. Everything recorded before is intact; free space on that disk, then ` +
    `\`keel resume ${id}\` continues the turn`
  );
}

/** The session a command line names (`--session ID`, or an argument that is a session folder of the home). */
function sessionNamed(home: string | undefined, argv: readonly string[]): string | undefined {
  const flag = argv.indexOf('--session');
  const named = flag >= 0 ? argv[flag + 1] : undefined;
  if (named !== undefined) return named;
  if (home === undefined) return undefined;
  return argv.find((arg) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(arg) && fs.existsSync(sessionDir(home, arg)));
}

/** The error's `code` property (Node system errors, SQLite errors), if it has a string one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

const SQLITE_HEADER = 'SQLite format 3\0';

/**
 * SQLite's errors do not name the file, so look for it: the home's index, then the events file of
 * any session named on the command line, whichever does not start with SQLite's header.
 */
function findDamagedDatabase(home: string, argv: readonly string[]): string | undefined {
  const candidates = [
    path.join(home, 'index.sqlite'),
    ...argv
      .filter((arg) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(arg))
      .map((id) => eventsFile(sessionDir(home, id))),
  ];
  for (const file of candidates) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, 'r');
      const header = Buffer.alloc(SQLITE_HEADER.length);
      const read = fs.readSync(fd, header, 0, header.length, 0);
      // An empty file is a valid empty database to SQLite; anything else must start with the header.
      if (read > 0 && header.toString('latin1', 0, read) !== SQLITE_HEADER) return file;
    } catch {
      // Missing or unreadable: not the file SQLite just read.
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
  return undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
