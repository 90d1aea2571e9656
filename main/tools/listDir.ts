import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { hiddenFromWalk, resolvePath } from './confine.js';
import { ignoredDirNames, toolLimits } from './limits.js';
import { showPath } from './areas.js';
import { missingPath } from './nearMatches.js';
import { errorOutcome } from './outcome.js';
import { previewPathArg } from './preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';

const parameters = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      'Directory to list: relative to the project root ("." for the root), or absolute (/session for the session files).',
    ),
  depth: z
    .number()
    .int()
    .min(1)
    .max(toolLimits.listMaxDepth)
    .optional()
    .describe(
      `How many levels to show: 1 = direct children only. Default 2, at most ${toolLimits.listMaxDepth}.`,
    ),
});

/** list_dir arguments after validation. */
export type ListDirArgs = z.infer<typeof parameters>;

/**
 * Lists a workspace directory: sorted, depth-limited, bounded in entries. Directories end in `/`,
 * symbolic links in `@` and are never followed, .git and node_modules are shown but not expanded.
 */
export const listDirTool: ToolModule<typeof parameters> = {
  name: 'list_dir',
  description:
    'List the files and folders in a directory, as a sorted tree. Directories end in "/", ' +
    'symbolic links end in "@" and are not followed. Use depth to see deeper levels.',
  parameters,
  mode: 'read-only',
  kind: 'read',
  execute: listDir,
  preview: (args, ctx) => previewPathArg(args.path, ctx),
  resume: { rule: 'rerun' },
};

async function listDir(args: ListDirArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const real = resolvePath(ctx, args.path, 'path');
  const info = await stat(real).catch(() => null);
  if (!info) return errorOutcome(await missingPath(ctx, args.path, 'folder'));
  if (!info.isDirectory())
    return errorOutcome(`path: "${args.path}" is not a directory; use read_file for files`);
  const depth = args.depth ?? 2;
  // The Keel home inside the project is not there for tools: no line, not even its name.
  const hidden = hiddenFromWalk(ctx, real);
  const lines: string[] = [];
  let truncated = false;

  const walk = async (dir: string, prefix: string, level: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      lines.push(`${prefix}(unreadable)`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (ctx.signal?.aborted) throw new Error('list_dir was cancelled');
      if (lines.length >= toolLimits.listMaxEntries) {
        truncated = true;
        return;
      }
      const rel = prefix + entry.name;
      if (hidden(path.join(dir, entry.name))) continue;
      if (entry.isSymbolicLink()) {
        lines.push(`${rel}@`);
      } else if (entry.isDirectory()) {
        const skip = ignoredDirNames.includes(entry.name);
        lines.push(skip ? `${rel}/ (not expanded)` : `${rel}/`);
        if (!skip && level < depth) await walk(path.join(dir, entry.name), `${rel}/`, level + 1);
      } else if (entry.isFile()) {
        lines.push(rel);
      } else {
        lines.push(`${rel} (special file)`);
      }
      if (truncated) return;
    }
  };
  await walk(real, '', 1);

  const where = showPath(ctx, real);
  const header = `${where === '.' ? 'workspace root' : where + '/'} (depth ${depth}):`;
  const body = lines.length === 0 ? '(empty directory)' : lines.join('\n');
  const footer = truncated
    ? `\n[stopped after ${toolLimits.listMaxEntries} entries; list a subdirectory or lower depth]`
    : '';
  return { content: `${header}\n${body}${footer}`, isError: false, path: where };
}
