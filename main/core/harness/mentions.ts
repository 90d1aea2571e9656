import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { globSync } from 'tinyglobby';
import { GitError, runGit, splitNul } from '../persistent/git.js';

/*
 * `@` mentions in the composer (issue 37): files and folders of the project completing what the user types.
 * Confined to the project (paths relative to it; symbolic links not followed out of it) and gitignore-aware:
 * in a git repository the list is git's own (tracked and untracked files, minus the ignored ones); elsewhere a
 * walk that skips .git, node_modules and what the project's top .gitignore names.
 */

/** One completion: a project-relative path (folders end with `/`). */
export type Mention = { path: string; kind: 'file' | 'folder' };

/** At most this many files are listed from a project (a monorepo's first 50,000 are enough to complete). */
const MAX_FILES = 50_000;
const ALWAYS_SKIPPED = ['**/.git/**', '**/node_modules/**'];

/**
 * The project's files, relative, `/`-separated: git's list in a repository, else a gitignore-aware walk. Git
 * runs as every git Keel runs (persistent/git.ts: nothing the repository's config names runs, no hooks, no
 * fsmonitor), since the project's `.git/config` is the project's, not the user's word. Run from the project
 * folder, ls-files lists what is below it, relative to it.
 */
export async function projectFiles(projectFolder: string): Promise<string[]> {
  try {
    const { stdout } = await runGit(
      { cwd: projectFolder, env: {} },
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      { timeoutMs: 10_000 },
    );
    return splitNul(stdout).slice(0, MAX_FILES);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    // Not a repository (or git cannot read it): the walk below.
  }
  const ignored = topGitignore(projectFolder);
  const files = globSync('**/*', {
    cwd: projectFolder,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ALWAYS_SKIPPED,
  });
  return files.filter((file) => !ignored(file)).slice(0, MAX_FILES);
}

/** A matcher for the patterns of the project's top .gitignore (negations and nested files not honoured). */
function topGitignore(projectFolder: string): (file: string) => boolean {
  let text = '';
  try {
    text = fs.readFileSync(path.join(projectFolder, '.gitignore'), 'utf8');
  } catch {
    return () => false;
  }
  const patterns = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('!'))
    .flatMap((line) => {
      const anchored = line.startsWith('/');
      const body = line.replace(/^\//, '').replace(/\/$/, '');
      const base = anchored || body.includes('/') ? body : `**/${body}`;
      return [base, `${base}/**`];
    });
  return patterns.length === 0 ? () => false : picomatch(patterns, { dot: true });
}

/** Every folder that holds one of `files` (`a/b/c.ts` gives `a/` and `a/b/`). */
function foldersOf(files: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    let end = file.lastIndexOf('/');
    while (end > 0) {
      const folder = file.slice(0, end + 1);
      if (folders.has(folder)) break;
      folders.add(folder);
      end = file.lastIndexOf('/', end - 1);
    }
  }
  return [...folders];
}

/**
 * How well `candidate` matches `query` (lower is better), or undefined: the name starting with it first, then
 * the name containing it, then the path containing it, then its letters in order; shorter paths first.
 */
export function mentionRank(candidate: string, query: string): number | undefined {
  const text = candidate.toLowerCase();
  const wanted = query.toLowerCase();
  const trimmed = text.endsWith('/') ? text.slice(0, -1) : text;
  const name = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  const length = Math.min(candidate.length, 999) / 1000;
  if (wanted === '') return 3 + length;
  if (name.startsWith(wanted)) return length;
  if (name.includes(wanted)) return 1 + length;
  if (text.includes(wanted)) return 2 + length;
  let at = 0;
  for (const char of wanted) {
    at = text.indexOf(char, at);
    if (at < 0) return undefined;
    at += 1;
  }
  return 4 + length;
}

/** The project's files and folders matching `query`, best first, at most `limit`. */
export async function completeMentions(projectFolder: string, query: string, limit = 30): Promise<Mention[]> {
  const files = await projectFiles(projectFolder);
  const candidates: Mention[] = [
    ...foldersOf(files).map((folder): Mention => ({ path: folder, kind: 'folder' })),
    ...files.map((file): Mention => ({ path: file, kind: 'file' })),
  ];
  return candidates
    .flatMap((mention) => {
      const rank = mentionRank(mention.path, query);
      return rank === undefined ? [] : [{ mention, rank }];
    })
    .sort((a, b) => a.rank - b.rank || a.mention.path.localeCompare(b.mention.path))
    .slice(0, limit)
    .map(({ mention }) => mention);
}
