// The `procfd` pinning strategy (Linux): every folder from the root down is opened O_DIRECTORY|O_NOFOLLOW
// through /proc/self/fd/<parent>/<name>, so the kernel looks each name up in the folder already held (that
// is openat), and a link swapped in at any level fails with ELOOP. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { O_DIRECTORY, O_NOFOLLOW, closeQuietly, lstatOrUndefined } from './confinedOpen.js';
import { errnoCode, quoteInRoot, refuseFile } from './pathErrors.js';
import type { PinnedFolder } from './pinnedFolder.js';
import type { Target } from './resolvePath.js';
import { descriptorPath } from './viewPath.js';

const { constants } = fs;

function procChild(fd: number, name: string): string {
  return `/proc/self/fd/${fd}/${name}`;
}

/** Throws `changed` unless the descriptor `fd` names `expected` (readlink of /proc/self/fd/N). */
function verifyFdPath(fd: number, expected: string, target: Target): void {
  let actual: string;
  try {
    actual = descriptorPath(fd, expected);
  } catch {
    throw refuseFile(target.argName, target.arg, 'changed', 'the file could not be verified after opening');
  }
  if (actual !== expected) {
    throw refuseFile(
      target.argName,
      target.arg,
      'changed',
      'the path changed while it was being opened (a folder was moved or replaced); nothing was written outside the workspace',
    );
  }
}

/**
 * Holds the target's folder by descriptor, opened from the root down without following any link (missing
 * folders made when `create`); names in it are reached through that descriptor.
 */
export function pinProcfd(target: Target, create: boolean): PinnedFolder {
  const dir = pinDirectory(target, create);
  return {
    childPath: (name) => procChild(dir.fd, name),
    verifyOpened: (fd, _opened, expectedPath) => verifyFdPath(fd, expectedPath, target),
    verifyFolder: () => verifyFdPath(dir.fd, dir.dirPath, target),
    release: () => closeQuietly(dir.fd),
  };
}

/** A directory opened by walking down from the root without following any link, proven to be `dirPath`. */
interface PinnedDir {
  fd: number;
  dirPath: string;
}

/** Opens each directory from the root down with O_NOFOLLOW, so a link swapped in at any level is refused. */
function pinDirectory(target: Target, create: boolean): PinnedDir {
  const { root, argName, arg } = target;
  let fd = fs.openSync(root.real, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    const rootStat = fs.fstatSync(fd);
    if (rootStat.dev !== root.stat.dev || rootStat.ino !== root.stat.ino) {
      throw refuseFile(argName, arg, 'changed', 'the workspace folder changed while it was being opened');
    }
    let dirPath = root.real;
    for (const component of target.dirComponents) {
      const childPath = procChild(fd, component);
      let childFd: number;
      try {
        childFd = fs.openSync(childPath, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT' && create) {
          try {
            fs.mkdirSync(childPath);
          } catch (mkdirError) {
            if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
          }
          childFd = openChildDirAfterCreate(childPath, target);
        } else if (code === 'ENOENT') {
          throw refuseFile(
            argName,
            arg,
            'not_found',
            `folder ${quoteInRoot(root.real, path.join(dirPath, component))} does not exist`,
          );
        } else if (code === 'ELOOP' || code === 'ENOTDIR') {
          const stat = lstatOrUndefined(childPath);
          if (stat === undefined || stat.isSymbolicLink() || stat.isDirectory()) {
            throw refuseFile(
              argName,
              arg,
              'changed',
              'a folder on the path was replaced by a symbolic link during the operation',
            );
          }
          throw refuseFile(
            argName,
            arg,
            'not_directory',
            `${quoteInRoot(root.real, path.join(dirPath, component))} is not a folder`,
          );
        } else {
          throw error;
        }
      }
      closeQuietly(fd);
      fd = childFd;
      dirPath = path.join(dirPath, component);
    }
    verifyFdPath(fd, dirPath, target);
    return { fd, dirPath };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

function openChildDirAfterCreate(childPath: string, target: Target): number {
  try {
    return fs.openSync(childPath, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'a folder being created was replaced during the operation',
      );
    }
    throw error;
  }
}
