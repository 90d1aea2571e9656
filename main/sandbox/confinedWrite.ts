// Confined writes: bytes, or a stream of them, into a file inside the workspace, never outside it, even
// while links are swapped under the write. The one writer of the harness: tools, staging and Persistent
// Dir commits all write through here. See README.md.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
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
import { DEFAULT_PINNING, pinFolder, type Pinning } from './pinning.js';
import { type PinnedFolder } from './pinnedFolder.js';
import { refuseUnapprovedChange } from './protectedPaths.js';
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
  /**
   * The exact permission bits (no umask) the written file ends with, given the file it replaces
   * (undefined for a new one). Without it a replaced file keeps its mode and a new one gets `mode`.
   */
  chmod?: (existing: fs.Stats | undefined) => number;
  /**
   * Replace an existing file that has other hard links with a new file at this name (the other names keep
   * their bytes) instead of refusing it. Only where the write renames (procfd, atomic, not exclusive): an
   * in-place write would change every name, so it still refuses.
   */
  replaceHardLinked?: boolean;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  /** User-listed protected globs, relative to the workspace root. */
  protectedGlobs?: readonly string[];
  /** The real path an approval was granted for; the write is refused if the argument now lands elsewhere. */
  expectedRealPath?: string;
  /** Folders inside the root no argument may reach (the Keel home): refused like an escape (ResolveOptions.hidden). */
  hidden?: readonly string[];
  pinning?: Pinning;
}

/** What a confined write did. */
export interface ConfinedWrite {
  path: string;
  bytes: number;
  created: boolean;
}

/** Chunks a streamed confined write takes, one at a time (strings as UTF-8): a Node Readable is one. */
export type ConfinedChunks = AsyncIterable<Uint8Array | string>;

/** Options of streamToFileConfined: those of writeFileConfined, and a last check. */
export interface StreamConfinedOptions extends WriteConfinedOptions {
  /**
   * Called once every byte has arrived, before the target is created or changed: false drops the bytes
   * and leaves the target as it was.
   */
  beforeCommit?: () => boolean;
}

/** What a streamed confined write did; `committed` is false when `beforeCommit` refused the bytes. */
export interface ConfinedStreamWrite extends ConfinedWrite {
  committed: boolean;
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
  const bytes = toBuffer(data);
  const { path: written, created } = await writeConfined(root, arg, bytes, options);
  return { path: written, bytes: bytes.length, created };
}

/** Bytes a streamed confined write takes: text (UTF-8), bytes, or chunks arriving one at a time. */
export type ConfinedData = string | Uint8Array | ConfinedChunks;

/**
 * writeFileConfined for a stream (or bytes), with a last check: chunks are written as they arrive (memory
 * stays bounded by one chunk) with the same guarantees, and the target changes only once the whole stream
 * arrived (an in-place write first parks it in a private temp file outside the workspace). An error of
 * the stream itself is thrown as it was, with the target left as it was.
 */
export function streamToFileConfined(
  root: string,
  arg: string,
  data: ConfinedData,
  options: StreamConfinedOptions,
): Promise<ConfinedStreamWrite> {
  return writeConfined(
    root,
    arg,
    typeof data === 'string' || data instanceof Uint8Array ? toBuffer(data) : data,
    options,
  );
}

