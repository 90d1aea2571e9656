import { spawn } from 'node:child_process';
import { constants as fsConstants, type Dirent } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import picomatch from 'picomatch';
import { z } from 'zod';
import { placeOf, showPath } from './areas.js';
import { hiddenFoldersFor, hiddenFromWalk, resolvePath } from './confine.js';
import { ignoredDirNames, toolLimits } from './limits.js';
import { missingPath } from './nearMatches.js';
import { errorOutcome, looksBinary, toRelative, truncateText } from './outcome.js';
import { previewPathArg } from './preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';
import { ToolError } from './types.js';

const parameters = z.strictObject({
  pattern: z.string().min(1).describe('Regular expression to search for (ripgrep / Rust regex syntax).'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'File or directory to search: relative to the project root, or absolute (/session for the session files). Default: the whole project.',
    ),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe('Only search files whose path matches this glob, e.g. "*.ts" or "src/**/*.go".'),
});

/** grep arguments after validation. */
export type GrepArgs = z.infer<typeof parameters>;

/** One matching line: the path as shown (root-relative, or `/session/...`), 1-based line number, line text (cut to a bound). */
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

/** Which search engine ran and what it found; `truncated` when the match bound stopped it. */
export interface GrepResult {
  engine: 'ripgrep' | 'builtin';
  matches: GrepMatch[];
  truncated: boolean;
}

/** How to search: ripgrep, the built-in fallback, or ripgrep when it can be started (the default). */
export interface GrepOptions {
  engine?: 'auto' | 'ripgrep' | 'builtin';
  /** The ripgrep executable; default `rg` on PATH. */
  rgPath?: string;
  maxMatches?: number;
  timeoutMs?: number;
}

/**
 * Searches file contents under a workspace path with ripgrep, or a built-in fallback when ripgrep
 * is missing. Links are never followed, .git and node_modules are skipped, results are sorted by
 * path, bounded in count and line length, and redacted on the way out.
 */
export const grepTool: ToolModule<typeof parameters> = {
  name: 'grep',
  description:
    'Search file contents with a regular expression. Returns "path:line: text" for each ' +
    'matching line, sorted by path. Narrow with path (a file or directory) and glob (e.g. "*.ts").',
  parameters,
  mode: 'read-only',
  kind: 'read',
  execute: (args, ctx) => grepToOutcome(args, ctx),
  preview: (args, ctx) => previewPathArg(args.path, ctx),
  resume: { rule: 'rerun' },
};

/** Runs a search and formats it for the model; the grep tool is this with the default options. */
export async function grepToOutcome(
  args: GrepArgs,
  ctx: ToolContext,
  options: GrepOptions = {},
): Promise<ToolOutcome> {
  if (args.pattern.includes('\0') || args.glob?.includes('\0'))
    return errorOutcome('pattern: contains a NUL byte');
  const result = await searchWorkspace(args, ctx, options);
  if (result.matches.length === 0) return { content: 'No matches.', isError: false };
  const body = result.matches.map((m) => `${m.path}:${m.line}: ${m.text}`).join('\n');
  const footer = result.truncated
    ? `\n[stopped after ${result.matches.length} matches; narrow the search with path or glob]`
    : '';
  return { content: body + footer, isError: false };
}

/** Searches the workspace; throws a ToolError with a usable message for a bad pattern or a timeout. */
export async function searchWorkspace(
  args: GrepArgs,
  ctx: ToolContext,
  options: GrepOptions = {},
): Promise<GrepResult> {
  const target = resolvePath(ctx, args.path ?? '.', 'path');
  const info = await lstat(target).catch(() => undefined);
  if (!info) throw new ToolError(await missingPath(ctx, args.path ?? '.', 'any'));
  // A FIFO, socket or device named as the path would block the search (or never end): files and folders only.
  if (!info.isFile() && !info.isDirectory() && !info.isSymbolicLink()) {
    throw new ToolError(`path: "${args.path ?? '.'}" is not a regular file or a folder`);
  }
  const engine = options.engine ?? 'auto';
  const limits = {
    maxMatches: options.maxMatches ?? toolLimits.grepMaxMatches,
    timeoutMs: options.timeoutMs ?? toolLimits.grepTimeoutMs,
  };
  if (engine !== 'builtin') {
    const found = await searchWithRipgrep(args, target, ctx, options.rgPath ?? 'rg', limits);
    if (found) return found;
    if (engine === 'ripgrep') throw new ToolError('ripgrep is not installed');
  }
  return searchBuiltin(args, target, ctx, limits);
}

interface SearchLimits {
  maxMatches: number;
  timeoutMs: number;
}

type RgText = { text: string } | { bytes: string };

function rgText(value: RgText | undefined): string {
  if (!value) return '';
  return 'text' in value ? value.text : Buffer.from(value.bytes, 'base64').toString('utf8');
}

