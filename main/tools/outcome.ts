import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ToolOutcome } from './types.js';

/** Builds a tool error the model can act on: content is `{"error": "..."}`, never a stack trace. */
export function errorOutcome(message: string, extra: Partial<ToolOutcome> = {}): ToolOutcome {
  return { ...extra, content: JSON.stringify({ error: message }), isError: true };
}

/** Returns the lowercase hex sha256 of the bytes (or UTF-8 text). */
export function hashBytes(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Returns the workspace-relative form of a real path inside the workspace ('.' for the root). */
export function toRelative(workspace: string, realPath: string): string {
  const rel = path.relative(workspace, realPath);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/** Cuts text to at most maxChars UTF-16 units, never inside a surrogate pair; reports whether it cut. */
export function truncateText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}

/** True when the bytes look binary (a NUL byte in the first 8 KiB, as git and ripgrep decide). */
export function looksBinary(data: Uint8Array): boolean {
  const n = Math.min(data.length, 8192);
  for (let i = 0; i < n; i++) if (data[i] === 0) return true;
  return false;
}