function toBuffer(data: string | Uint8Array): Buffer {
  return typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** The bytes a write puts in place: in memory, or chunks still to arrive. */
type Source = Buffer | ConfinedChunks;

async function writeConfined(
  root: string,
  arg: string,
  source: Source,
  options: StreamConfinedOptions,
): Promise<ConfinedStreamWrite> {
  const target = prepareTarget(root, arg, options.argName, true, options.hidden);
  refuseUnapprovedChange(target, options, 'writing');
  const pinning = options.pinning ?? DEFAULT_PINNING;
  // Portable pinning writes in place even when asked to be atomic: rename(2) looks up its source and its
  // destination separately, so a parent folder swapped for a link between the two lookups would move the
  // verified temp file out of the workspace (caught by the race test). In place, every byte goes through
  // the one descriptor that was verified. Confinement wins over atomicity where openat/renameat are missing.
  const inPlace = options.atomic === false || pinning === 'portable';
  let spool: Spool | undefined;
  let folder: PinnedFolder | undefined;
  try {
    if (inPlace) {
      // In place the target changes with the first byte: all of them must have arrived (and be agreed to).
      if (!Buffer.isBuffer(source)) spool = await spoolChunks(source);
      if (options.beforeCommit && !options.beforeCommit()) {
        const bytes = Buffer.isBuffer(source) ? source.length : (spool?.bytes ?? 0);
        return { path: target.realPath, bytes, created: false, committed: false };
      }
    }
    folder = pinFolder(target, pinning, options.createParents ?? true);
    const existing = lstatOrUndefined(folder.childPath(target.name));
    const replacesLinks = options.replaceHardLinked === true && !inPlace && !options.exclusive;
    if (existing !== undefined)
      checkExistingForWrite(existing, target, options.exclusive ?? false, replacesLinks);
    const context: WriteContext = { target, folder, existing, options };
    if (inPlace) {
      const bytes = await writeInPlace(context, spool ? spool.read() : source);
      return { path: target.realPath, bytes, created: existing === undefined, committed: true };
    }
    const written = await writeViaTemp(context, source);
    return { path: target.realPath, ...written, created: written.committed && existing === undefined };
  } catch (error) {
    if (error instanceof SourceFailure) throw error.cause;
    throw asConfinedError(error, options.argName, arg);
  } finally {
    folder?.release();
    spool?.remove();
  }
}

interface WriteContext {
  target: Target;
  folder: PinnedFolder;
  existing: fs.Stats | undefined;
  options: StreamConfinedOptions;
}

function checkExistingForWrite(
  stat: fs.Stats,
  target: Target,
  exclusive: boolean,
  replacesLinks: boolean,
): void {
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
  if (stat.nlink > 1 && !replacesLinks) {
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

async function writeViaTemp(
  context: WriteContext,
  source: Source,
): Promise<{ bytes: number; committed: boolean }> {
  const { target, folder, existing, options } = context;
  const tempName = tempNameFor(target.name);
  const tempPath = folder.childPath(tempName);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NOCTTY;
  const fd = openRefusingLinks(tempPath, flags, target, options.mode ?? 0o666);
  let renamed = false;
  try {
    const tempStat = verifyOpenedFile(fd, path.join(target.dirPath, tempName), context);
    if (existing) copyOwnership(fd, existing);
    if (options.chmod) fs.fchmodSync(fd, options.chmod(existing));
    const bytes = await writeSource(fd, source);
    if (options.fsync ?? true) await fsyncAsync(fd);
    folder.verifyFolder();
    if (options.beforeCommit && !options.beforeCommit()) return { bytes, committed: false };
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
    return { bytes, committed: true };
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

async function writeInPlace(context: WriteContext, source: Source): Promise<number> {
  const { target, folder, existing, options } = context;
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
    if (options.chmod) fs.fchmodSync(fd, options.chmod(existing));
    const bytes = await writeSource(fd, source);
    if (options.fsync ?? true) await fsyncAsync(fd);
    return bytes;
  } finally {
    closeQuietly(fd);
  }
}

/** An error thrown by the caller's stream itself (not by the file system): rethrown to the caller as it was. */
class SourceFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('the stream being written failed');
  }
}

/** Writes every byte of `source` to `fd` from offset 0, one chunk at a time; returns their count. */
async function writeSource(fd: number, source: Source): Promise<number> {
  if (Buffer.isBuffer(source)) {
    await writeAll(fd, source, 0);
    return source.length;
  }
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  let offset = 0;
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array | string>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        throw new SourceFailure(error);
      }
      if (next.done) {
        finished = true;
        return offset;
      }
      const bytes = toBuffer(next.value);
      await writeAll(fd, bytes, offset);
      offset += bytes.length;
    }
  } finally {
    // A write that failed mid-stream releases the stream (a Readable is destroyed).
    if (!finished) await iterator.return?.();
  }
}

function writeAll(fd: number, data: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      if (offset >= data.length) {
        resolve();
        return;
      }
      fs.write(fd, data, offset, data.length - offset, position + offset, (error, written) => {
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

/** A stream parked in a private temp file (its folder 0700) outside the workspace, until an in-place write. */
interface Spool {
  bytes: number;
  read(): ConfinedChunks;
  remove(): void;
}

async function spoolChunks(chunks: ConfinedChunks): Promise<Spool> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-spool-'));
  const file = path.join(dir, 'bytes');
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const fd = fs.openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      const bytes = await writeSource(fd, chunks);
      // Opened only when the write starts reading it, so a write refused before that leaves no descriptor;
      // closed before the write returns, so the folder can be removed (Windows refuses an open file).
      const read = async function* () {
        const stream = fs.createReadStream(file);
        try {
          yield* stream as AsyncIterable<Buffer>;
        } finally {
          if (!stream.closed) await once(stream, 'close');
        }
      };
      return { bytes, read, remove };
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    remove();
    throw error;
  }
}
