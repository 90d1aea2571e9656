import fs from 'node:fs';
import { MAX_TOOL_IMAGE_BYTES, sniffImageType } from '../../common/images.js';
import type { Payload } from '../../common/payload.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';

/** Images a request carries at most (the newest ones); older ones reach the model as their text note only. */
export const MAX_REQUEST_IMAGES = 20;

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/**
 * Reads the bytes of the newest MAX_REQUEST_IMAGES tool-result images of `payload` from the session's
 * artifacts (confined there: a handle from an imported log cannot name a file elsewhere) and sets each one's
 * `data`. An image that is missing, too large or not what its type says keeps no data: providers then send
 * its text note. Changes `payload` in place; returns how many images it attached.
 */
export function attachPayloadImages(payload: Payload, artifactsDir: string): number {
  const images = payload.messages.flatMap((message) =>
    message.role === 'tool' ? (message.images ?? []) : [],
  );
  let attached = 0;
  for (const image of images.slice(-MAX_REQUEST_IMAGES)) {
    const data = readImage(artifactsDir, image.handle);
    if (data && sniffImageType(data) === image.mimeType) {
      image.data = data.toString('base64');
      attached++;
    }
  }
  return attached;
}

function readImage(artifactsDir: string, handle: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(
      resolveInWorkspace(artifactsDir, handle, { argName: 'handle' }),
      fs.constants.O_RDONLY | O_NOFOLLOW,
    );
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_TOOL_IMAGE_BYTES) return undefined;
    const data = Buffer.alloc(stat.size);
    return data.subarray(0, fs.readSync(fd, data, 0, stat.size, 0));
  } finally {
    fs.closeSync(fd);
  }
}
