// Confined writes: bytes into a file inside the workspace, never outside it, even while links are swapped
// under the write. See README.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  O_NOCTTY,
  O_NOFOLLOW,
  O_NONBLOCK,
  closeQuietly,
  describeKind,
  lstatOrUndefined,
  openRefusingLinks,
} from './confinedOpen.js';
import { ConfinedFileError, asConfinedError, errnoCode, refuseFile } from './pathErrors.js';
import { DEFAULT_PINNING, pinFolder, type Pinning, type PinnedFolder } from './pinning.js';
import { protectionReason } from './protectedPaths.js';
import { prepareTarget, type Target } from './resolvePath.js';

const { constants } = fs;

/** Options of writeFileConfined. */
export interface WriteConfinedOptions {
  argName: string;
  /**
   * Write a temp file in the same folder and rename it over the target (default true). Only with procfd
   * pinning: the portable strategy always writes in place (see writeFileConfined).
   */
  atomic?: boolean;
  /** Create missing parent folders, each one without following links (default true). */
  createParents?: boolean;
  /** Fail with code `exists` when the file already exists. */
  exclusive?: boolean;
  /** fsync the data before it replaces the target (default true). */
  fsync?: boolean;
  /** Permission bits of a new file (default 0o666, minus the umask). */
  mode?: number;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  /** User-listed protected globs, relative to the workspace root. */
  protectedGlobs?: readonly string[];
  /** The real path an approval was granted for; the write is refused if the argument now lands elsewhere. */
  expectedRealPath?: string;
  pinning?: Pinning;
}

/** What a confined write did. */
export interface ConfinedWrite {
  path: string;
  bytes: number;
  created: boolean;
}

/**
 * Writes a file inside the workspace without ever writing outside it: the final component is opened
 * with O_NOFOLLOW (new files with O_EXCL), the opened file is proven to be the confined one before any
 * byte is written, hard-linked and special files are refused, protected paths need `allowProtected`.
 */
export async function writeFileConfined(
  root: string,
  arg: string,
  data: string | Uint8Array,
  options: WriteConfinedOptions,
): Promise<ConfinedWrite> {
  const target = prepareTarget(root, arg, options.argName, true);
  if (options.expectedRealPath !== undefined && options.expectedRealPath !== target.realPath) {
    throw refuseFile(
      options.argName,
      arg,
      'changed',
      'the path now resolves somewhere other than the approved path',
    );
  }
  if (!options.allowProtected) {
    const reason = protectionReason(target.root.real, target.realPath, options.protectedGlobs ?? []);
    if (reason !== null)
      throw refuseFile(options.argName, arg, 'protected', `${reason}; writing it needs an approval`);
  }
  const bytes =
    typeof data === 'string'
      ? Buffer.from(data, 'utf8')
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const pinning = options.pinning ?? DEFAULT_PINNING;
  let folder: PinnedFolder | undefined;
  try {
    folder = pinFolder(target, pinning, options.createParents ?? true);
    const existing = lstatOrUndefined(folder.childPath(target.name));
    if (existing !== undefined) checkExistingForWrite(existing, target, options.exclusive ?? false);
    // Portable pinning writes in place even when asked to be atomic: rename(2) looks up its source and its
    // destination separately, so a parent folder swapped for a link between the two lookups would move the
    // verified temp file out of the workspace (caught by the race test). In place, every byte goes through
    // the one descriptor that was verified. Confinement wins over atomicity where openat/renameat are missing.
    const write = options.atomic === false || pinning === 'portable' ? writeInPlace : writeViaTemp;
    await write({ target, folder, existing, bytes, options });
    return { path: target.realPath, bytes: bytes.length, created: existing === undefined };
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    folder?.release();
  }
}

interface WriteContext {
  target: Target;
  folder: PinnedFolder;
  existing: fs.Stats | undefined;
  bytes: Buffer;
  options: WriteConfinedOptions;
}

function checkExistingForWrite(stat: fs.Stats, target: Target, exclusive: boolean): void {
  const { argName, arg } = target;
  if (stat.isSymbolicLink()) {
    throw refuseFile(
      argName,
      arg,
      'changed',
      'the file was replaced by a symbolic link during the operation',
    );
  }
  if (stat.isDirectory()) throw refuseFile(argName, arg, 'is_directory', 'this is a folder, not a file');
  if (!stat.isFile())
    throw refuseFile(argName, arg, 'not_regular', `this is ${describeKind(stat)}, not a regular file`);
  if (stat.nlink > 1) {
    throw refuseFile(
      argName,
      arg,
      'hard_linked',
      `the file has ${stat.nlink} hard links; writing it would change the other copies too`,
    );
  }
  if (exclusive) throw refuseFile(argName, arg, 'exists', 'the file already exists');
}

