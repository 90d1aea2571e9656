// The backing repository's git metadata that makes git run code or look elsewhere (hooks, config, HEAD,
// commondir, info/attributes, alternates), fingerprinted when a turn starts (each reset) and compared before
// a commit: a change Keel did not make is named, and nothing is committed until someone approved it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CheckoutState } from './state.js';

/** Files (and folders, read whole) of a git folder that decide what a later git runs or reads. */
const WATCHED = [
  'config',
  'config.worktree',
  'HEAD',
  'commondir',
  'gitdir',
  'hooks',
  'info',
  'objects/info/alternates',
];

/**
 * Files under the watched folders that git's own housekeeping rewrites and that make no git run or read
 * anything new: `info/refs` is update-server-info's list for dumb-HTTP serving, written by every repack (an
 * auto gc left running by the user's last commit would otherwise stop the turn's commit for approval).
 */
const HOUSEKEEPING = new Set(['info/refs']);

/** At most this many files are read per folder (hooks/, info/), each at most this many bytes. */
const MAX_FILES = 200;
const MAX_BYTES = 1 << 20;

/**
 * The fingerprint of a checkout's git metadata: display path (relative to the backing folder, or
 * `<checkout>/.git`) → a digest of the entry (content and exec bit; a link's text; "folder" for a folder).
 * HEAD counts only as the branch it names (a commit the user makes on it is not a change of metadata).
 */
export function gitMetadataFingerprint(state: CheckoutState): Record<string, string> {
  const fingerprint: Record<string, string> = {};
  const folders: string[] = [];
  if (state.kind !== 'shadow') {
    folders.push(state.gitDir);
    folders.push(commonGitDir(state.gitDir));
  } else if (isDirectory(path.join(state.backing, '.git'))) {
    folders.push(path.join(state.backing, '.git'));
  }
  for (const folder of new Set(folders)) {
    for (const name of WATCHED) addEntry(fingerprint, state.backing, folder, name);
  }
  if (state.kind !== 'shadow') {
    // A view's `.git` file is in its upper layer (the host's mount point holds only git's first copy).
    const dotGit = path.join(state.kind === 'view' && state.upper ? state.upper : state.checkout, '.git');
    const digest = entryDigest(dotGit, false);
    if (digest !== undefined) fingerprint['<checkout>/.git'] = digest;
  }
  return fingerprint;
}

/** One line per difference: "<path> added", "<path> removed", "<path> changed", sorted. */
export function gitMetadataChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const lines: string[] = [];
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[name];
    const now = after[name];
    if (was === now) continue;
    lines.push(`${name} ${was === undefined ? 'added' : now === undefined ? 'removed' : 'changed'}`);
  }
  return lines.sort();
}

/**
 * What changed in the git metadata since `state.gitMetadata` was taken (the turn's start), one line each;
 * empty when nothing changed or no fingerprint was taken (a state from before this).
 */
export function changedGitMetadata(state: CheckoutState): string[] {
  if (state.gitMetadata === undefined) return [];
  return gitMetadataChanges(state.gitMetadata, gitMetadataFingerprint(state));
}

/** The changes of changedGitMetadata as one text: the first eight, and how many more. */
export function describeGitMetadataChanges(changes: readonly string[]): string {
  return changes.slice(0, 8).join(', ') + (changes.length > 8 ? `, and ${changes.length - 8} more` : '');
}

/** Adds `name` (relative to the git folder `folder`) and, for a folder, what it holds. */
function addEntry(into: Record<string, string>, backing: string, folder: string, name: string): void {
  if (HOUSEKEEPING.has(name)) return;
  const entry = path.join(folder, name);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(entry);
  } catch {
    return;
  }
  const shown = path.relative(backing, entry).split(path.sep).join('/');
  if (!stat.isDirectory()) {
    const digest = entryDigest(entry, name === 'HEAD');
    if (digest !== undefined) into[shown] = digest;
    return;
  }
  into[shown] = 'folder';
  let names: string[];
  try {
    names = fs.readdirSync(entry).sort().slice(0, MAX_FILES);
  } catch {
    return;
  }
  for (const child of names) addEntry(into, backing, folder, `${name}/${child}`);
}

/** A digest of one file or link; HEAD as the ref it names ("detached" for a commit id). */
function entryDigest(file: string, isHead: boolean): string | undefined {
  try {
    const stat = fs.lstatSync(file);
    if (stat.isSymbolicLink()) return `link:${fs.readlinkSync(file)}`;
    if (!stat.isFile()) return 'special';
    if (stat.size > MAX_BYTES) return `large:${stat.size}:${stat.mtimeMs}`;
    const bytes = fs.readFileSync(file);
    if (isHead) {
      const text = bytes.toString('utf8').trim();
      return text.startsWith('ref:') ? text : 'detached';
    }
    const exec = (stat.mode & 0o111) !== 0 ? 'x' : '-';
    return `${exec}${createHash('sha256').update(bytes).digest('hex')}`;
  } catch {
    return undefined;
  }
}

/** The common git folder of a worktree's admin folder (`<repo>/.git` for `<repo>/.git/worktrees/<n>`). */
export function commonGitDir(adminDir: string): string {
  try {
    const common = fs.readFileSync(path.join(adminDir, 'commondir'), 'utf8').trim();
    return path.resolve(adminDir, common);
  } catch {
    return adminDir;
  }
}

function isDirectory(target: string): boolean {
  try {
    return fs.lstatSync(target).isDirectory();
  } catch {
    return false;
  }
}
