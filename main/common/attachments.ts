import { z } from 'zod';
import type { ProviderKind } from './providerKind.js';

/*
 * The rules for files a user attaches to a prompt, shared by the core (which checks the bytes and keeps them)
 * and the renderer (which says before sending what a model will not see). Pure: no I/O.
 */

/** What a prompt may carry, checked from the bytes (attachments.ts): the image types and PDF. */
export const AttachmentMimeType = z.enum([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
]);
export type AttachmentMimeType = z.infer<typeof AttachmentMimeType>;

/**
 * A file the user attached to a prompt, kept as an artifact of the session (the event names it by handle, the
 * bytes stay out of the log). `name` is the user's file name, shown only; `width`/`height` for images.
 */
export const UserAttachment = z.object({
  /** Relative to the session's artifacts folder (`attachments/<sha256>.<ext>`). */
  handle: z.string().min(1),
  mimeType: AttachmentMimeType,
  bytes: z.number().int().nonnegative(),
  name: z.string().max(255).optional(),
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});
export type UserAttachment = z.infer<typeof UserAttachment>;

/**
 * The part of a session's pin (events.ts ModelPin) these rules read; spelled here, since events.ts imports this file.
 */
type PinnedModel = { provider: ProviderKind; model: string };

/** user_message's field (events.ts): absent in older logs and on prompts without files. */
export const userMessageAttachments = { attachments: z.array(UserAttachment).optional() };

/** The largest image a prompt carries: Anthropic refuses bigger ones (5 MB per image). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** The largest PDF a prompt carries (its base64 must still fit a provider's 32 MB request). */
export const MAX_PDF_BYTES = 16 * 1024 * 1024;
/** An image's longest side: Anthropic refuses images past 8000 px. */
export const MAX_IMAGE_SIDE = 8000;
/** An image's pixels: a small file that decodes to a huge bitmap (a decompression bomb) is refused. */
export const MAX_IMAGE_PIXELS = 40_000_000;
/** Files one prompt carries at most. */
export const MAX_ATTACHMENTS = 20;
/**
 * Issue #32: the largest other file (not an image or PDF) the app stages into `/session/uploads` with a prompt. It
 * travels as base64 in the prompt's one message, which keel serve takes up to 8 MB; `keel run --file` streams
 * files up to 64 MB from disk.
 */
export const MAX_APP_UPLOAD_BYTES = 4 * 1024 * 1024;

const startsWith = (data: Uint8Array, bytes: readonly number[], at = 0): boolean =>
  data.length >= at + bytes.length && bytes.every((byte, i) => data[at + i] === byte);

/**
 * The type `data` is from its first bytes (PNG, JPEG, GIF, WebP, PDF), or undefined: what is kept and sent
 * is what the bytes are, never what a file name or a clipboard said.
 */
export function sniffAttachmentType(data: Uint8Array): AttachmentMimeType | undefined {
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (
    startsWith(data, [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]) ||
    startsWith(data, [0x47, 0x49, 0x46, 0x38, 0x39, 0x61])
  )
    return 'image/gif';
  if (startsWith(data, [0x52, 0x49, 0x46, 0x46]) && startsWith(data, [0x57, 0x45, 0x42, 0x50], 8))
    return 'image/webp';
  if (startsWith(data, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'application/pdf';
  return undefined;
}

/** True when the bytes look like SVG (XML text naming an <svg> root): refused with its own reason. */
export function looksLikeSvg(data: Uint8Array): boolean {
  const head = new TextDecoder('utf-8', { fatal: false }).decode(data.subarray(0, 1024)).trimStart();
  return /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head);
}

export const isImageType = (mimeType: AttachmentMimeType): boolean => mimeType.startsWith('image/');

/**
 * Whether a model is sent images (else each one reaches it as a text note). Every model of the Anthropic and
 * OpenAI catalogues takes images; an OpenAI-compatible server's model is taken to when its id names a vision
 * family (llava, -vl, vision, pixtral, gemma3, …): a local model without vision rejects image parts.
 */
export function modelTakesImages(pin: PinnedModel): boolean {
  // Keel's local runtime (node-llama-cpp) is given text only.
  if (pin.provider === 'local') return false;
  if (pin.provider !== 'openai-compatible') return true;
  return /llava|vision|[-_.]vl\b|[-_]vl[-_:]|pixtral|gemma-?3|minicpm-v|moondream|bakllava|llama-?4|qwen[0-9.]*-?omni/i.test(
    pin.model,
  );
}

/**
 * Whether a model is sent PDFs: Anthropic takes them as `document` blocks, OpenAI's Responses API as
 * `input_file`; OpenAI-compatible servers get a text note (chat completions servers rarely take files).
 */
export function modelTakesDocuments(pin: PinnedModel): boolean {
  return pin.provider === 'anthropic' || pin.provider === 'openai';
}

/** The sentence said before sending (the app) and in the prompt's note (the model) for an attachment not shown. */
export function unshownAttachmentsWarning(
  pin: PinnedModel,
  mimeTypes: readonly AttachmentMimeType[],
): string | undefined {
  const images = mimeTypes.filter(isImageType).length;
  const pdfs = mimeTypes.length - images;
  const unshown = [
    images > 0 && !modelTakesImages(pin) ? `${images} image${images === 1 ? '' : 's'}` : undefined,
    pdfs > 0 && !modelTakesDocuments(pin) ? `${pdfs} PDF${pdfs === 1 ? '' : 's'}` : undefined,
  ].filter((part): part is string => part !== undefined);
  if (unshown.length === 0) return undefined;
  return `${pin.model} does not take ${unshown.join(' or ')}: the model gets a note naming the file instead`;
}
