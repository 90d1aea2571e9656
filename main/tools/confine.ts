import {
  ConfinedFileError,
  hiddenFoldersUnder,
  isInHiddenFolder,
  OUTSIDE_ROOT,
  PathEscapeError,
  readFileConfined,
  removeFileConfined,
  resolveInWorkspace,
  writeFileConfined,
} from '../sandbox/paths.js';
import { isProtected } from '../sandbox/protectedPaths.js';
import { locate, placeOf, UnknownAreaError, type Located } from './areas.js';
import type { ToolContext } from './types.js';
import { ToolError } from './types.js';

// The one place tools meet the sandbox's path API; the confinement logic itself lives in main/sandbox. A path
// argument is first assigned to its folder (the root or an area, areas.ts), then confined to that folder, with
// the context's hidden folders (the Keel home, `boxHidden`) refused inside it as if they were outside.

/** The folders no tool may reach (the Keel home), as the context names them for the box. */
function hiddenOf(ctx: ToolContext): readonly string[] {
  return ctx.boxHidden ?? [];
}

/**
 * For a listing or search walking from `realStart` (already resolved and confined): true for a real path it
 * must skip without a word, because it is a hidden folder (the Keel home) or inside one.
 */
export function hiddenFromWalk(ctx: ToolContext, realStart: string): (realPath: string) => boolean {
  const folders = hiddenFoldersFor(ctx, realStart);
  return folders.length === 0 ? () => false : (realPath) => isInHiddenFolder(folders, realPath);
}

/** Real paths of the hidden folders a walk from `realStart` must skip; none when its folder lies in one. */
export function hiddenFoldersFor(ctx: ToolContext, realStart: string): string[] {
  const root = placeOf(ctx, realStart)?.root ?? ctx.workspace;
  return hiddenFoldersUnder(root, hiddenOf(ctx));
}

/**
 * The sandbox's refusal in the model's terms: naming the argument as the model wrote it (`/session/x`, not the
 * area-relative `x`) and the folder it left as the model knows it (the project folder, `/session/`), never by
 * a host path (a checkout's is in the Keel home, with the session id).
 */
function restate(error: unknown, argName: string, located: Located, original: string): unknown {
  if (!(error instanceof PathEscapeError) && !(error instanceof ConfinedFileError)) return error;
  const folder = located.prefix === null ? 'the project folder' : `${located.prefix}/`;
  if (error instanceof PathEscapeError && error.code === 'root_invalid') {
    return new PathEscapeError(
      argName,
      'root_invalid',
      `Argument "${argName}" (${JSON.stringify(original)}): ${folder} no longer exists (it was removed or moved).`,
    );
  }
  let message = error.message;
  const asResolved = `Argument "${argName}" (${JSON.stringify(located.arg)})`;
  if (located.arg !== original && message.startsWith(asResolved))
    message = `Argument "${argName}" (${JSON.stringify(original)})${message.slice(asResolved.length)}`;
  if (error.code === 'escape') message = message.replace(OUTSIDE_ROOT, `outside ${folder}`);
  if (message === error.message) return error;
  return error instanceof PathEscapeError
    ? new PathEscapeError(error.argName, error.code, message)
    : new ConfinedFileError(error.argName, error.code, message);
}

/** The folder `arg` belongs to; a ToolError for a prefix naming no area of this session. */
export function locatePath(ctx: ToolContext, arg: string, argName: string): Located {
  try {
    return locate(ctx, arg);
  } catch (error) {
    if (error instanceof UnknownAreaError) throw new ToolError(`${argName}: "${arg}": ${error.message}`);
    throw error;
  }
}

/** Refuses a write into a sealed area (`/artifacts`), whatever was approved. */
function assertWritable(located: Located, arg: string, argName: string): void {
  if (!located.sealed) return;
  throw new ToolError(
    `${argName}: "${arg}" is in ${located.prefix ?? 'a record'}/, the session's record of command output, which no tool can change; write under /session/scratch/ instead`,
  );
}

/**
 * Real path of a path argument inside the root or the area it names; throws PathEscapeError (naming the
 * argument) if it escapes that folder, and a ToolError for a write into a sealed area.
 */
export function resolvePath(ctx: ToolContext, arg: string, argName: string, forWrite = false): string {
  const located = locatePath(ctx, arg, argName);
  if (forWrite) assertWritable(located, arg, argName);
  try {
    return resolveInWorkspace(located.root, located.arg, { argName, forWrite, hidden: hiddenOf(ctx) });
  } catch (error) {
    throw restate(error, argName, located, arg);
  }
}

/** A file's bytes read without leaving its folder; with `truncate`, the first maxBytes of a bigger file. */
export async function readConfined(
  ctx: ToolContext,
  arg: string,
  maxBytes: number,
  truncate = false,
): Promise<{ data: Buffer; size: number; truncated: boolean }> {
  const located = locatePath(ctx, arg, 'path');
  try {
    return await readFileConfined(located.root, located.arg, {
      argName: 'path',
      maxBytes,
      truncate,
      hidden: hiddenOf(ctx),
    });
  } catch (error) {
    throw restate(error, 'path', located, arg);
  }
}

/**
 * Writes a file through the sandbox's race-safe writer, confined to its folder. Unless the call is approved,
 * a protected path is refused by the writer itself; `expectedRealPath` pins the write to the path that was
 * checked (and shown in a diff), so a link swapped in afterwards makes it fail.
 */
export async function writeConfined(
  ctx: ToolContext,
  arg: string,
  data: Buffer,
  expectedRealPath: string,
): Promise<void> {
  const located = locatePath(ctx, arg, 'path');
  assertWritable(located, arg, 'path');
  try {
    await writeFileConfined(located.root, located.arg, data, changeOptions(ctx, located, expectedRealPath));
  } catch (error) {
    throw restate(error, 'path', located, arg);
  }
}

/** What a confined write or removal of a tool is held to: the approval, the protected globs, the checked path. */
function changeOptions(ctx: ToolContext, located: Located, expectedRealPath: string) {
  return {
    argName: 'path',
    allowProtected: ctx.approved === true,
    protectedGlobs: located.protectedGlobs,
    expectedRealPath,
    hidden: hiddenOf(ctx),
  };
}

/**
 * Removes a regular file through the sandbox's confined removal, confined to its folder; like
 * writeConfined, a protected path is refused unless the call is approved, and `expectedRealPath` pins the
 * removal to the path that was checked.
 */
export function removeConfined(ctx: ToolContext, arg: string, expectedRealPath: string): void {
  const located = locatePath(ctx, arg, 'path');
  assertWritable(located, arg, 'path');
  try {
    removeFileConfined(located.root, located.arg, changeOptions(ctx, located, expectedRealPath));
  } catch (error) {
    throw restate(error, 'path', located, arg);
  }
}

/** Why writing this real path needs the user's approval (.git, .keel, .vscode, user globs...), or null. */
export function protectionReason(ctx: ToolContext, realPath: string): string | null {
  const place = placeOf(ctx, realPath);
  if (!place) return isProtected(ctx.workspace, realPath, ctx.protectedGlobs);
  if (place.readOnly && place.root !== realPath)
    return `it is in ${place.prefix ?? 'the project'}/, which is read-only for this session`;
  return isProtected(place.root, realPath, place.protectedGlobs);
}
