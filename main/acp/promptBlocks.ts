import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type ContentBlock, RequestError } from '@agentclientprotocol/sdk';
import { MAX_APP_UPLOAD_BYTES } from '../common/attachments.js';
import {
  AttachmentError,
  type AttachmentInput,
  checkAttachments,
  HarnessError,
  planUploads,
  uploadFromFile,
  type UploadInput,
} from '../core/harness/index.js';

/*
 * Issue #32: a `session/prompt`'s content blocks as Keel takes a prompt from the app's composer. Text is the
 * message; an image is an attachment (checked by its bytes in the core: PNG, JPEG, GIF, WebP within their
 * limits, SVG refused); an embedded resource (text or blob) is a file staged into `/session/uploads/` (up to the
 * composer's 4 MB, since it travels inside the message as the composer's do) and a `resource_link` to a file on
 * this machine is staged from disk (up to `keel run --file`'s bound), both named in the prompt, sanitized and
 * recorded as `file_staged` by the core's uploads. A link Keel cannot stage (a folder, a web page) stays a mention.
 */

/** What one prompt brings: its text, the images it carries, the files to stage. */
export type PromptParts = {
  text: string;
  attachments: AttachmentInput[];
  uploads: UploadInput[];
};

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** The file name a resource's URI ends in (its fragment and query left out), for the staged file's name. */
function nameOf(uri: string, fallback: string): string {
  try {
    const parsed = new URL(uri);
    const last = decodeURIComponent(parsed.pathname.split('/').pop() ?? '');
    return last === '' ? fallback : last;
  } catch {
    return uri.split(/[\\/]/).pop() || fallback;
  }
}

/** An embedded resource's bytes as an upload, refused past the composer's bound. */
function embedded(uri: string, data: Buffer): UploadInput {
  const name = nameOf(uri, 'resource');
  if (data.length > MAX_APP_UPLOAD_BYTES)
    throw RequestError.invalidParams(
      { uri },
      `the embedded resource ${uri} is ${megabytes(data.length)}; embedded resources are staged up to ` +
        `${megabytes(MAX_APP_UPLOAD_BYTES)} (send a resource_link to the file instead)`,
    );
  return { name, size: data.length, open: () => Readable.from([data]) };
}

/** A linked file on this machine as an upload; undefined for a link that is no regular file here. */
function linked(uri: string): UploadInput | undefined {
  if (!uri.startsWith('file:')) return undefined;
  let file: string;
  try {
    file = fileURLToPath(uri);
  } catch {
    return undefined;
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw RequestError.invalidParams(
      { uri },
      `the linked file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`,
    );
  }
  if (!stat.isFile()) return undefined;
  return { ...uploadFromFile(file), name: path.basename(file) };
}

/**
 * The blocks as one prompt: text joined, images and files set apart, every bound checked before anything is
 * written (count, sizes, each image's bytes). Throws an invalid-params error that says what to change.
 */
export function promptParts(blocks: readonly ContentBlock[]): PromptParts {
  const texts: string[] = [];
  const attachments: AttachmentInput[] = [];
  const uploads: UploadInput[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'image':
        attachments.push({
          ...(block.uri ? { name: nameOf(block.uri, 'image') } : {}),
          data: Buffer.from(block.data, 'base64'),
        });
        break;
      case 'resource': {
        const { resource } = block;
        uploads.push(
          embedded(
            resource.uri,
            'text' in resource ? Buffer.from(resource.text, 'utf8') : Buffer.from(resource.blob, 'base64'),
          ),
        );
        break;
      }
      case 'resource_link': {
        const file = linked(block.uri);
        // Not a file here (a folder, a web page): the model is told of it, and reaches it with its tools if it can.
        if (file) uploads.push(file);
        else texts.push(`@${block.uri}`);
        break;
      }
      default:
        throw RequestError.invalidParams(
          { type: block.type },
          `Keel takes text, images and resources in a prompt, not ${block.type}`,
        );
    }
  }
  const text = texts.join('\n\n');
  if (text.trim() === '' && uploads.length === 0)
    throw RequestError.invalidParams(
      undefined,
      attachments.length > 0
        ? 'the prompt has images but no text: say what to do with them'
        : 'the prompt is empty',
    );
  try {
    checkAttachments(attachments);
    planUploads(uploads);
  } catch (error) {
    if (error instanceof AttachmentError || error instanceof HarnessError)
      throw RequestError.invalidParams(undefined, error.message);
    throw error;
  }
  return { text, attachments, uploads };
}
