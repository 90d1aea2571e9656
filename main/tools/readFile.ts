import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { readConfined, resolvePath } from './confine.js';
import { toolLimits } from './limits.js';
import { showPath } from './areas.js';
import { missingPath } from './nearMatches.js';
import { errorOutcome, looksBinary, truncateText } from './outcome.js';
import { previewPathArg } from './preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';

const parameters = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      'File to read: relative to the project root, or absolute (/session/... for the session files).',
    ),
  offset: z.number().int().min(1).optional().describe('First line to show, 1-based. Default 1.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(toolLimits.readMaxLines)
    .optional()
    .describe(
      `How many lines to show. Default ${toolLimits.readDefaultLines}, at most ${toolLimits.readMaxLines}.`,
    ),
});

/** read_file arguments after validation. */
export type ReadFileArgs = z.infer<typeof parameters>;

/**
 * Reads a text file inside the workspace as numbered lines (like `cat -n`), bounded in lines,
 * line length and total characters; refuses directories, special files and binary files.
 */
export const readFileTool: ToolModule<typeof parameters> = {
  name: 'read_file',
  description:
    'Read a text file. Returns numbered lines (like cat -n). Use offset and limit ' +
    'to page through long files; the result says where to continue.',
  parameters,
  mode: 'read-only',
  kind: 'read',
  execute: readFile,
  preview: (args, ctx) => previewPathArg(args.path, ctx),
  resume: { rule: 'rerun' },
};

/** Splits text into lines the way editors count them: a final newline does not start a new line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

async function readFile(args: ReadFileArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const real = resolvePath(ctx, args.path, 'path');
  const rel = showPath(ctx, real);
  // stat before any open: opening a FIFO or a device could block or never end.
  const info = await stat(real).catch(() => null);
  if (!info) return errorOutcome(await missingPath(ctx, args.path, 'file'));
  if (info.isDirectory()) return errorOutcome(`path: "${args.path}" is a directory; use list_dir`);
  if (!info.isFile()) return errorOutcome(`path: "${args.path}" is not a regular file`);

  const {
    data,
    size,
    truncated: partial,
  } = await readConfined(ctx, args.path, toolLimits.fileMaxBytes, true);
  if (looksBinary(data)) {
    return errorOutcome(`path: "${rel}" is a binary file (${size} bytes); read_file shows text files only`);
  }
  const text = data.toString('utf8');
  let lines = splitLines(text);
  // A cut in the middle of the last line would show half a line as if it were whole.
  if (partial && !text.endsWith('\n') && lines.length > 1) lines = lines.slice(0, -1);
  const total = lines.length;
  const offset = args.offset ?? 1;
  const limit = args.limit ?? toolLimits.readDefaultLines;
  if (total === 0) return { content: `(${rel} is empty)`, isError: false, path: rel };
  if (offset > total) {
    return errorOutcome(
      `offset: ${offset} is past the end of "${rel}" (${total}${partial ? '+' : ''} lines)`,
    );
  }

  const out: string[] = [];
  let chars = 0;
  let last = offset - 1;
  for (let i = offset - 1; i < Math.min(total, offset - 1 + limit); i++) {
    const cut = truncateText(lines[i] ?? '', toolLimits.readMaxLineChars);
    const numbered = `${String(i + 1).padStart(6)}\t${cut.text.replace(/\r$/, '')}${cut.truncated ? ' [line cut]' : ''}`;
    if (chars + numbered.length + 1 > toolLimits.readMaxOutputChars && out.length > 0) break;
    out.push(numbered);
    chars += numbered.length + 1;
    last = i + 1;
  }

  const notes: string[] = [];
  if (last < total) {
    notes.push(
      `[lines ${offset}-${last} of ${total}${partial ? '+' : ''}; continue with offset=${last + 1}]`,
    );
  }
  if (partial && last >= total) {
    notes.push(
      `[the file is ${size} bytes; read_file reads only its first ${toolLimits.fileMaxBytes} bytes — use grep to find the rest]`,
    );
  }
  const content = out.join('\n') + (notes.length > 0 ? `\n${notes.join('\n')}` : '');
  return { content, isError: false, path: rel };
}
