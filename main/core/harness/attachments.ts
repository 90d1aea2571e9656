import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { imageSize } from 'image-size';
import {
  MAX_ATTACHMENTS,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  MAX_PDF_BYTES,
  looksLikeSvg,
  sniffAttachmentType,
} from '../../common/attachments.js';
import type { AttachmentMimeType, UserAttachment } from '../../common/attachments.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';

/*
 * Files a user attaches to a prompt (issue #32): checked by their bytes, kept as artifacts of the session
 * under `attachments/<sha256>.<ext>` (the same bytes twice are one file), named in the user_message by
 * handle. Every host (the app, `keel run --image`, `keel serve`) goes through here.
 */

/** A file as a host hands it over: its bytes and, for people, the name it had. */
export type AttachmentInput = { name?: string; data: Uint8Array };

/** A file refused: the message says which one and why, in words the user can act on. */
export class AttachmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttachmentError';
  }
}

const EXTENSIONS: Record<AttachmentMimeType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
};

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;

/** What the checked bytes are: their type and, for an image, its size in pixels. */
export type CheckedAttachment = { mimeType: AttachmentMimeType; width?: number; height?: number };

/**
 * Checks one file by its bytes: PNG, JPEG, GIF, WebP (dimensions read with image-size: at most
 * MAX_IMAGE_SIDE a side and MAX_IMAGE_PIXELS in all) or PDF, within its size limit. SVG is refused (it can
 * hold script and no provider takes it). Throws AttachmentError naming the file.
 */
export function checkAttachment(input: AttachmentInput): CheckedAttachment {
  const label = input.name ? `"${input.name}"` : 'the attached file';
  const { data } = input;
  if (data.length === 0) throw new AttachmentError(`${label} is empty`);
  const mimeType = sniffAttachmentType(data);
  if (mimeType === undefined) {
    if (looksLikeSvg(data))
      throw new AttachmentError(
        `${label} is an SVG image: SVG is not accepted as an image (it can hold script); attach a PNG, ` +
          'or give it as a file (keel run --file, the app’s Attach…, an editor’s resource) to send its markup as text',
      );
    throw new AttachmentError(
      `${label} is not a PNG, JPEG, GIF, WebP image or a PDF (judged by its bytes, not its name)`,
    );
  }
  if (mimeType === 'application/pdf') {
    if (data.length > MAX_PDF_BYTES)
      throw new AttachmentError(
        `${label} is ${megabytes(data.length)}; a PDF may be at most ${megabytes(MAX_PDF_BYTES)}`,
      );
    return { mimeType };
  }
  if (data.length > MAX_IMAGE_BYTES) {
    throw new AttachmentError(
      `${label} is ${megabytes(data.length)}; an image may be at most ${megabytes(MAX_IMAGE_BYTES)} (scale it down or save it as JPEG)`,
    );
  }
  let size: { width?: number; height?: number; type?: string };
  try {
    size = imageSize(data);
  } catch (error) {
    throw new AttachmentError(
      `${label} starts like ${mimeType} but cannot be read as one (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const { width, height } = size;
  if (!width || !height)
    throw new AttachmentError(`${label}: its ${mimeType} header names no width and height`);
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS) {
    throw new AttachmentError(
      `${label} is ${width}×${height} pixels; an image may be at most ${MAX_IMAGE_SIDE} px a side and ` +
        `${MAX_IMAGE_PIXELS / 1_000_000} megapixels`,
    );
  }
  return { mimeType, width, height };
}

/** Checks every file of a prompt (count and each one) before anything is written. */
export function checkAttachments(inputs: readonly AttachmentInput[]): CheckedAttachment[] {
  if (inputs.length > MAX_ATTACHMENTS)
    throw new AttachmentError(`a prompt may carry at most ${MAX_ATTACHMENTS} files (${inputs.length} given)`);
  return inputs.map(checkAttachment);
}

/**
 * Checks a prompt's files and keeps them as artifacts of the session (`attachments/<sha256>.<ext>`, written
 * confined to the artifacts folder, never through a link); returns what the user_message records.
 */
export function keepAttachments(artifactsDir: string, inputs: readonly AttachmentInput[]): UserAttachment[] {
  const checked = checkAttachments(inputs);
  return inputs.map((input, index) => {
    const { mimeType, width, height } = checked[index] as CheckedAttachment;
    const digest = crypto.createHash('sha256').update(input.data).digest('hex');
    const handle = `attachments/${digest}.${EXTENSIONS[mimeType]}`;
    writeArtifact(artifactsDir, handle, input.data);
    const name = input.name === undefined ? undefined : path.basename(input.name).slice(0, 255);
    return {
      handle,
      mimeType,
      bytes: input.data.length,
      ...(name ? { name } : {}),
      ...(width !== undefined && height !== undefined ? { width, height } : {}),
    };
  });
}

/** Writes `data` as the artifact `handle` (content-addressed: an existing file of that name is these bytes). */
export function writeArtifact(artifactsDir: string, handle: string, data: Uint8Array): void {
  fs.mkdirSync(path.join(artifactsDir, path.dirname(handle)), { recursive: true, mode: 0o700 });
  const target = resolveInWorkspace(artifactsDir, handle, { argName: 'handle' });
  if (fs.existsSync(target)) return;
  const temporary = `${target}.${process.pid}.${crypto.randomUUID()}.tmp`;
  fs.writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, target);
}
