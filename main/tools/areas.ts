import path from 'node:path';
import type { ToolArea, ToolContext } from './types.js';
import { insideView, viewPrefixOf } from '../sandbox/viewPath.js';

// How a model's path argument names a place: relative to the root (the project), an absolute path on disk
// inside the root or an area, or an area's own prefix (/session/..., /persistent/<name>/...). Pure string
// work: which folder an argument belongs to and how a real path is shown. Confinement itself happens in
// confine.ts, through main/sandbox, with the chosen folder as the root.

/** Where a path argument points: the folder it is confined to and the argument as that folder's resolver takes it. */
export interface Located {
  /** Real path of the folder the argument must stay inside (the root, or one area's folder). */
  root: string;
  /** The argument relative to `root`, or the model's own absolute path when it named `root` on disk. */
  arg: string;
  /** The area's prefix (`/session`...), or null for the root. */
  prefix: string | null;
  /** Globs relative to `root` whose writes need approval. */
  protectedGlobs: readonly string[];
  /** The area is a read-only Persistent Dir. */
  readOnly?: boolean;
  /** The area is a record no tool writes (`/artifacts`). */
  sealed?: boolean;
}

/** A path argument that names an area that does not exist (`/persistent/nope/x`): a tool error, nothing resolved. */
export class UnknownAreaError extends Error {
  override readonly name = 'UnknownAreaError';
}

/** True when `candidate` (absolute) is `root` or lexically below it. */
function isLexicallyInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The root and the areas as places, deepest folder first (the root first among equals). */
function places(ctx: ToolContext): Located[] {
  const root: Located = { root: ctx.workspace, arg: '', prefix: null, protectedGlobs: ctx.protectedGlobs };
  const areas = (ctx.areas ?? []).map((area: ToolArea): Located => ({
    root: area.root,
    arg: '',
    prefix: area.prefix,
    protectedGlobs: area.protectedGlobs ?? [],
    ...(area.readOnly ? { readOnly: true } : {}),
    ...(area.sealed ? { sealed: true } : {}),
  }));
  return [root, ...areas].sort((a, b) => b.root.length - a.root.length);
}

/** `/session/x` → the `/session` area and `x`; undefined when `arg` starts with no area's prefix. */
function byPrefix(ctx: ToolContext, arg: string): { area: ToolArea; rest: string } | undefined {
  const areas = ctx.areas ?? [];
  const parts = arg.split('/');
  if (parts[0] !== '' || parts.length < 2) return undefined;
  const [, first, second] = parts;
  const prefixLength = first === 'persistent' ? 3 : 2;
  const prefix = parts.slice(0, prefixLength).join('/');
  const area = areas.find((candidate) => candidate.prefix === prefix);
  if (area) return { area, rest: parts.slice(prefixLength).join('/') || '.' };
  if (first === 'persistent' && areas.some((candidate) => candidate.prefix.startsWith('/persistent/'))) {
    const known = areas
      .filter((candidate) => candidate.prefix.startsWith('/persistent/'))
      .map((candidate) => candidate.prefix.slice('/persistent/'.length));
    throw new UnknownAreaError(
      second === undefined || second === ''
        ? `"/persistent" is not a file or folder; name a Persistent Dir: ${known.map((name) => `/persistent/${name}/`).join(', ')}`
        : `this session has no Persistent Dir "${second}" (it has: ${known.join(', ')})`,
    );
  }
  return undefined;
}

/**
 * Which folder a path argument belongs to: a relative path is the root's; an absolute path on disk inside the
 * root or an area (as `pwd` prints it) is that folder's, passed on unchanged; `/session/...` and
 * `/persistent/<name>/...` are that area's, relative to its folder. Anything else stays the root's, so the
 * sandbox refuses it as outside, exactly as before. Throws UnknownAreaError for `/persistent/<unknown>/...`.
 */
export function locate(ctx: ToolContext, arg: string): Located {
  const root = places(ctx).find((place) => place.prefix === null) as Located;
  if (!arg.startsWith('/') && !path.isAbsolute(arg)) return { ...root, arg };
  const onDisk = places(ctx).find((place) => isLexicallyInside(place.root, path.resolve(arg)));
  if (onDisk) return { ...onDisk, arg };
  // Issue #36: a folder seen through a view's holder (`/proc/<pid>/root/...`) is named without that prefix where
  // commands run (`pwd` in the box): such a path is that folder's, through the holder.
  const viewed = places(ctx).find(
    (place) =>
      viewPrefixOf(place.root) !== undefined && isLexicallyInside(insideView(place.root), path.resolve(arg)),
  );
  if (viewed) return { ...viewed, arg: `${viewPrefixOf(viewed.root) ?? ''}${path.resolve(arg)}` };
  const named = byPrefix(ctx, arg);
  // `/persistent/project/x` when the project is the root: the root's, with the root's protections.
  if (named?.area.root === root.root) return { ...root, arg: named.rest };
  if (named) {
    return {
      root: named.area.root,
      arg: named.rest,
      prefix: named.area.prefix,
      protectedGlobs: named.area.protectedGlobs ?? [],
      ...(named.area.readOnly ? { readOnly: true } : {}),
      ...(named.area.sealed ? { sealed: true } : {}),
    };
  }
  return { ...root, arg };
}

/** The place a real path (already resolved and confined) lies in, deepest first; undefined when none. */
export function placeOf(ctx: ToolContext, realPath: string): Located | undefined {
  return places(ctx).find((place) => isLexicallyInside(place.root, realPath));
}

/**
 * How a real path is shown to the model and to people: relative to the root (`.` for the root itself), else
 * under its area's prefix (`/session/uploads/x.csv`), else relative to the root as it always was.
 */
export function showPath(ctx: ToolContext, realPath: string): string {
  const place = placeOf(ctx, realPath) ?? { root: ctx.workspace, prefix: null };
  const rel = path.relative(place.root, realPath).split(path.sep).join('/');
  if (place.prefix === null) return rel === '' ? '.' : rel;
  return rel === '' ? place.prefix : `${place.prefix}/${rel}`;
}

/**
 * Issue #37: where the model finds the whole of a cut result kept as the artifact `handle`, in steps it can take:
 * the path its tools read (`/artifacts/…`), or, in a session without that area (older sessions), that they cannot.
 */
export function wholeResultAt(ctx: Pick<ToolContext, 'areas'>, handle: string): string {
  const area = ctx.areas?.find((candidate) => candidate.sealed && candidate.prefix === '/artifacts');
  return area
    ? `the whole is ${area.prefix}/${handle}: read it with read_file (offset, limit) or search it with grep`
    : 'the whole is kept for the user; tools cannot read it in this session';
}
