import type { PayloadImage } from '../common/payload.js';

/**
 * A tool message's text with one note per image the request does not carry: every image for an API whose
 * tool results are text only (`unsupported`), else those without bytes (older than the request's newest,
 * or unreadable). Deterministic, so the cached prefix stays byte-stable.
 */
export function withImageNotes(
  text: string,
  images: readonly PayloadImage[] | undefined,
  options: { unsupported?: boolean } = {},
): string {
  const untold = (images ?? []).filter((image) => options.unsupported || image.data === undefined);
  if (untold.length === 0) return text;
  const notes = untold.map((image) =>
    options.unsupported
      ? `[image ${image.handle} (${image.mimeType}) is not shown to this model: its API takes no images in tool results]`
      : `[image ${image.handle} (${image.mimeType}) is not attached to this request]`,
  );
  return [text, ...notes].join('\n');
}
