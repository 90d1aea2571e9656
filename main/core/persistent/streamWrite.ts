import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ConfinedFileError, resolveInWorkspace } from '../../sandbox/paths.js';

/** Bytes a host can stage: a buffer, text, a Node stream, a web ReadableStream or any async iterable of chunks. */
export type StreamSource =
  | Uint8Array
  | string
  | NodeJS.ReadableStream
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

/** What a streamed write produced. */
export type StreamWriteResult = {
  /** Real absolute path written. */
  realPath: string;
  size: number;
  /** sha256 of the bytes written, hex. */
  sha256: string;
  /** False when `beforeRename` refused the bytes: nothing was written. */
  written: boolean;
};

/** Options of `writeStreamConfined`. */
export type StreamWriteOptions = {
  /** Names the argument in errors ("path"). */
  argName?: string;
  /** File mode of a new file (an existing file's mode is kept unless given). */
  mode?: number;
  /** A real folder inside `root` the file must land in (one area of a workspace). */
  within?: string;
  /** Last check before the file appears: false drops the bytes and leaves the target as it was. */
  beforeRename?: () => boolean;
};

const { constants } = fs;
const fsyncAsync = promisify(fs.fsync);
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function toReadable(source: StreamSource): Readable {
  if (typeof source === 'string') return Readable.from([Buffer.from(source, 'utf8')]);
  if (source instanceof Uint8Array)
    return Readable.from([Buffer.from(source.buffer, source.byteOffset, source.byteLength)]);
  if (source instanceof Readable) return source;
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    return Readable.fromWeb(source as WebReadableStream<Uint8Array>);
  }
  return Readable.from(source as AsyncIterable<Uint8Array | string>);
}

/** Sums and hashes the bytes passing through, turning strings into UTF-8. */
class Measure extends Transform {
  readonly hash = createHash('sha256');
  size = 0;
  override _transform(
    chunk: Buffer | string,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.hash.update(bytes);
    this.size += bytes.length;
    done(null, bytes);
  }
}

/** Sources up to this size that are already in memory are written with one call instead of a stream. */
const DIRECT_WRITE_MAX_BYTES = 1024 * 1024;

/** Writes every byte of `source` to `fd`; returns their count and sha256. */
async function writeAll(fd: number, source: StreamSource): Promise<{ size: number; sha256: string }> {
  if (typeof source === 'string' || source instanceof Uint8Array) {
    const bytes = typeof source === 'string' ? Buffer.from(source, 'utf8') : source;
    if (bytes.byteLength <= DIRECT_WRITE_MAX_BYTES) {
      let offset = 0;
      while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset);
      return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
    }
  }
  const measure = new Measure();
  await pipeline(toReadable(source), measure, fs.createWriteStream('', { fd, autoClose: false }));
  return { size: measure.size, sha256: measure.hash.digest('hex') };
}

/**
 * Streams bytes to a file inside `root` with bounded memory (one chunk at a time), never writing outside
 * it: the path is resolved by the sandbox's `resolveInWorkspace` (links followed, escapes refused), the
 * bytes go to a new temp file created O_EXCL|O_NOFOLLOW next to the target, which is fsynced and renamed
 * over the target (a link planted at the name is replaced, never followed). The folder is checked again
 * after the write; if it moved, the temp file is removed and the write is refused.
 */
