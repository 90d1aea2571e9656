// The `portable` pinning strategy (macOS, Windows: no openat in Node): the same checks by path, then
// proof after open that the real path is still the expected one and names the opened inode. Renames are
// not safe here (rename(2) resolves its two paths separately), so writes go in place. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { lstatOrUndefined } from './confinedOpen.js';
import { errnoCode, quoteInRoot, refuseFile } from './pathErrors.js';
import type { PinnedFolder } from './pinnedFolder.js';
import { isWithinRoot, type Target } from './resolvePath.js';

/**
 * Holds the target's folder by its path (missing folders made one at a time, never through a link, when
 * `create`); every opened file is proven afterwards by realpath and inode.
 */
export function pinPortable(target: Target, create: boolean): PinnedFolder {
  if (create) createParentsPortable(target);
  return {
    childPath: (name) => path.join(target.dirPath, name),
    verifyOpened: (_fd, opened, expectedPath) => verifyPortable(expectedPath, opened, target),
    verifyFolder: () => verifyFolderPortable(target),
    release: () => undefined,
  };
}

/**
 * Portable proof: the real path is still inside and names the very inode that was opened. realpath and the
 * stat after it are separate lookups, so a parent folder swapped for a link between them (and back) would let
 * the stat follow the link to the opened outside file: the pair is taken twice and must agree both times,
 * which a swapper would have to flip at four syscall boundaries in a row to defeat (seen leaking once in
 * 3,000 racing reads with one pair). Linux's procfd strategy reads the opened descriptor's path instead.
 */
function verifyPortable(expectedPath: string, opened: fs.Stats, target: Target): void {
  const changed = () =>
    refuseFile(target.argName, target.arg, 'changed', 'the file changed while it was being opened');
  for (let round = 0; round < 2; round += 1) {
    let real: string;
    let current: fs.Stats;
    try {
      real = fs.realpathSync.native(expectedPath);
      current = fs.statSync(real);
    } catch {
      throw changed();
    }
    if (
      real !== expectedPath ||
      !isWithinRoot(target.root, real) ||
      current.ino !== opened.ino ||
      current.dev !== opened.dev
    ) {
      throw changed();
    }
  }
  // The folder itself must still be a folder at its real path (not a link) once both rounds agreed.
  verifyFolderPortable(target);
}

/** Creates missing parents one at a time by path (portable mode), then proves the parent is inside. */
function createParentsPortable(target: Target): void {
  let current = target.root.real;
  for (const component of target.dirComponents) {
    current = path.join(current, component);
    const stat = lstatOrUndefined(current);
    if (stat === undefined) {
      try {
        fs.mkdirSync(current);
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
      }
    } else if (stat.isSymbolicLink()) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'a folder on the path was replaced by a symbolic link during the operation',
      );
    } else if (!stat.isDirectory()) {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_directory',
        `${quoteInRoot(target.root.real, current)} is not a folder`,
      );
    }
  }
  verifyFolderPortable(target);
}

/** Proves the target's folder still exists at its real path (no link on the way); throws otherwise. */
function verifyFolderPortable(target: Target): void {
  let real: string;
  try {
    real = fs.realpathSync.native(target.dirPath);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_found',
        `folder ${quoteInRoot(target.root.real, target.dirPath)} does not exist`,
      );
    }
    throw error;
  }
  if (real !== target.dirPath) {
    throw refuseFile(
      target.argName,
      target.arg,
      'changed',
      'a folder on the path changed during the operation',
    );
  }
}
