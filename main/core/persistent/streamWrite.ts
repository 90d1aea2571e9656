import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  ConfinedFileError,
  resolveInWorkspace,
  streamToFileConfined,
  type Pinning,
} from '../../sandbox/paths.js';

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
  /** False when `beforeCommit` refused the bytes: nothing was written. */
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
  /** Last check before the file appears or changes: false drops the bytes and leaves the target as it was. */
  beforeCommit?: () => boolean;
  /** How the sandbox's writer pins the folders (tests select; production uses the sandbox's default). */
  pinning?: Pinning;
};

function toReadable(
  source: NodeJS.ReadableStream | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>,
): Readable {
  if (source instanceof Readable) return source;
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    return Readable.fromWeb(source as WebReadableStream<Uint8Array>);
  }
  return Readable.from(source as AsyncIterable<Uint8Array | string>);
}

/** Passes the chunks through as bytes (strings as UTF-8), adding each to `tally`'s count and sha256. */
async function* measured(
  chunks: AsyncIterable<Uint8Array | string>,
  tally: { hash: ReturnType<typeof createHash>; size: number },
): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    tally.hash.update(bytes);
    tally.size += bytes.byteLength;
    yield bytes;
  }
}

/**
 * Streams bytes to a file inside `root` with bounded memory (one chunk at a time), never writing outside
 * it: the path is resolved by the sandbox's `resolveInWorkspace` (links followed, escapes refused) and the
 * bytes are written by the sandbox's confined writer (`streamToFileConfined`: every folder opened without
 * following links, the file proven to be the confined one; a temp file in the pinned folder renamed over
 * the target on Linux, in place elsewhere). The target changes only once every byte arrived and was
 * synced; a file with other hard links is replaced at this name, and protected names are the host's to write.
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
  const inMemory = typeof source === 'string' || source instanceof Uint8Array;
  const tally = { hash: createHash('sha256'), size: 0 };
  const data = inMemory ? source : measured(toReadable(source), tally);
  const result = await streamToFileConfined(root, relativePath, data, {
    argName,
    // The resolved path was checked against the area: the write is refused if it now lands elsewhere.
    expectedRealPath: realPath,
    allowProtected: true,
    replaceHardLinked: true,
    chmod: (existing) => options.mode ?? (existing ? existing.mode & 0o7777 : 0o644),
    ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    ...(options.pinning ? { pinning: options.pinning } : {}),
  });
  if (inMemory) tally.hash.update(source);
  const size = inMemory ? result.bytes : tally.size;
  return { realPath, size, sha256: tally.hash.digest('hex'), written: result.committed };
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

/**
 * `file`'s lstat, or undefined when it cannot be had for any reason (gone, a folder on its way gone or made a file, no
 * permission): for the callers that then leave the path to git, which judges it itself (a watched snapshot's staging,
 * a view's tree and status). `lstatOrUndefined` rethrows all but a missing entry.
 */
export function lstatOrNone(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
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