export async function writeStreamConfined(
  root: string,
  relativePath: string,
  source: StreamSource,
  options: StreamWriteOptions = {},
): Promise<StreamWriteResult> {
  const argName = options.argName ?? 'path';
  const realPath = resolveInWorkspace(root, relativePath, { argName, forWrite: true });
  if (options.within !== undefined && !isInside(options.within, realPath)) {
    throw new ConfinedFileError(
      argName,
      'denied',
      `Argument "${argName}" (${JSON.stringify(relativePath)}): the path leads out of its area (${path.basename(options.within)}/).`,
    );
  }
  const dir = path.dirname(realPath);
  fs.mkdirSync(dir, { recursive: true });
  if (fs.realpathSync.native(dir) !== dir) {
    throw new ConfinedFileError(
      argName,
      'changed',
      `Argument "${argName}": a folder on the path changed while it was created.`,
    );
  }
  const existing = lstatOrUndefined(realPath);
  if (existing && !existing.isFile() && !existing.isSymbolicLink()) {
    throw new ConfinedFileError(
      argName,
      'not_regular',
      `Argument "${argName}" (${JSON.stringify(relativePath)}): not a regular file.`,
    );
  }
  const mode = options.mode ?? (existing?.isFile() ? existing.mode & 0o7777 : 0o644);
  const temp = path.join(
    dir,
    `.${path.basename(realPath).slice(0, 100)}.${randomBytes(6).toString('hex')}.keel-tmp`,
  );
  const fd = fs.openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, mode);
  let renamed = false;
  try {
    const bytes = await writeAll(fd, source);
    // Asynchronous, so the fsyncs of writes running side by side (a commit's files) overlap.
    await fsyncAsync(fd);
    fs.fchmodSync(fd, mode);
    if (fs.realpathSync.native(dir) !== dir) {
      throw new ConfinedFileError(
        argName,
        'changed',
        `Argument "${argName}": the folder moved during the write; nothing was written.`,
      );
    }
    const sha256 = bytes.sha256;
    if (options.beforeRename && !options.beforeRename())
      return { realPath, size: bytes.size, sha256, written: false };
    fs.renameSync(temp, realPath);
    renamed = true;
    return { realPath, size: bytes.size, sha256, written: true };
  } finally {
    fs.closeSync(fd);
    if (!renamed) fs.rmSync(temp, { force: true });
  }
}

/** Creates or replaces a symbolic link inside `root` (its text stored as is, never followed), atomically. */
export function writeSymlinkConfined(root: string, relativePath: string, target: string): string {
  const realPath = resolveInWorkspace(root, relativePath, { argName: 'path', forWrite: true });
  const dir = path.dirname(realPath);
  fs.mkdirSync(dir, { recursive: true });
  const temp = path.join(
    dir,
    `.${path.basename(realPath).slice(0, 100)}.${randomBytes(6).toString('hex')}.keel-tmp`,
  );
  fs.symlinkSync(target, temp);
  try {
    fs.renameSync(temp, realPath);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  return realPath;
}

/** lstat that answers undefined for a path that does not exist. */
export function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** True when `child` is `parent` or below it (both real paths). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Makes `target` (below `root`) a real folder, replacing any link or file met on the way: a session can turn
 * a folder of its workspace into a link, and Keel must never follow it when it writes there.
 */
export function ensureRealFolder(root: string, target: string): void {
  const rel = path.relative(root, target);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${target} is not inside ${root}`);
  let current = root;
  for (const part of rel.split(path.sep).filter((p) => p !== '')) {
    current = path.join(current, part);
    const stat = lstatOrUndefined(current);
    if (stat?.isDirectory()) continue;
    if (stat) fs.rmSync(current, { force: true });
    fs.mkdirSync(current);
  }
}

/** Removes one file or link inside `root` (never following a link out), then its folders left empty. */
export function removeConfined(root: string, relative: string): void {
  const parentArg = path.dirname(relative) === '.' ? '.' : path.dirname(relative);
  const parent = resolveInWorkspace(root, parentArg, { argName: 'path' });
  const target = path.join(parent, path.basename(relative));
  const stat = lstatOrUndefined(target);
  if (stat && !stat.isDirectory()) fs.unlinkSync(target);
  let dir = parent;
  while (dir !== root && isInside(root, dir)) {
    try {
      fs.rmdirSync(dir);
    } catch {
      break;
    }
    dir = path.dirname(dir);
  }
}
