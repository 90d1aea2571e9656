import { readFileConfined, resolveInWorkspace, writeFileConfined } from '../sandbox/paths.js';
import { isProtected } from '../sandbox/protectedPaths.js';
import type { ToolContext } from './types.js';

// The one place tools meet the sandbox's path API; the confinement logic itself lives in main/sandbox.

/** Real path of a path argument inside the workspace; throws PathEscapeError (naming the argument) if it escapes. */
export function resolvePath(ctx: ToolContext, arg: string, argName: string, forWrite = false): string {
  return resolveInWorkspace(ctx.workspace, arg, { argName, forWrite });
}

/** A workspace file's bytes read without leaving the workspace; with `truncate`, the first maxBytes of a bigger file. */
export async function readConfined(
  ctx: ToolContext,
  arg: string,
  maxBytes: number,
  truncate = false,
): Promise<{ data: Buffer; size: number; truncated: boolean }> {
  return readFileConfined(ctx.workspace, arg, { argName: 'path', maxBytes, truncate });
}

/**
 * Writes a workspace file through the sandbox's race-safe writer. Unless the call is approved, a
 * protected path is refused by the writer itself; `expectedRealPath` pins the write to the path
 * that was checked (and shown in a diff), so a link swapped in afterwards makes it fail.
 */
export async function writeConfined(
  ctx: ToolContext,
  arg: string,
  data: Buffer,
  expectedRealPath: string,
): Promise<void> {
  await writeFileConfined(ctx.workspace, arg, data, {
    argName: 'path',
    allowProtected: ctx.approved === true,
    protectedGlobs: ctx.protectedGlobs,
    expectedRealPath,
  });
}

/** Why writing this real path needs the user's approval (.git, .keel, .vscode, user globs...), or null. */
export function protectionReason(ctx: ToolContext, realPath: string): string | null {
  return isProtected(ctx.workspace, realPath, ctx.protectedGlobs);
}
