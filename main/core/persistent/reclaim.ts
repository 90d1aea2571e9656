// Reclaiming a checkout's disk (issue #36): the checkout's files, its private state and its worktree's admin
// folder go; the next turn's `Checkout.open` makes it again from the backing folder. Whether a session's
// checkout may go (nothing uncommitted, nothing owed) is decided by the caller (core/harness/checkoutStorage.ts).
import fs from 'node:fs';
import path from 'node:path';
import { commonGitDir } from './gitMetadata.js';
import { readState, type CheckoutLocation } from './state.js';
import { isInside, lstatOrUndefined } from './streamWrite.js';
import { clearLayers } from '../../sandbox/overlayView.js';
import { viewLayers } from './viewHolder.js';

/** `<dataDir>/reclaiming`: checkouts moved out of the workspace, being removed (a crash leaves them here). */
export function reclaimingDir(location: CheckoutLocation): string {
  return path.join(path.dirname(path.dirname(location.stateDir)), 'reclaiming');
}

/** The file in the state folder caching what the checkout occupies (measured once, again by `keel gc`). */
const USAGE_FILE = 'usage.json';

/**
 * Bytes a folder occupies on disk (allocated blocks), never through a link: a link counts as itself.
 * Missing → 0. Files vanishing while it walks are skipped.
 */
export function diskUsage(target: string): number {
  const stat = lstatOrUndefined(target);
  if (!stat) return 0;
  let total = stat.blocks * 512;
  if (!stat.isDirectory()) return total;
  let names: string[];
  try {
    names = fs.readdirSync(target);
  } catch {
    return total;
  }
  for (const name of names) total += diskUsage(path.join(target, name));
  return total;
}

/** The folders that are this checkout's own storage: its files, its state, its worktree's admin folder. */
function ownFolders(location: CheckoutLocation): string[] {
  const folders = [location.checkout, location.stateDir];
  const admin = adminFolderOf(location);
  if (admin) folders.push(admin);
  return folders;
}

/** True when the checkout's disk use is cached (it was measured since it was made). */
export function isMeasured(location: CheckoutLocation): boolean {
  return lstatOrUndefined(path.join(location.stateDir, USAGE_FILE)) !== undefined;
}

/**
 * The checkout's disk use in bytes: measured (a walk of its files, state and admin folder) when `measure`
 * or nothing is cached, else the cached figure. A checkout that is not there costs 0 (its state alone is
 * measured when it is left over).
 */
export function checkoutUsage(location: CheckoutLocation, measure: boolean): number {
  const file = path.join(location.stateDir, USAGE_FILE);
  if (!measure) {
    try {
      const cached = JSON.parse(fs.readFileSync(file, 'utf8')) as { bytes?: unknown };
      if (typeof cached.bytes === 'number') return cached.bytes;
    } catch {
      // Not measured yet: measure now.
    }
  }
  const bytes = ownFolders(location).reduce((sum, folder) => sum + diskUsage(folder), 0);
  if (lstatOrUndefined(location.stateDir)?.isDirectory()) {
    try {
      fs.writeFileSync(file, JSON.stringify({ bytes, measuredAt: new Date().toISOString() }));
    } catch {
      // A cache only.
    }
  }
  return bytes;
}

/**
 * The worktree admin folder (`<repo>/.git/worktrees/<n>`) this checkout's state names, only when it is
 * one (inside the repository's `worktrees/`) and names this checkout back (its `gitdir` file): never a
 * folder a changed state.json or a planted `.git` points elsewhere.
 */
function adminFolderOf(location: CheckoutLocation): string | undefined {
  const state = readState(location.stateDir);
  // A view's git is a worktree admin folder too (viewGit.ts), named back the same way.
  if (!state || state.kind === 'shadow' || state.gitDir === '') return undefined;
  const admin = state.gitDir;
  if (!isInside(path.join(commonGitDir(admin), 'worktrees'), admin)) return undefined;
  try {
    const back = fs.readFileSync(path.join(admin, 'gitdir'), 'utf8').trim();
    return path.resolve(back) === path.join(location.checkout, '.git') ? admin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes the checkout's files, its state folder and its worktree's admin folder. Crash-safe in this order:
 * the checkout is first renamed out of the workspace (one rename: from then on it is "not intact", and the
 * next open makes it again, removing the state left over), then the admin folder, the state and the moved
 * files are removed. The caller holds the session's writer lease, so no turn uses the checkout meanwhile.
 */
export function reclaimCheckout(location: CheckoutLocation): void {
  const admin = adminFolderOf(location);
  const trash = reclaimingDir(location);
  fs.mkdirSync(trash, { recursive: true });
  if (lstatOrUndefined(location.checkout)) {
    fs.renameSync(location.checkout, path.join(trash, `${path.basename(location.checkout)}-${Date.now()}`));
  }
  if (admin) fs.rmSync(admin, { recursive: true, force: true });
  // A view's layers hold a folder overlayfs leaves unreadable (work/work): emptied the way that can open it.
  const state = readState(location.stateDir);
  if (state?.kind === 'view') clearLayers(viewLayers(location, state));
  fs.rmSync(location.stateDir, { recursive: true, force: true });
  // rmSync never follows a link: a link the model planted in the checkout is removed, not what it names.
  fs.rmSync(trash, { recursive: true, force: true });
}

/** True when a checkout left over by a reclaim a crash cut off is waiting in `<dataDir>/reclaiming`. */
export function hasReclaimLeftovers(location: CheckoutLocation): boolean {
  return lstatOrUndefined(reclaimingDir(location)) !== undefined;
}

/** Removes what a reclaim a crash cut off left in `<dataDir>/reclaiming`; returns the bytes freed. */
export function sweepReclaimLeftovers(location: CheckoutLocation): number {
  const trash = reclaimingDir(location);
  const bytes = diskUsage(trash);
  fs.rmSync(trash, { recursive: true, force: true });
  return bytes;
}
