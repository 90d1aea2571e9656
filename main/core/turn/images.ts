import fs from 'node:fs';
import { MAX_TOOL_IMAGE_BYTES, sniffImageType } from '../../common/images.js';
import type { Payload, PayloadImage } from '../../common/payload.js';
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
  // The newest first, from the end: a long session's messages are walked without a copy of each (at 100k
  // events a flatMap over them was 3.7 ms of every request).
  const images: PayloadImage[] = [];
  const { messages } = payload;
  for (let m = messages.length - 1; m >= 0 && images.length < MAX_REQUEST_IMAGES; m--) {
    const message = messages[m];
    if (message?.role !== 'tool' || message.images === undefined) continue;
    for (let i = message.images.length - 1; i >= 0 && images.length < MAX_REQUEST_IMAGES; i--)
      images.push(message.images[i] as PayloadImage);
  }
  let attached = 0;
  for (const image of images) {
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
