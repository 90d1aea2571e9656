import path from 'node:path';
import { escapePath, isDynamicPattern, glob as runGlob } from 'tinyglobby';
import { z } from 'zod';
import { showPath } from './areas.js';
import { hiddenFoldersFor, hiddenFromWalk, locatePath } from './confine.js';
import { ignoredDirNames, toolLimits } from './limits.js';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';
import { resolveInWorkspace } from '../sandbox/paths.js';
import { realpathNative, viewPrefixOf } from '../sandbox/viewPath.js';

const parameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob relative to the project root, e.g. "src/**/*.ts" or "**/package.json"; /session/**/*.csv for the session files.',
    ),
});

/** glob arguments after validation. */
export type GlobArgs = z.infer<typeof parameters>;

/**
 * Finds workspace files by glob. Patterns that are absolute or climb with `..` are refused, links
 * are not traversed, every result is re-checked to lie inside the workspace, results are sorted
 * and bounded; .git and node_modules are skipped unless the pattern names them.
 */
export const globTool: ToolModule<typeof parameters> = {
  name: 'glob',
  description:
    'Find files whose path matches a glob pattern (e.g. "src/**/*.ts"). ' +
    'Returns paths relative to the project root, sorted. Skips .git and node_modules unless the pattern names them.',
  parameters,
  mode: 'read-only',
  kind: 'read',
  execute: globFiles,
  preview: () => previewSubject(),
  resume: { rule: 'rerun' },
};

/** Returns why a glob pattern may not be used, or null when it stays inside the workspace. */
export function checkGlobPattern(pattern: string): string | null {
  if (pattern.includes('\0')) return 'pattern: contains a NUL byte';
  if (pattern.startsWith('/') || pattern.startsWith('\\') || /^[A-Za-z]:/.test(pattern)) {
    return 'pattern: must be relative to the workspace root, not absolute';
  }
  if (pattern.startsWith('~')) return 'pattern: must be relative to the workspace root ("~" is not expanded)';
  // `..` as a whole segment, also inside braces or extglobs, e.g. "{..,src}/x" or "@(..)/x".
  if (/(^|[/\\{},(|@!?*+])\.\.($|[/\\{},)|])/.test(pattern)) {
    return 'pattern: may not contain ".." segments; every match must stay inside the workspace';
  }
  return null;
}

/**
 * The folder a pattern searches and the pattern relative to it: the root for a relative pattern; an area for
 * `/session/...` or `/persistent/<name>/...`; the root or an area for an absolute pattern on disk inside it.
 * Any other absolute pattern is returned as it is, for checkGlobPattern to refuse.
 */
function placePattern(ctx: ToolContext, pattern: string): { root: string; pattern: string } {
  if (!pattern.startsWith('/') && !path.isAbsolute(pattern)) return { root: ctx.workspace, pattern };
  const located = locatePath(ctx, pattern, 'pattern');
  if (located.arg !== pattern) return { root: located.root, pattern: located.arg };
  const rel = path.relative(located.root, path.resolve(pattern));
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
    return { root: located.root, pattern };
  return { root: located.root, pattern: rel === '' ? '.' : rel.split(path.sep).join('/') };
}

/**
 * True when `folder` resolves (links followed) to `root` or a folder under it. `realFolders` caches the
 * lookups of one search only: a later search must see a folder swapped for a link since.
 */
function folderIsInside(folder: string, root: string, realFolders: Map<string, string | null>): boolean {
  const real = (target: string) => {
    if (!realFolders.has(target)) {
      let resolved: string | null;
      try {
        resolved = realpathNative(target);
      } catch {
        resolved = null;
      }
      realFolders.set(target, resolved);
    }
    return realFolders.get(target) ?? null;
  };
  const realRoot = real(root);
  const realFolder = real(folder);
  return (
    realRoot !== null &&
    realFolder !== null &&
    (realFolder === realRoot || realFolder.startsWith(realRoot + path.sep))
  );
}

/**
 * Issue #36: under a view's holder (`/proc/<pid>/root/...`) the kernel follows a link's absolute target from Keel's
 * own `/`, where the view is an empty folder: the pattern's fixed folders (`dist/src` of `dist/src/*.ts`) are resolved
 * in the view first (`resolveInWorkspace`), as a copy's walk follows them, and the walk starts there; `under` is that
 * part as the pattern spells it, for the names shown. Elsewhere, or when that part leads outside, the walk as before.
 */
function throughView(placed: { root: string; pattern: string }): {
  cwd: string;
  pattern: string;
  under: string;
} {
  const as = { cwd: placed.root, pattern: placed.pattern, under: '' };
  if (viewPrefixOf(placed.root) === undefined) return as;
  const rest = placed.pattern.split('/');
  const fixed: string[] = [];
  while (rest.length > 1 && !isDynamicPattern(rest[0] as string) && rest[0] !== '..' && rest[0] !== '')
    fixed.push(rest.shift() as string);
  if (fixed.length === 0) return as;
  try {
    const cwd = resolveInWorkspace(placed.root, fixed.join('/'), { argName: 'pattern' });
    return { cwd, pattern: rest.join('/'), under: fixed.join('/') };
  } catch {
    return as;
  }
}

async function globFiles(args: GlobArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const placed = placePattern(ctx, args.pattern);
  const refusal = checkGlobPattern(placed.pattern);
  if (refusal) return errorOutcome(refusal);
  // The Keel home inside the root is not walked (its names are not there for tools), and is left out below
  // whatever the pattern, also when a link elsewhere leads into it.
  const hidden = hiddenFromWalk(ctx, placed.root);
  const hiddenRel = hiddenFoldersFor(ctx, placed.root).map((folder) =>
    escapePath(path.relative(placed.root, folder).split(path.sep).join('/')),
  );
  const ignore = [
    ...ignoredDirNames
      .filter((name) => !placed.pattern.includes(name))
      .flatMap((name) => [`**/${name}/**`, `**/${name}`]),
    ...hiddenRel.flatMap((rel) => [`${rel}/**`, rel]),
  ];
  const walked = throughView(placed);
  const found = (
    await runGlob(walked.pattern, {
      cwd: walked.cwd,
      dot: true,
      followSymbolicLinks: false,
      onlyFiles: true,
      ignore,
      signal: ctx.signal,
    })
  ).map((rel) => (walked.under === '' ? rel : `${walked.under}/${rel}`));
  // A link named in the pattern's fixed part (`out/*` with out -> ../outside, `r/etc/*` with r -> /) is walked
  // into by the expansion, and its names look inside: only names whose folder really is inside count.
  const realFolders = new Map<string, string | null>();
  const inside = found
    .map((rel) => path.resolve(placed.root, rel))
    .filter(
      (abs) =>
        abs.startsWith(placed.root + path.sep) &&
        folderIsInside(path.dirname(abs), placed.root, realFolders) &&
        !hidden(path.join(realFolders.get(path.dirname(abs)) ?? path.dirname(abs), path.basename(abs))),
    )
    .map((abs) => showPath(ctx, abs));
  inside.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (inside.length === 0) return { content: `No files match "${args.pattern}".`, isError: false };
  const shown = inside.slice(0, toolLimits.globMaxResults);
  const footer =
    inside.length > shown.length
      ? `\n[showing ${shown.length} of ${inside.length} matches; use a narrower pattern]`
      : '';
  return { content: shown.join('\n') + footer, isError: false };
}
