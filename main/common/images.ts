import type { ImageMimeType } from './events.js';

/** The largest image a tool result keeps as an image (shown, sent to a model); bigger ones stay files. */
export const MAX_TOOL_IMAGE_BYTES = 5 * 1024 * 1024;

const startsWith = (data: Uint8Array, bytes: readonly number[], at = 0): boolean =>
  data.length >= at + bytes.length && bytes.every((byte, i) => data[at + i] === byte);

/**
 * The image type `data` is, from its first bytes (PNG, JPEG, GIF, WebP), or undefined: what is shown or sent
 * as an image is what the bytes are, never what a server said they are (SVG, which can hold script, is none).
 */
export function sniffImageType(data: Uint8Array): ImageMimeType | undefined {
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(data, [0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (startsWith(data, [0x52, 0x49, 0x46, 0x46]) && startsWith(data, [0x57, 0x45, 0x42, 0x50], 8)) {
    return 'image/webp';
  }
  return undefined;
}
