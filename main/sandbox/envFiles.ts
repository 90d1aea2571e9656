// Where redaction's .env values come from: the workspace's .env* files, found without a window that decoys
// can fill, and what the search could not cover, said (issue #38).
import fs from 'node:fs';
import path from 'node:path';
import { readFileConfinedSync } from './confinedRead.js';

/** The bounds of the search: none is a count of .env files, so decoys cannot fill a window. */
export type EnvSearchLimits = {
  /** One .env file is read up to this much (a longer one: its start, and the cut is said). */
  fileBytes: number;
  /** All .env files together, read in order of priority (real before templates, shallow before deep). */
  totalBytes: number;
  /** Directory entries the search looks at before it stops (and says which folders it left). */
  walkEntries: number;
};

/** 1 MiB a file, 8 MiB in all, 500,000 directory entries (a large monorepo's tree, ~0.5 s). */
export const ENV_SEARCH_LIMITS: EnvSearchLimits = {
  fileBytes: 1024 * 1024,
  totalBytes: 8 * 1024 * 1024,
  walkEntries: 500_000,
};

/** The .env* files found and read (paths relative to the workspace, `/`-separated), and what was left out. */
export type EnvFiles = {
  files: { path: string; text: string }[];
  /** One line per file not read or read in part, and one for folders not searched; empty when all was read. */
  gaps: string[];
};

/** `.env`, `.env.local`, `.env.production`, … any name starting with `.env`. */
const ENV_FILE = /^\.env/i;
/** Templates (`.env.example`, `.env.sample`, …) usually hold no secrets: read after every other .env file. */
const ENV_TEMPLATE = /\.(?:examples?|samples?|templates?|tmpl|tpl|dist|defaults?)(?:\.|$)/i;
/** Folders never searched: installed packages and git's own. */
const ENV_SKIPPED_FOLDERS = new Set(['node_modules', '.git']);

/**
 * Finds and reads the workspace's .env* files. Not defeatable by count (issue #38: 200 decoy `.env.example`
 * files once filled a 200-file window ahead of the user's `.env`): the walk is breadth-first from the root
 * (the user's own files first), at any depth, bounded by the entries it looks at; the files are read real
 * ones before templates and shallow before deep, bounded by bytes. Whatever a bound leaves out is listed in
 * `gaps`, so it can be said. Never throws.
 */
export function findEnvFiles(root: string, limits: EnvSearchLimits = ENV_SEARCH_LIMITS): EnvFiles {
  const found: { file: string; depth: number; template: boolean }[] = [];
  const gaps: string[] = [];
  const queue: { dir: string; depth: number }[] = [{ dir: '', depth: 0 }];
  let entries = 0;
  let unsearched: string[] = [];
  const unreadable: string[] = [];
  for (let next = 0; next < queue.length; next++) {
    const { dir, depth } = queue[next] as { dir: string; depth: number };
    if (entries >= limits.walkEntries) {
      unsearched = queue.slice(next).map((item) => item.dir);
      break;
    }
    let listing: fs.Dirent[];
    try {
      listing = fs.readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch (error) {
      unreadable.push(`${dir || '.'} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      continue;
    }
    entries += listing.length;
    // By name, so what a bound leaves out is the same on every run and every filesystem.
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of listing) {
      const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!ENV_SKIPPED_FOLDERS.has(entry.name)) queue.push({ dir: relative, depth: depth + 1 });
      } else if (ENV_FILE.test(entry.name) && (entry.isFile() || entry.isSymbolicLink())) {
        found.push({ file: relative, depth, template: ENV_TEMPLATE.test(entry.name.slice(4)) });
      }
    }
  }
  found.sort(
    (a, b) =>
      Number(a.template) - Number(b.template) ||
      a.depth - b.depth ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
  );
  const files: { path: string; text: string }[] = [];
  let budget = limits.totalBytes;
  const unread: string[] = [];
  const partial: string[] = [];
  const failed: string[] = [];
  for (const { file } of found) {
    if (budget <= 0) {
      unread.push(file);
      continue;
    }
    let text: string;
    try {
      // Confined: a .env that is a FIFO, a device or a link outside the workspace is skipped, never read.
      const result = readFileConfinedSync(root, file, {
        argName: 'envFile',
        maxBytes: Math.min(limits.fileBytes, budget),
        truncate: true,
      });
      text = result.data.toString('utf8');
      budget -= result.data.length;
      if (result.truncated) partial.push(`${file} (its first ${result.data.length} bytes)`);
    } catch (error) {
      failed.push(`${file} (${(error as { code?: string }).code ?? describe(error)})`);
      continue;
    }
    files.push({ path: file, text });
  }
  if (partial.length > 0)
    gaps.push(
      `${partial.length} .env file(s) read in part (${limits.fileBytes} bytes a file, ${limits.totalBytes} in all): ${listSome(partial)}`,
    );
  if (failed.length > 0) gaps.push(`${failed.length} .env file(s) could not be read: ${listSome(failed)}`);
  if (unread.length > 0)
    gaps.push(
      `${unread.length} .env file(s) not read, the ${limits.totalBytes}-byte budget for .env files ran out: ${listSome(unread)}`,
    );
  if (unsearched.length > 0)
    gaps.push(
      `${unsearched.length} folder(s) not searched for .env files, the search stopped after ${limits.walkEntries} entries: ${listSome(unsearched)}`,
    );
  if (unreadable.length > 0)
    gaps.push(`${unreadable.length} folder(s) could not be searched for .env files: ${listSome(unreadable)}`);
  return { files, gaps };
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 120);
}

function listSome(items: readonly string[], shown = 10, separator = ', '): string {
  const head = items.slice(0, shown).join(separator);
  return items.length > shown ? `${head}${separator}and ${items.length - shown} more` : head;
}

/**
 * One sentence for the user when the .env search left something out (a notice), else undefined: redaction
 * does not know the values of what it could not read.
 */
export function describeEnvGaps(gaps: readonly string[]): string | undefined {
  if (gaps.length === 0) return undefined;
  return `Redaction may miss secrets it was not shown: ${listSome(gaps, 5, '; ')}`;
}
