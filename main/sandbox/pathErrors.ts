// The refusals of path confinement: the two error classes callers catch, and how an errno met during a
// confined operation becomes one of them. See README.md.
import path from 'node:path';

/** Why a path argument was refused before any file was touched. */
export type PathRefusal =
  | 'escape'
  | 'nul_byte'
  | 'control_char'
  | 'empty'
  | 'home'
  | 'hidden'
  | 'too_long'
  | 'symlink_loop'
  | 'windows_device'
  | 'root_invalid';

/** Thrown when a path argument lands outside the workspace or is malformed; the message names the argument. */
export class PathEscapeError extends Error {
  override readonly name = 'PathEscapeError';
  constructor(
    readonly argName: string,
    readonly code: PathRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Why a confined read or write refused a file that is inside the workspace. */
export type FileRefusal =
  | 'not_found'
  | 'not_directory'
  | 'is_directory'
  | 'not_regular'
  | 'hard_linked'
  | 'too_large'
  | 'exists'
  | 'changed'
  | 'protected'
  | 'denied'
  | 'io';

/** Thrown by confined reads and writes for a file inside the workspace that is unsafe or unusable. */
export class ConfinedFileError extends Error {
  override readonly name = 'ConfinedFileError';
  constructor(
    readonly argName: string,
    readonly code: FileRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** How an escape refusal names the root; callers that know the root's name for the model put it in its place. */
export const OUTSIDE_ROOT = 'outside the folder it must stay in';

/**
 * A folder met on the way, quoted as the model knows it: relative to the root it must stay in, never the
 * host path (which can name the Keel home and a session id).
 */
export function quoteInRoot(rootReal: string, abs: string): string {
  const rel = path.relative(rootReal, abs).split(path.sep).join('/');
  return JSON.stringify(rel === '' ? '.' : rel);
}

function quoteArg(arg: string): string {
  const shown = arg.length > 200 ? `${arg.slice(0, 200)}…` : arg;
  return JSON.stringify(shown);
}

/** A PathEscapeError whose message names the argument, quotes it (cut at 200 characters) and says why. */
export function refuse(argName: string, arg: string, code: PathRefusal, why: string): PathEscapeError {
  return new PathEscapeError(argName, code, `Argument "${argName}" (${quoteArg(arg)}): ${why}.`);
}

/** A ConfinedFileError whose message names the argument, quotes it (cut at 200 characters) and says why. */
export function refuseFile(argName: string, arg: string, code: FileRefusal, why: string): ConfinedFileError {
  return new ConfinedFileError(argName, code, `Argument "${argName}" (${quoteArg(arg)}): ${why}.`);
}

/**
 * Turns an errno error met after resolution into a ConfinedFileError a person can act on: a name that
 * vanished or changed kind mid-operation is a race ("changed"), permissions are "denied", the rest "io".
 */
export function asConfinedError(error: unknown, argName: string, arg: string): Error {
  if (error instanceof ConfinedFileError || error instanceof PathEscapeError) return error;
  const code = errnoCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'EINVAL' || code === 'EISDIR') {
    return refuseFile(
      argName,
      arg,
      'changed',
      'the path changed during the operation; nothing was written outside the workspace',
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return refuseFile(argName, arg, 'denied', `permission denied (${code})`);
  }
  // Node's own message names the host path (`EIO: i/o error, read '/abs/...'`): say the code and the call.
  const syscall =
    typeof error === 'object' && error !== null && 'syscall' in error ? String(error.syscall) : '';
  const detail =
    code !== undefined
      ? `${code}${syscall === '' ? '' : ` in ${syscall}`}`
      : error instanceof Error
        ? error.message
        : String(error);
  const refused = refuseFile(argName, arg, 'io', `the file system refused the operation: ${detail}`);
  // The errno error stays as the cause (not in the message, which the model sees): a full disk is still told
  // apart by the callers that say so (store/diskFull.ts).
  refused.cause = error;
  return refused;
}

/** The errno code of a Node file system error ("ENOENT"...), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
