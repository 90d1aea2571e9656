import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CallPreview, ToolContext, ToolOutcome } from './types.js';

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

/** Applies the redactor to every string of an outcome that leaves the tool layer. */
export function redactOutcome(outcome: ToolOutcome, ctx: ToolContext): ToolOutcome {
  const redacted: ToolOutcome = { ...outcome, content: ctx.redactor.redact(outcome.content) };
  if (outcome.diff !== undefined) redacted.diff = ctx.redactor.redact(outcome.diff);
  if (outcome.approvalRequired !== undefined)
    redacted.approvalRequired = ctx.redactor.redact(outcome.approvalRequired);
  return redacted;
}

const errnoMessages: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links, or a symbolic link where none is allowed',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files, try again',
  ENAMETOOLONG: 'file name too long',
};

/** One line a model can act on, from any thrown value; never a stack trace or a host path. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== undefined && code in errnoMessages) {
      return errnoMessages[code] ?? err.message;
    }
    // Node's errno messages end with the host path (`EBUSY: resource busy or locked, open '/…'`).
    if (code !== undefined && /^E[A-Z0-9]+$/.test(code))
      return `the file system refused the operation (${code})`;
    return err.message.split('\n')[0] ?? 'tool failed';
  }
  return String(err);
}

/**
 * A preview carrying the tool's plan for `applyOnce`, kept off JSON and object spreads (non-enumerable): the
 * plan holds the files' unredacted bytes, a preview only redacted text.
 */
export function withPlan<P extends Extract<CallPreview, { ok: true }>>(preview: P, plan: unknown): P {
  return Object.defineProperty(preview, 'plan', { value: plan, enumerable: false });
}
