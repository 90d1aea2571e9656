// Hashing as git does (blob ids) and as the commit report does (sha256), reading each file once and
// never through a link. See README.md.
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import type { CheckoutContext } from './state.js';
import { lstatOrUndefined } from './streamWrite.js';

/** One side of a path in a three-way comparison (the backing side also carries its sha256). */
export type Entry =
  { kind: 'none' } | { kind: 'other' } | { kind: 'file' | 'link'; oid: string; sha256?: string };

/** git's id of a blob with these bytes. */
export function blobId(format: 'sha1' | 'sha256', data: Buffer): string {
  return createHash(format).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Files up to this size are read whole (one read) rather than streamed when hashed or copied. */
export const SMALL_FILE_BYTES = 1024 * 1024;

/** Reads an open file to its end; a file that grew past `size` is read to the end too (its id will not match). */
export function readAll(fd: number, size: number): Buffer {
  const chunks: Buffer[] = [];
  let buffer = Buffer.allocUnsafe(size + 1);
  let filled = 0;
  for (;;) {
    const read = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
    if (read === 0) break;
    filled += read;
    if (filled === buffer.length) {
      chunks.push(buffer);
      buffer = Buffer.allocUnsafe(64 * 1024);
      filled = 0;
    }
  }
  chunks.push(buffer.subarray(0, filled));
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/**
 * git's id and the sha256 of an open file's bytes (read whole when small, else streamed), closing it. A
 * file that changed size while read matches no id.
 */
async function hashOpenFile(format: 'sha1' | 'sha256', fd: number): Promise<{ oid: string; sha256: string }> {
  let size: number;
  try {
    size = fs.fstatSync(fd).size;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  const id = createHash(format).update(`blob ${size}\0`);
  const sha256 = createHash('sha256');
  let seen = 0;
  if (size <= SMALL_FILE_BYTES) {
    try {
      const bytes = readAll(fd, size);
      seen = bytes.length;
      id.update(bytes);
      sha256.update(bytes);
    } finally {
      fs.closeSync(fd);
    }
  } else {
    for await (const chunk of fs.createReadStream('', { fd, autoClose: true })) {
      seen += (chunk as Buffer).length;
      id.update(chunk as Buffer);
      sha256.update(chunk as Buffer);
    }
  }
  return { oid: seen === size ? id.digest('hex') : `changed:${seen}`, sha256: sha256.digest('hex') };
}

/** Passes bytes through while computing their git blob id; the size is the one stat gave before reading. */
export class BlobHasher extends Transform {
  private readonly hash: Hash;
  private seen = 0;

  constructor(
    format: 'sha1' | 'sha256',
    private readonly size: number,
  ) {
    super();
    this.hash = createHash(format).update(`blob ${size}\0`);
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    this.seen += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** The blob id, or a value matching no id when the byte count differs from the announced size. */
  digest(): string {
    return this.seen === this.size ? this.hash.digest('hex') : `changed:${this.seen}`;
  }
}

/**
 * The backing folder's entry at `relative` now, identified the way git would (to compare with tree
 * entries), with the sha256 a commit reports as the file's previous content. Read once, never through a link.
 */
export async function backingEntry(context: CheckoutContext, relative: string): Promise<Entry> {
  const file = path.join(context.state.backing, relative);
  const stat = lstatOrUndefined(file);
  if (!stat) return { kind: 'none' };
  const format = context.state.objectFormat;
  if (stat.isSymbolicLink()) {
    const text = fs.readlinkSync(file, { encoding: 'buffer' });
    return {
      kind: 'link',
      oid: blobId(format, text),
      sha256: createHash('sha256').update(text.toString('utf8')).digest('hex'),
    };
  }
  if (!stat.isFile()) return { kind: 'other' };
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    // Replaced by a link (or removed) since the lstat: not a file the session's change can be compared with.
    return { kind: 'other' };
  }
  return { kind: 'file', ...(await hashOpenFile(format, fd)) };
}

/** sha256 (hex) of a file's bytes, streamed; null when there is no regular file at the path (links: of their text). */
export async function hashFile(file: string): Promise<string | null> {
  const stat = lstatOrUndefined(file);
  if (!stat) return null;
  if (stat.isSymbolicLink()) return createHash('sha256').update(fs.readlinkSync(file)).digest('hex');
  if (!stat.isFile()) return null;
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
