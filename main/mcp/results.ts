import fs from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolImage } from '../common/events.js';
import { MAX_TOOL_IMAGE_BYTES, sniffImageType } from '../common/images.js';
import { wholeResultAt } from '../tools/areas.js';
import { truncateText } from '../tools/outcome.js';
import type { ToolContext, ToolOutcome } from '../tools/types.js';

/** Characters of a result the model sees inline; the whole text goes to an artifact past this. */
export const MCP_INLINE_MAX_CHARS = 50_000;

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
};

/** A file-name-safe artifact handle for one part of a call's result. */
function handleFor(key: string, suffix: string): string {
  return `${key.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120)}${suffix}`;
}

/**
 * Turns an MCP tool result into the outcome the model sees: text blocks in order, structured content as
 * JSON, images, audio and binary resources kept as artifacts (named by the call's key) and shown by
 * handle; an image whose bytes are PNG, JPEG, GIF or WebP (at most MAX_TOOL_IMAGE_BYTES) is also listed in
 * `images`, for the UI and for providers that take images in tool results. Text longer than MCP_INLINE_MAX_CHARS is cut, its whole (redacted) text kept as an artifact.
 * `isError` from the server marks the outcome as a tool error. The caller redacts `content`.
 */
export function outcomeFromResult(result: CallToolResult, ctx: ToolContext): ToolOutcome {
  const parts: string[] = [];
  const artifacts: string[] = [];
  const images: ToolImage[] = [];
  const keep = (suffix: string, data: Buffer): string => {
    const handle = handleFor(ctx.idempotencyKey, suffix);
    fs.mkdirSync(ctx.artifactsDir, { recursive: true });
    fs.writeFileSync(path.join(ctx.artifactsDir, handle), data, { mode: 0o600 });
    artifacts.push(handle);
    return handle;
  };
  result.content.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'image':
      case 'audio': {
        const ext = EXTENSIONS[block.mimeType] ?? 'bin';
        const data = Buffer.from(block.data, 'base64');
        const handle = keep(`-${index + 1}.${ext}`, data);
        parts.push(`[${block.type} ${block.mimeType}, ${data.length} bytes: artifact ${handle}]`);
        // Shown and sent as an image only when its bytes are one of the image types (whatever it claimed).
        const mimeType = block.type === 'image' ? sniffImageType(data) : undefined;
        if (mimeType && data.length <= MAX_TOOL_IMAGE_BYTES)
          images.push({ handle, mimeType, bytes: data.length });
        break;
      }
      case 'resource_link':
        parts.push(`[resource ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') {
          parts.push(`[resource ${resource.uri}]\n${resource.text}`);
        } else if ('blob' in resource && typeof resource.blob === 'string') {
          const data = Buffer.from(resource.blob, 'base64');
          const handle = keep(`-${index + 1}.bin`, data);
          parts.push(`[resource ${resource.uri}, ${data.length} bytes: artifact ${handle}]`);
        }
        break;
      }
    }
  });
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent, null, 2);
    // Servers often send the same JSON as text too; say it once.
    if (!parts.some((part) => part.trim() === json || safeSame(part, result.structuredContent))) {
      parts.push(`structured content:\n${json}`);
    }
  }
  let content = parts.join('\n');
  if (content === '') content = result.isError ? 'the tool failed without a message' : '(no output)';
  if (content.length > MCP_INLINE_MAX_CHARS) {
    const handle = keep('.txt', Buffer.from(ctx.redactor.redact(content), 'utf8'));
    const head = truncateText(content, MCP_INLINE_MAX_CHARS).text;
    content = `${head}\n[cut at ${MCP_INLINE_MAX_CHARS} of ${content.length} characters; ${wholeResultAt(ctx, handle)}]`;
  }
  const outcome: ToolOutcome = { content, isError: result.isError === true };
  // The one handle an outcome carries: the whole text when it was cut, else the first image or file.
  const main = artifacts.find((handle) => handle.endsWith('.txt')) ?? artifacts[0];
  if (main !== undefined) outcome.artifact = main;
  if (images.length > 0) outcome.images = images;
  return outcome;
}

function safeSame(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
