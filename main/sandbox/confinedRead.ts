// Confined reads: the bytes of a regular file inside the workspace, never of anything outside it, even
// while links are swapped under the read; FIFOs, devices and sockets are refused without blocking.
// See README.md.
import fs from 'node:fs';
import {
  O_NOCTTY,
  O_NOFOLLOW,
  O_NONBLOCK,
  closeQuietly,
  describeKind,
  lstatOrUndefined,
  openRefusingLinks,
} from './confinedOpen.js';
import { asConfinedError, refuseFile } from './pathErrors.js';
import { DEFAULT_PINNING, pinFolder, type Pinning } from './pinning.js';
import { type PinnedFolder } from './pinnedFolder.js';
import { prepareTarget, type Target } from './resolvePath.js';

const { constants } = fs;

function checkOpenedForRead(stat: fs.Stats, target: Target): void {
  if (stat.isDirectory())
    throw refuseFile(target.argName, target.arg, 'is_directory', 'this is a folder, not a file');
  if (!stat.isFile()) {
    throw refuseFile(
      target.argName,
      target.arg,
      'not_regular',
      `this is ${describeKind(stat)}, not a regular file`,
    );
  }
}

/** Options of readFileConfined. */
export interface ReadConfinedOptions {
  argName: string;
  /** Upper bound on bytes read; larger files are refused, or cut when `truncate` is set. */
  maxBytes: number;
  /** Return the first maxBytes of a larger file instead of refusing it. */
  truncate?: boolean;
  /** Folders inside the root no argument may reach (the Keel home): refused like an escape (ResolveOptions.hidden). */
  hidden?: readonly string[];
  pinning?: Pinning;
}

/** The bytes of a confined read. `size` is the file's size when opened. */
export interface ConfinedRead {
  path: string;
  data: Buffer;
  size: number;
  truncated: boolean;
}

interface OpenedForRead {
  fd: number;
  size: number;
  realPath: string;
  target: Target;
}

function openForRead(root: string, arg: string, options: ReadConfinedOptions): OpenedForRead {
  const target = prepareTarget(root, arg, options.argName, false, options.hidden);
  const flags = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  let folder: PinnedFolder | undefined;
  let fd: number | undefined;
  try {
    folder = pinFolder(target, options.pinning ?? DEFAULT_PINNING, false);
    const filePath = folder.childPath(target.name);
    // lstat before open: opening some device files has side effects, and a FIFO would block.
    const before = lstatOrUndefined(filePath);
    if (before === undefined) throw refuseFile(target.argName, arg, 'not_found', 'the file does not exist');
    if (before.isSymbolicLink()) {
      throw refuseFile(
        target.argName,
        arg,
        'changed',
        'the file was replaced by a symbolic link during the operation',
      );
    }
    checkOpenedForRead(before, target);
    fd = openRefusingLinks(filePath, flags, target);
    const stat = fs.fstatSync(fd);
    checkOpenedForRead(stat, target);
    if (stat.ino !== before.ino || stat.dev !== before.dev) {
      throw refuseFile(target.argName, arg, 'changed', 'the file was replaced while it was being opened');
    }
    folder.verifyOpened(fd, stat, target.realPath);
    if (stat.size > options.maxBytes && !options.truncate) {
      throw refuseFile(
        target.argName,
        arg,
        'too_large',
        `the file is ${stat.size} bytes, over the ${options.maxBytes}-byte limit; read a range instead`,
      );
    }
    return { fd, size: stat.size, realPath: target.realPath, target };
  } catch (error) {
    closeQuietly(fd);
    throw asConfinedError(error, target.argName, arg);
  } finally {
    folder?.release();
  }
}

function readBounded(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = Math.min(64 * 1024, limit + 1 - total);
    if (want <= 0) break;
    const buffer = Buffer.allocUnsafe(want);
    const n = fs.readSync(fd, buffer, 0, want, null);
    if (n === 0) break;
    chunks.push(buffer.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

function readBoundedAsync(fd: number, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const step = (): void => {
      const want = Math.min(64 * 1024, limit + 1 - total);
      if (want <= 0) {
        resolve(Buffer.concat(chunks, total));
        return;
      }
      const buffer = Buffer.allocUnsafe(want);
      fs.read(fd, buffer, 0, want, null, (error, n) => {
        if (error) {
          reject(error);
          return;
        }
        if (n === 0) {
          resolve(Buffer.concat(chunks, total));
          return;
        }
        chunks.push(buffer.subarray(0, n));
        total += n;
        step();
      });
    };
    step();
  });
}

function finishRead(opened: OpenedForRead, data: Buffer, options: ReadConfinedOptions): ConfinedRead {
  // The size at open time can lie (a file growing while read); the bytes actually read decide.
  if (data.length > options.maxBytes) {
    if (!options.truncate) {
      throw refuseFile(
        opened.target.argName,
        opened.target.arg,
        'too_large',
        `the file grew past the ${options.maxBytes}-byte limit while it was read; read a range instead`,
      );
    }
    return {
      path: opened.realPath,
      data: data.subarray(0, options.maxBytes),
      size: opened.size,
      truncated: true,
    };
  }
  return { path: opened.realPath, data, size: opened.size, truncated: false };
}

/**
 * Reads a regular file inside the workspace: refuses escapes, links swapped in during the call, FIFOs,
 * devices and sockets (without blocking), and files over maxBytes (or cuts them when `truncate` is set).
 */
export async function readFileConfined(
  root: string,
  arg: string,
  options: ReadConfinedOptions,
): Promise<ConfinedRead> {
  const opened = openForRead(root, arg, options);
  try {
    return finishRead(opened, await readBoundedAsync(opened.fd, options.maxBytes), options);
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    closeQuietly(opened.fd);
  }
}

/** Synchronous readFileConfined, for small files read during setup (e.g. .env files for redaction). */
export function readFileConfinedSync(root: string, arg: string, options: ReadConfinedOptions): ConfinedRead {
  const opened = openForRead(root, arg, options);
  try {
    return finishRead(opened, readBounded(opened.fd, options.maxBytes), options);
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    closeQuietly(opened.fd);
  }
}
