import fs from 'node:fs';
import { z } from 'zod';
import type { SessionEvent } from '../../common/events.js';
import { artifactsDir } from '../paths.js';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import crypto from 'node:crypto';
import { checkAttachment, writeArtifact } from './attachments.js';

/*
 * The bytes of a prompt's files in an export (issue #32): the events name them by handle, so the export ends
 * with one line per file `{"attachment":{"handle":"attachments/<sha256>.png","data":"<base64>"}}`. On import
 * every line is checked again like a file a user attaches (its bytes are its type, within the limits, SVG
 * refused) and must be a file some user_message names with that type. A session without files exports as before.
 */

export const AttachmentLine = z.strictObject({
  attachment: z.strictObject({
    handle: z
      .string()
      .regex(/^attachments\/[0-9a-f]{64}\.(png|jpg|gif|webp|pdf)$/, 'not an attachment handle'),
    data: z.string().min(1),
  }),
});

/** A file carried by an export, checked. */
export type CarriedAttachment = { handle: string; data: Buffer };

/** True for a parsed line that is meant as an attachment line (validated separately). */
export function isAttachmentLine(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'attachment' in value;
}

/** The attachment lines (no newline) of a session's files, in the order user messages name them. */
export function* attachmentLinesOf(dir: string, userMessages: readonly SessionEvent[]): Generator<string> {
  const seen = new Set<string>();
  for (const event of userMessages) {
    if (event.kind !== 'user_message') continue;
    for (const file of event.attachments ?? []) {
      if (seen.has(file.handle)) continue;
      seen.add(file.handle);
      let data: Buffer;
      try {
        // Confined to the artifacts and never through a link: a handle of an imported log names nothing else.
        const real = resolveInWorkspace(artifactsDir(dir), file.handle, { argName: 'handle' });
        if (!fs.lstatSync(real).isFile()) continue;
        data = fs.readFileSync(real);
      } catch {
        continue; // A file gone from the artifacts: the import's model gets the note, as this one's does.
      }
      yield JSON.stringify({ attachment: { handle: file.handle, data: data.toString('base64') } });
    }
  }
}

/**
 * Checks one attachment line against the events before it: a file a user_message names, with the type it
 * records, whose bytes pass the same check as an attached file. Returns the problem, or the file.
 */
export function checkAttachmentLine(
  value: unknown,
  events: readonly SessionEvent[],
): { problem: string } | { file: CarriedAttachment } {
  const parsed = AttachmentLine.safeParse(value);
  if (!parsed.success)
    return { problem: `attachment: ${parsed.error.issues.map((i) => i.message).join('; ')}` };
  const { handle, data: text } = parsed.data.attachment;
  const named = events
    .flatMap((event) => (event.kind === 'user_message' ? (event.attachments ?? []) : []))
    .find((file) => file.handle === handle);
  if (named === undefined) return { problem: `attachment ${handle} is named by no user_message before it` };
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0)
    return { problem: `attachment ${handle}: its data is not base64` };
  const data = Buffer.from(text, 'base64');
  const digest = crypto.createHash('sha256').update(data).digest('hex');
  if (!handle.includes(digest)) return { problem: `attachment ${handle}: its bytes do not hash to its name` };
  try {
    const checked = checkAttachment({ name: handle, data });
    if (checked.mimeType !== named.mimeType)
      return {
        problem: `attachment ${handle}: its bytes are ${checked.mimeType}, the message says ${named.mimeType}`,
      };
  } catch (error) {
    return { problem: `attachment ${error instanceof Error ? error.message : String(error)}` };
  }
  return { file: { handle, data } };
}

/** Writes the carried files into an imported session's artifacts. */
export function writeCarriedAttachments(dir: string, files: readonly CarriedAttachment[]): void {
  const artifacts = artifactsDir(dir);
  fs.mkdirSync(artifacts, { recursive: true });
  for (const file of files) writeArtifact(artifacts, file.handle, file.data);
}