function verifyOpenedFile(fd: number, expectedPath: string, context: WriteContext): fs.Stats {
  const stat = fs.fstatSync(fd);
  const { target } = context;
  if (!stat.isFile())
    throw refuseFile(
      target.argName,
      target.arg,
      'not_regular',
      `this is ${describeKind(stat)}, not a regular file`,
    );
  if (stat.nlink > 1) {
    throw refuseFile(
      target.argName,
      target.arg,
      'hard_linked',
      `the file has ${stat.nlink} hard links; writing it would change the other copies too`,
    );
  }
  context.folder.verifyOpened(fd, stat, expectedPath);
  return stat;
}

function tempNameFor(name: string): string {
  const suffix = randomBytes(6).toString('hex');
  return Buffer.byteLength(name) <= 200 ? `.${name}.${suffix}.keel-tmp` : `.${suffix}.keel-tmp`;
}

function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      if (offset >= data.length) {
        resolve();
        return;
      }
      fs.write(fd, data, offset, data.length - offset, offset, (error, written) => {
        if (error) reject(error);
        else step(offset + written);
      });
    };
    step(0);
  });
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

function copyOwnership(fd: number, existing: fs.Stats): void {
  fs.fchmodSync(fd, existing.mode & 0o1777);
  if (process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0)) {
    try {
      fs.fchownSync(fd, existing.uid, existing.gid);
    } catch {
      // Ownership is a courtesy; the content is what was asked for.
    }
  }
}

async function writeViaTemp(context: WriteContext): Promise<void> {
  const { target, folder, existing, bytes, options } = context;
  const tempName = tempNameFor(target.name);
  const tempPath = folder.childPath(tempName);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NOCTTY;
  const fd = openRefusingLinks(tempPath, flags, target, options.mode ?? 0o666);
  let renamed = false;
  try {
    const tempStat = verifyOpenedFile(fd, path.join(target.dirPath, tempName), context);
    if (existing) copyOwnership(fd, existing);
    await writeAll(fd, bytes);
    if (options.fsync ?? true) await fsyncAsync(fd);
    folder.verifyFolder();
    if (options.exclusive) {
      // link() fails if the name exists: an exclusive create that is still atomic for readers.
      try {
        fs.linkSync(tempPath, folder.childPath(target.name));
      } catch (error) {
        if (errnoCode(error) === 'EEXIST')
          throw refuseFile(target.argName, target.arg, 'exists', 'the file already exists');
        throw error;
      }
    } else {
      // rename() replaces the directory entry itself: a link swapped in at the name is replaced, never followed.
      fs.renameSync(tempPath, folder.childPath(target.name));
      renamed = true;
    }
    const final = fs.lstatSync(folder.childPath(target.name));
    if (final.ino !== tempStat.ino || final.dev !== tempStat.dev) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced right after it was written',
      );
    }
    folder.verifyFolder();
  } finally {
    closeQuietly(fd);
    if (!renamed) {
      try {
        fs.unlinkSync(tempPath);
      } catch {
        // Already gone (renamed or never created).
      }
    }
  }
}

async function writeInPlace(context: WriteContext): Promise<void> {
  const { target, folder, existing, bytes, options } = context;
  const create = existing === undefined ? constants.O_CREAT | constants.O_EXCL : 0;
  const flags = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | create;
  let fd: number;
  try {
    fd = openRefusingLinks(folder.childPath(target.name), flags, target, options.mode ?? 0o666);
  } catch (error) {
    // A file that appeared since the check is a race, unless the caller asked for an exclusive create.
    if (error instanceof ConfinedFileError && error.code === 'exists' && !options.exclusive) {
      throw refuseFile(target.argName, target.arg, 'changed', 'the file appeared while it was being created');
    }
    throw error;
  }
  try {
    const stat = verifyOpenedFile(fd, target.realPath, context);
    if (existing && (stat.ino !== existing.ino || stat.dev !== existing.dev)) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced while it was being opened',
      );
    }
    fs.ftruncateSync(fd, 0);
    await writeAll(fd, bytes);
    if (options.fsync ?? true) await fsyncAsync(fd);
  } finally {
    closeQuietly(fd);
  }
}
