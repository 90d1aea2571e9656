// Protected paths: places inside the workspace where a write runs code later, outside the sandbox
// (git hooks, editor tasks, direnv), or holds Keel's own state. Writing them needs an explicit approval,
// even in auto-edit modes. The check is on the real path, so a link into .git/hooks is caught too.
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { refuseFile } from './pathErrors.js';
import type { Target } from './resolvePath.js';
import { realpathNative } from './viewPath.js';

/** A folder or file name protected wherever it appears in the workspace, with the reason shown to the user. */
export interface ProtectedName {
  name: string;
  reason: string;
}

/** The names protected by default, at any depth (so submodules' .git folders are covered too). */
export const DEFAULT_PROTECTED_NAMES: readonly ProtectedName[] = [
  { name: '.git', reason: 'it is inside .git (hooks and config run code outside the sandbox)' },
  { name: '.keel', reason: "it is inside .keel (Keel's own project settings)" },
  { name: '.vscode', reason: 'it is inside .vscode (editor tasks and launch configs run code)' },
  { name: '.idea', reason: 'it is inside .idea (IDE run configurations run code)' },
  { name: '.husky', reason: 'it is inside .husky (git hooks run code on commit)' },
  { name: '.envrc', reason: 'it is .envrc (direnv runs it when a shell enters the folder)' },
];

/**
 * Why one name (a single path segment) is protected wherever it appears, or null: what `protectionReason` finds for a
 * path whose other segments are not protected (a walk that stops at protected folders asks only this).
 */
export function protectedNameReason(name: string): string | null {
  const lower = name.normalize('NFC').toLowerCase();
  return DEFAULT_PROTECTED_NAMES.find((entry) => entry.name === lower)?.reason ?? null;
}

const matcherCache = new Map<string, (relativePath: string) => string | null>();

function compileGlobs(globs: readonly string[]): (relativePath: string) => string | null {
  const key = globs.join('\0');
  const cached = matcherCache.get(key);
  if (cached) return cached;
  // A listed folder ("secrets" or "secrets/") protects everything under it too.
  const entries = globs.map((glob) => {
    const normalized = glob.normalize('NFC').replace(/\\/g, '/').replace(/^\.\//, '');
    const base = normalized.replace(/\/+$/, '');
    // Over-matching is the safe direction here: case-insensitive, dotfiles included.
    const isMatch = picomatch([base, `${base}/**`], { dot: true, nocase: true });
    return { glob, isMatch };
  });
  const matcher = (relativePath: string): string | null => {
    const hit = entries.find((entry) => entry.isMatch(relativePath));
    return hit ? `it matches the protected pattern ${JSON.stringify(hit.glob)}` : null;
  };
  if (matcherCache.size > 64) matcherCache.clear();
  matcherCache.set(key, matcher);
  return matcher;
}

/** The path with its deepest existing ancestor replaced by the filesystem's real, canonical spelling. */
function canonicalPath(candidate: string): string {
  const tail: string[] = [];
  let probe = path.resolve(candidate);
  for (;;) {
    try {
      return path.join(realpathNative(probe), ...tail);
    } catch {
      const parent = path.dirname(probe);
      if (parent === probe) return path.resolve(candidate);
      tail.unshift(path.basename(probe));
      probe = parent;
    }
  }
}

/**
 * Why the real path `realPath` inside `rootReal` is protected, or null. Pure: no file system access, so
 * the caller must pass paths that are already real (writeFileConfined passes the pinned path).
 */
export function protectionReason(
  rootReal: string,
  realPath: string,
  extraGlobs: readonly string[] = [],
): string | null {
  const relative = path.relative(rootReal, realPath);
  if (relative === '') return null;
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    return 'it is outside the workspace';
  }
  const segments = relative.split(path.sep).map((segment) => segment.normalize('NFC').toLowerCase());
  for (const entry of DEFAULT_PROTECTED_NAMES) {
    if (segments.includes(entry.name)) return entry.reason;
  }
  if (extraGlobs.length === 0) return null;
  return compileGlobs(extraGlobs)(relative.split(path.sep).join('/').normalize('NFC'));
}

/**
 * Returns why `realPath` is protected (a sentence fragment for the approval prompt), or null when it is
 * not. Symlinks in the existing part of the path are resolved again here, so a link into .git is caught.
 */
export function isProtected(
  root: string,
  realPath: string,
  extraGlobs: readonly string[] = [],
): string | null {
  return protectionReason(canonicalPath(root), canonicalPath(realPath), extraGlobs);
}

/**
 * The git metadata of `folder` that a boxed command must not change, so no git outside the box runs what a
 * command planted (hooks, `core.fsmonitor`, a `commondir` or `gitdir` pointing elsewhere): its `.git` as a
 * whole (a folder bound read-only cannot be renamed away, and nothing can be created inside it); for a
 * worktree's `.git` file, the file, the admin folder it names and that folder's common git dir. Only paths
 * that exist (real paths for the ones a `.git` file names).
 */
export function gitMetadataPaths(folder: string): string[] {
  const dotGit = path.join(folder, '.git');
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dotGit);
  } catch {
    return [];
  }
  if (!stat.isFile()) return [dotGit];
  const paths = [dotGit];
  const named = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit))?.[1];
  const admin = named === undefined ? undefined : realOrUndefined(path.resolve(folder, named));
  if (admin === undefined) return paths;
  paths.push(admin);
  const common = readSmall(path.join(admin, 'commondir')).trim();
  const commonDir = common === '' ? undefined : realOrUndefined(path.resolve(admin, common));
  if (commonDir !== undefined && !paths.includes(commonDir)) paths.push(commonDir);
  return paths;
}

/** The text of a small file (a `.git` file, `commondir`), '' when it cannot be read or is not small. */
function readSmall(file: string): string {
  try {
    const stat = fs.lstatSync(file);
    return stat.isFile() && stat.size <= 4096 ? fs.readFileSync(file, 'utf8') : '';
  } catch {
    return '';
  }
}

function realOrUndefined(target: string): string | undefined {
  try {
    return realpathNative(target);
  } catch {
    return undefined;
  }
}

/** What a confined change was approved for: the argument's name, protected paths, the real path shown. */
export interface ChangeApproval {
  argName: string;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  /** User-listed protected globs, relative to the workspace root. */
  protectedGlobs?: readonly string[];
  /** The real path that was checked (and shown in a diff). */
  expectedRealPath?: string;
}

/**
 * Throws ConfinedFileError when the approval does not cover a change to `target`: `changed` when the argument
 * now resolves somewhere other than `expectedRealPath`, `protected` on a protected path without
 * `allowProtected` (its reason, then that `verb`, "writing" or "removing", it needs an approval).
 */
export function refuseUnapprovedChange(
  target: Target,
  approval: ChangeApproval,
  verb: 'writing' | 'removing',
): void {
  if (approval.expectedRealPath !== undefined && approval.expectedRealPath !== target.realPath) {
    throw refuseFile(
      approval.argName,
      target.arg,
      'changed',
      'the path now resolves somewhere other than the approved path',
    );
  }
  if (!approval.allowProtected) {
    const reason = protectionReason(target.root.real, target.realPath, approval.protectedGlobs ?? []);
    if (reason !== null)
      throw refuseFile(approval.argName, target.arg, 'protected', `${reason}; ${verb} it needs an approval`);
  }
}
