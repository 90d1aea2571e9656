import { showPath } from './areas.js';
import { resolvePath } from './confine.js';
import type { CallPreview, CallSubject, ToolContext } from './types.js';

/** A preview with nothing to protect and no change to show: the call is gated by the policy and its subject. */
export function previewSubject(subject: CallSubject = {}): Promise<CallPreview> {
  return Promise.resolve({ ok: true, subject, protectedReason: null });
}

/**
 * A read's preview: its subject is the path `pathArg` resolves to, as shown (root-relative, or `/session/...`). An escaping path has
 * no subject (it matches no grant, and fails as a tool error when run). Never throws.
 */
export function previewPathArg(pathArg: string | undefined, ctx: ToolContext): Promise<CallPreview> {
  if (pathArg === undefined) return previewSubject();
  try {
    return previewSubject({ path: showPath(ctx, resolvePath(ctx, pathArg, 'path')) });
  } catch {
    return previewSubject();
  }
}