function shownLine(text: string): string {
  const line = text.replace(/\r?\n$/, '');
  const cut = truncateText(line, toolLimits.grepMaxLineChars);
  return cut.truncated ? `${cut.text} [line cut]` : cut.text;
}

/** Resolves null when ripgrep cannot be started, so the caller falls back. */
function searchWithRipgrep(
  args: GrepArgs,
  target: string,
  ctx: ToolContext,
  rgPath: string,
  limits: SearchLimits,
): Promise<GrepResult | null> {
  const base = placeOf(ctx, target)?.root ?? ctx.workspace;
  // ripgrep runs in the folder searched and is given the target relative to it, so what it prints (matches
  // and errors alike) is in the model's terms, never a host path. Its globs are relative to that folder too:
  // the Keel home inside it is excluded last (the last matching glob wins), and dropped below whatever it says.
  const hidden = hiddenFromWalk(ctx, target);
  const hiddenGlobs = hiddenFoldersFor(ctx, target).flatMap((folder) => [
    '--glob',
    `!/${escapeRgGlob(path.relative(base, folder).split(path.sep).join('/'))}`,
  ]);
  const rgArgs = [
    '--json',
    '--no-config',
    '--hidden',
    '--no-follow',
    '--sort=path',
    `--max-filesize=${toolLimits.grepMaxFileBytes}`,
    ...ignoredDirNames.flatMap((name) => ['--glob', `!${name}`]),
    ...(args.glob ? ['--glob', args.glob] : []),
    ...hiddenGlobs,
    '--regexp',
    args.pattern,
    '--',
    path.relative(base, target) || '.',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, rgArgs, {
      cwd: base,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C.UTF-8' },
    });
    const matches: GrepMatch[] = [];
    let truncated = false;
    let stderr = '';
    let settled = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limits.timeoutMs);
    const onAbort = (): void => void child.kill('SIGKILL');
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onAbort);
      fn();
    };

    child.on('error', (err: NodeJS.ErrnoException) => {
      finish(() =>
        err.code === 'ENOENT' ? resolve(null) : reject(new ToolError(`grep failed: ${err.message}`)),
      );
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (truncated || !line.startsWith('{"type":"match"')) return;
      const event = JSON.parse(line) as { data: { path: RgText; lines: RgText; line_number?: number } };
      if (matches.length >= limits.maxMatches) {
        truncated = true;
        child.kill('SIGTERM');
        return;
      }
      const abs = path.resolve(base, rgText(event.data.path));
      if (hidden(abs)) return;
      matches.push({
        path: showPath(ctx, abs),
        line: event.data.line_number ?? 0,
        text: shownLine(rgText(event.data.lines)),
      });
    });
    child.on('close', (code) => {
      finish(() => {
        if (ctx.signal?.aborted) return reject(new ToolError('grep was cancelled'));
        if (timedOut)
          return reject(new ToolError(`grep timed out after ${limits.timeoutMs} ms; narrow the search`));
        // Exit 2 with matches means some files could not be read; the matches still stand.
        if (code === 2 && matches.length === 0 && !truncated) {
          return reject(new ToolError(`grep: ${firstLines(stderr) || 'ripgrep failed'}`));
        }
        resolve({ engine: 'ripgrep', matches, truncated });
      });
    });
  });
}

