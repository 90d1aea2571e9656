import fs from 'node:fs';
import { MAX_PDF_BYTES, sniffAttachmentType } from '../../common/attachments.js';
import { MAX_TOOL_IMAGE_BYTES, sniffImageType } from '../../common/images.js';
import type { Payload, PayloadAttachment, PayloadImage } from '../../common/payload.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';

/** Images and files a request carries at most (the newest ones); older ones reach the model as their text note only. */
export const MAX_REQUEST_IMAGES = 20;

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/** What the pinned model is sent of a prompt's files (common/attachments.ts decides); both by default. */
export type AttachmentAcceptance = { images: boolean; documents: boolean };

/**
 * Reads the bytes of the newest MAX_REQUEST_IMAGES tool-result images and prompt attachments of `payload`
 * from the session's artifacts (confined there: a handle from an imported log cannot name a file elsewhere)
 * and sets each one's `data`. An image that is missing, too large or not what its type says keeps no data,
 * and so does a prompt's file the model does not take (`accepts`): providers then send its text note.
 * Changes `payload` in place; returns how many it attached.
 */
export function attachPayloadImages(
  payload: Payload,
  artifactsDir: string,
  accepts: AttachmentAcceptance = { images: true, documents: true },
): number {
  // The newest first, from the end: a long session's messages are walked without a copy of each (at 100k
  // events a flatMap over them was 3.7 ms of every request).
  const files: (PayloadImage | PayloadAttachment)[] = [];
  const { messages } = payload;
  for (let m = messages.length - 1; m >= 0 && files.length < MAX_REQUEST_IMAGES; m--) {
    const message = messages[m];
    const list =
      message?.role === 'tool' ? message.images : message?.role === 'user' ? message.attachments : undefined;
    if (list === undefined) continue;
    for (let i = list.length - 1; i >= 0 && files.length < MAX_REQUEST_IMAGES; i--) {
      const file = list[i] as PayloadImage | PayloadAttachment;
      const taken = file.mimeType === 'application/pdf' ? accepts.documents : accepts.images;
      if (message?.role === 'tool' || taken) files.push(file);
    }
  }
  let attached = 0;
  for (const file of files) {
    const max = file.mimeType === 'application/pdf' ? MAX_PDF_BYTES : MAX_TOOL_IMAGE_BYTES;
    const data = readImage(artifactsDir, file.handle, max);
    const type =
      data && (file.mimeType === 'application/pdf' ? sniffAttachmentType(data) : sniffImageType(data));
    if (data && type === file.mimeType) {
      file.data = data.toString('base64');
      attached++;
    }
  }
  return attached;
}

function readImage(artifactsDir: string, handle: string, max: number): Buffer | undefined {
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
    if (!stat.isFile() || stat.size > max) return undefined;
    const data = Buffer.alloc(stat.size);
    return data.subarray(0, fs.readSync(fd, data, 0, stat.size, 0));
  } finally {
    fs.closeSync(fd);
  }
}
