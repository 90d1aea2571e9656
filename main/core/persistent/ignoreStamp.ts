// Issue #36: the files git's ignore rules and stat judgement read besides the folder's own `.gitignore`s, as one
// stamp: a watched snapshot (backingWatch.ts) is a full pass whenever it changed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The identity of the files git's ignore rules and stat judgement read besides the folder's own `.gitignore`s (which
 * the watcher sees): the repository's config and info/exclude (its common folder's too, for a linked worktree), the
 * user's global config, the checkout's excludes file. Any change makes the next snapshot a full pass.
 */
export function ignoreStamp(files: readonly string[]): string {
  return files
    .map((file) => {
      try {
        const stat = fs.statSync(file, { bigint: true });
        return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
      } catch {
        return '-';
      }
    })
    .join(',');
}

/** The git folder's files of `ignoreStamp` for a repository whose git folder is `gitDir`. */
export function ignoreFiles(gitDir: string, excludesFile: string): string[] {
  const files = [excludesFile, ...gitFiles(gitDir)];
  try {
    const common = fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    files.push(...gitFiles(path.resolve(gitDir, common)));
  } catch {
    // Not a linked worktree's folder: no common folder.
  }
  const home = os.homedir();
  const xdg = process.env.XDG_CONFIG_HOME || path.join(home, '.config');
  files.push(path.join(home, '.gitconfig'), path.join(xdg, 'git', 'config'));
  return files;
}

function gitFiles(gitDir: string): string[] {
  return ['config', 'config.worktree', 'commondir', path.join('info', 'exclude')].map((name) =>
    path.join(gitDir, name),
  );
}