/** A literal path as a ripgrep glob: its glob characters escaped with a backslash (globset's escape on Unix). */
function escapeRgGlob(literal: string): string {
  return literal.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`);
}

function firstLines(text: string): string {
  return text.trim().split('\n').slice(0, 6).join('\n');
}

/**
 * The regex runs in a worker thread so a catastrophic pattern can be stopped by terminating the
 * worker instead of freezing the harness. Files are read (without following links) here.
 */
const matcherSource = `
const { parentPort, workerData } = require('node:worker_threads');
let re;
try { re = new RegExp(workerData.pattern, 'u'); } catch (e) {
  try { re = new RegExp(workerData.pattern); } catch (e2) { parentPort.postMessage({ error: e2.message }); }
}
parentPort.postMessage({ ready: !!re });
parentPort.on('message', (files) => {
  const out = [];
  for (const f of files) {
    const lines = f.text.split('\\n');
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i])) { out.push({ path: f.path, line: i + 1, text: lines[i] }); if (out.length >= workerData.max) break; }
    }
    if (out.length >= workerData.max) break;
  }
  parentPort.postMessage({ matches: out });
});
`;

class Matcher {
  private readonly worker: Worker;
  private pending: { resolve: (v: GrepMatch[]) => void; reject: (e: Error) => void } | null = null;
  private exited = false;
  /** Settles once the worker compiled the pattern (or failed to); match() waits for it. */
  readonly ready: Promise<void>;

  constructor(pattern: string, max: number) {
    this.worker = new Worker(matcherSource, { eval: true, workerData: { pattern, max } });
    let settleReady: { resolve: () => void; reject: (e: Error) => void } | null = null;
    this.ready = new Promise((resolve, reject) => (settleReady = { resolve, reject }));
    this.worker.on('message', (msg: { ready?: boolean; error?: string; matches?: GrepMatch[] }) => {
      if (msg.error !== undefined)
        settleReady?.reject(new ToolError(`pattern: invalid regular expression: ${msg.error}`));
      else if (msg.ready !== undefined) settleReady?.resolve();
      else if (msg.matches && this.pending) {
        const p = this.pending;
        this.pending = null;
        p.resolve(msg.matches);
      }
    });
    this.worker.on('error', (err) => settleReady?.reject(err));
    this.worker.on('exit', () => {
      this.exited = true;
      settleReady?.reject(new ToolError('grep was stopped'));
      this.pending?.reject(new ToolError('grep was stopped'));
      this.pending = null;
    });
  }

  async match(files: { path: string; text: string }[]): Promise<GrepMatch[]> {
    await this.ready;
    if (this.exited) throw new ToolError('grep was stopped');
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(files);
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The fallback: walk without following links, read regular text files, match in a worker. */
async function searchBuiltin(
  args: GrepArgs,
  target: string,
  ctx: ToolContext,
  limits: SearchLimits,
): Promise<GrepResult> {
  const include = args.glob ? picomatch(args.glob, { dot: true, basename: !args.glob.includes('/') }) : null;
  // The glob matches paths relative to the folder searched in (the root, or an area's folder), like ripgrep's.
  const base = placeOf(ctx, target)?.root ?? ctx.workspace;
  // The Keel home inside the folder searched is not walked: its files are not there for tools.
  const hidden = hiddenFromWalk(ctx, target);
  const matcher = new Matcher(args.pattern, limits.maxMatches + 1);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void matcher.stop();
  }, limits.timeoutMs);
  const onAbort = (): void => void matcher.stop();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });

  const matches: GrepMatch[] = [];
  let batch: { path: string; text: string }[] = [];
  let batchBytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const found = await matcher.match(batch);
    batch = [];
    batchBytes = 0;
    matches.push(...found.slice(0, limits.maxMatches + 1 - matches.length));
  };
  const full = (): boolean => matches.length > limits.maxMatches;

  const add = async (rel: string, text: string | null): Promise<void> => {
    if (text === null) return;
    batch.push({ path: rel, text });
    batchBytes += text.length;
    if (batchBytes > 1024 * 1024) await flush();
  };
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // Files are read a group at a time, concurrently, and searched in name order.
    let group: { abs: string; rel: string }[] = [];
    const searchGroup = async (): Promise<void> => {
      const texts = await Promise.all(group.map((file) => readTextNoFollow(file.abs)));
      for (const [i, file] of group.entries()) await add(file.rel, texts[i] ?? null);
      group = [];
    };
    for (const entry of entries) {
      if (full() || timedOut || ctx.signal?.aborted) return;
      const abs = path.join(dir, entry.name);
      if (hidden(abs)) continue;
      if (entry.isDirectory() && !ignoredDirNames.includes(entry.name)) {
        await searchGroup();
        await walk(abs);
      } else if (entry.isFile()) {
        if (include && !include(toRelative(base, abs))) continue;
        group.push({ abs, rel: showPath(ctx, abs) });
        if (group.length >= 32) await searchGroup();
      }
    }
    await searchGroup();
  };

  try {
    // Fail fast on a bad pattern, before walking a large tree.
    await matcher.ready;
    const info = await stat(target);
    if (info.isDirectory()) await walk(target);
    else await add(showPath(ctx, target), await readTextNoFollow(target));
    if (!full()) await flush();
  } catch (err) {
    if (ctx.signal?.aborted) throw new ToolError('grep was cancelled');
    if (timedOut)
      throw new ToolError(
        `grep timed out after ${limits.timeoutMs} ms; narrow the search or simplify the pattern`,
      );
    throw err;
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onAbort);
    await matcher.stop();
  }
  if (ctx.signal?.aborted) throw new ToolError('grep was cancelled');
  if (timedOut) throw new ToolError(`grep timed out after ${limits.timeoutMs} ms; narrow the search`);
  const truncated = matches.length > limits.maxMatches;
  return {
    engine: 'builtin',
    matches: matches.slice(0, limits.maxMatches).map((m) => ({ ...m, text: shownLine(m.text) })),
    truncated,
  };
}

/** Reads a regular, non-binary file below the size bound; null for anything else. Never follows a final link. */
async function readTextNoFollow(abs: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > toolLimits.grepMaxFileBytes) return null;
    const data = await handle.readFile();
    if (looksBinary(data)) return null;
    return data.toString('utf8');
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}
