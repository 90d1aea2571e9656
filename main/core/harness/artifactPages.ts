import fs from 'node:fs';
import type { ImageMimeType } from '../../common/events.js';
import { MAX_TOOL_IMAGE_BYTES, sniffImageType } from '../../common/images.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import { HarnessError } from './errors.js';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/** One page of an artifact's text. */
export type ArtifactPage = {
  handle: string;
  /** The artifact's size in bytes when read (a running command's artifact still grows). */
  size: number;
  offset: number;
  /** Where the next page starts (bytes); equal to `size` at the end. */
  nextOffset: number;
  text: string;
  eof: boolean;
};

/** Bytes at the end of `data` that start a UTF-8 character it does not complete (0-3). */
function incompleteTail(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

/**
 * Reads `maxBytes` of an artifact from `offset` as text, never cutting a UTF-8 character (the next page
 * starts where this one stopped). The handle is confined to the session's artifacts folder: `..`, absolute
 * paths and links out are refused. `not_found` when there is no such artifact.
 */
export function readArtifactPage(
  artifactsDir: string,
  handle: string,
  offset: number,
  maxBytes: number,
): ArtifactPage {
  let fd: number;
  try {
    const real = resolveInWorkspace(artifactsDir, handle, { argName: 'handle' });
    fd = fs.openSync(real, fs.constants.O_RDONLY | O_NOFOLLOW);
  } catch {
    throw new HarnessError('not_found', `no artifact ${JSON.stringify(handle)} in this session`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile())
      throw new HarnessError('not_found', `no artifact ${JSON.stringify(handle)} in this session`);
    const start = Math.min(offset, stat.size);
    const length = Math.min(maxBytes, stat.size - start);
    const buffer = Buffer.alloc(length);
    const read = length > 0 ? fs.readSync(fd, buffer, 0, length, start) : 0;
    const data = buffer.subarray(0, read);
    const atEnd = start + read >= stat.size;
    const keep = atEnd ? read : read - incompleteTail(data);
    return {
      handle,
      size: stat.size,
      offset: start,
      nextOffset: start + keep,
      text: data.subarray(0, keep).toString('utf8'),
      eof: start + keep >= stat.size,
    };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads an image artifact whole (at most MAX_TOOL_IMAGE_BYTES), confined like readArtifactPage, with the type
 * its bytes are: `not_found` when it is missing, larger, or not a PNG, JPEG, GIF or WebP image.
 */
export function readArtifactImage(
  artifactsDir: string,
  handle: string,
): { handle: string; mimeType: ImageMimeType; bytes: number; data: string } {
  const missing = () => new HarnessError('not_found', `no image ${JSON.stringify(handle)} in this session`);
  let fd: number;
  try {
    const real = resolveInWorkspace(artifactsDir, handle, { argName: 'handle' });
    fd = fs.openSync(real, fs.constants.O_RDONLY | O_NOFOLLOW);
  } catch {
    throw missing();
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_TOOL_IMAGE_BYTES) throw missing();
    const data = Buffer.alloc(stat.size);
    const read = fs.readSync(fd, data, 0, stat.size, 0);
    const bytes = data.subarray(0, read);
    const mimeType = sniffImageType(bytes);
    if (!mimeType) throw missing();
    return { handle, mimeType, bytes: read, data: bytes.toString('base64') };
  } finally {
    fs.closeSync(fd);
  }
}
