import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import { showPath } from './areas.js';
import { hiddenFromWalk, locatePath } from './confine.js';
import { ignoredDirNames, toolLimits } from './limits.js';
import type { ToolContext } from './types.js';

// "did you mean src/server.js?": the files and folders nearest to a path that does not exist, from a bounded
// walk of the folder the path belongs to (never following links, skipping what list_dir and glob skip).

/** What the caller needs: a file to read or change, a folder to list or run in, or either. */
export type NearKind = 'file' | 'folder' | 'any';

type Candidate = { rel: string; folder: boolean };

/** Files and folders under `root`, nearest levels first, at most `max`; links are listed as files, never followed; `hidden` ones (the Keel home) left out. */
async function walkBounded(
  root: string,
  max: number,
  hidden: (realPath: string) => boolean,
  signal?: AbortSignal,
): Promise<Candidate[]> {
  const found: Candidate[] = [];
  const queue: string[] = [''];
  while (queue.length > 0 && found.length < max) {
    if (signal?.aborted) break;
    const rel = queue.shift() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (found.length >= max) break;
      if (ignoredDirNames.includes(entry.name)) continue;
      if (hidden(path.join(root, rel, entry.name))) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const folder = entry.isDirectory();
      found.push({ rel: child, folder });
      if (folder) queue.push(child);
    }
  }
  return found;
}

/** The argument as a path relative to its folder, lower-case, or undefined when it leaves the folder. */
function queryOf(root: string, located: string): string | undefined {
  const rel = path.isAbsolute(located)
    ? path.relative(root, path.resolve(located))
    : path.posix.normalize(located.split(path.sep).join('/'));
  const query = rel.split(path.sep).join('/').replace(/\/+$/, '');
  if (query === '' || query === '.' || query === '..' || query.startsWith('../')) return undefined;
  return query.toLowerCase();
}

/**
 * How near a candidate is: 0 when one path ends with the other (`lib/server.js` for `server.js`, `src/x` for
 * `persistent/project/src/x`), 1 within an edit distance of a third of the length (at least 2), 2 for the same
 * name in another folder; undefined when it is not near at all.
 */
function rank(query: string, candidate: string): { tier: number; score: number } | undefined {
  const lower = candidate.toLowerCase();
  if (lower === query) return undefined;
  if (lower.endsWith(`/${query}`) || query.endsWith(`/${lower}`)) {
    return { tier: 0, score: Math.abs(lower.length - query.length) };
  }
  const edits = distance(query, lower);
  if (edits <= Math.max(2, Math.floor(query.length / 3))) return { tier: 1, score: edits };
  if (path.posix.basename(lower) === path.posix.basename(query)) return { tier: 2, score: edits };
  return undefined;
}

/**
 * Up to three existing paths near `arg` (best first), shown as the model addresses them, from a walk of the
 * root or area the argument belongs to, bounded by `toolLimits.nearMatchMaxEntries` (tests pass `maxEntries`). Never throws: an argument
 * that cannot be placed, or leaves its folder, has no near matches.
 */
export async function nearMatches(
  ctx: ToolContext,
  arg: string,
  kind: NearKind = 'any',
  options: { maxEntries?: number } = {},
): Promise<string[]> {
  let root: string;
  let query: string | undefined;
  try {
    const located = locatePath(ctx, arg, 'path');
    root = located.root;
    query = queryOf(root, located.arg);
  } catch {
    return [];
  }
  if (query === undefined) return [];
  const maxEntries = options.maxEntries ?? toolLimits.nearMatchMaxEntries;
  let hidden: (realPath: string) => boolean;
  try {
    hidden = hiddenFromWalk(ctx, root);
  } catch {
    return [];
  }
  const candidates = await walkBounded(root, maxEntries, hidden, ctx.signal);
  const ranked: { rel: string; tier: number; score: number }[] = [];
  for (const candidate of candidates) {
    if ((kind === 'file' && candidate.folder) || (kind === 'folder' && !candidate.folder)) continue;
    const near = rank(query, candidate.rel);
    if (near) ranked.push({ rel: candidate.rel, ...near });
  }
  ranked.sort((a, b) => a.tier - b.tier || a.score - b.score || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return ranked
    .slice(0, toolLimits.nearMatchesShown)
    .map((near) => showPath(ctx, path.join(root, ...near.rel.split('/'))));
}

/** `; did you mean a?` / `; did you mean a, b or c?`, or '' for no matches: the tail of a "does not exist" error. */
export function didYouMean(matches: readonly string[]): string {
  if (matches.length === 0) return '';
  if (matches.length === 1) return `; did you mean ${matches[0]}?`;
  return `; did you mean ${matches.slice(0, -1).join(', ')} or ${matches[matches.length - 1]}?`;
}

/** The error text for a path that does not exist, with its near matches: `path: "x" does not exist; did you mean y?`. */
export async function missingPath(
  ctx: ToolContext,
  arg: string,
  kind: NearKind,
  argName = 'path',
): Promise<string> {
  return `${argName}: "${arg}" does not exist${didYouMean(await nearMatches(ctx, arg, kind))}`;
}
