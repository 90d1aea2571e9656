// Opening a file without following links and without side effects: the flags, the lstat-first check and
// the refusals that confined reads, confined writes and both pinning strategies share. See README.md.
import fs from 'node:fs';
import { errnoCode, refuseFile } from './pathErrors.js';
import type { Target } from './resolvePath.js';

const { constants } = fs;
// O_NOFOLLOW / O_DIRECTORY do not exist on Windows; there the after-open verification carries the load.
/** O_NOFOLLOW, or 0 where the platform lacks it. */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** O_DIRECTORY, or 0 where the platform lacks it. */
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** O_NONBLOCK, or 0 where the platform lacks it (a FIFO opened with it never blocks). */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
/** O_NOCTTY, or 0 where the platform lacks it (a terminal opened with it never becomes ours). */
export const O_NOCTTY = constants.O_NOCTTY ?? 0;

/** lstat that answers undefined for a name that does not exist; other errors are thrown. */
export function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Closes a descriptor, ignoring one that is already closed or undefined. */
export function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing left to release.
  }
}

/** What kind of non-regular file `stat` describes, for a refusal's message ("a named pipe (FIFO)"...). */
export function describeKind(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a folder';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * Opens `filePath` with `flags` (which carry O_NOFOLLOW); a link at the name (ELOOP), a FIFO or socket
 * (ENXIO), an existing name under O_EXCL and a missing one become ConfinedFileErrors for `target`.
 */
export function openRefusingLinks(filePath: string, flags: number, target: Target, mode?: number): number {
  try {
    return fs.openSync(filePath, flags, mode);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ELOOP') {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced by a symbolic link during the operation',
      );
    }
    if (code === 'ENXIO') {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_regular',
        'this is a named pipe or socket, not a regular file',
      );
    }
    if (code === 'EEXIST') throw refuseFile(target.argName, target.arg, 'exists', 'the file already exists');
    if (code === 'ENOENT')
      throw refuseFile(target.argName, target.arg, 'not_found', 'the file does not exist');
    throw error;
  }
}
