// Issue #36: the disk Persistent Dir checkouts take in a Keel home, and reclaiming it (`keel gc`, the
// bound in settings.json's `checkouts`, applied after every turn). A checkout is only a copy of its backing
// folder plus what the session has not committed: once nothing is uncommitted or owed it can go, and the
// session's next turn makes it again (`Checkout.open`). A session's log, artifacts and history are never touched.
import fs from 'node:fs';
import path from 'node:path';
import { pendingApprovals } from '../approvals/state.js';
import { openSessionIndex } from '../log/indexRebuild.js';
import type { SessionLog } from '../log/sessionLog.js';
import { sessionDir, sessionsDir } from '../paths.js';
import { Checkout } from '../persistent/checkout.js';
import { commitIntentFile } from '../persistent/commitIntent.js';
import { approvedHeld, heldEvents } from '../persistent/commitRecord.js';
import { checkoutLocation, readPersistentConfig } from '../persistent/config.js';
import {
  checkoutUsage,
  hasReclaimLeftovers,
  isMeasured,
  reclaimCheckout,
  sweepReclaimLeftovers,
} from '../persistent/reclaim.js';
import { readState, type CheckoutLocation } from '../persistent/state.js';
import { lstatOrUndefined } from '../persistent/streamWrite.js';
import { sweepAsideLayers, viewLayers, withViewsReleased } from '../persistent/viewHolder.js';
import { otherViewOwner, ViewOwnedError } from '../persistent/viewOwner.js';
import { readSettings } from '../../store/settings.js';
import { HarnessSessionBusyError, withWritableSession } from './lock.js';

/** One checkout of one session, as `keel gc` and Settings list it. */
export type CheckoutStorageEntry = {
  sessionId: string;
  /** The Persistent Dir's name (`project` for a session's project). */
  dir: string;
  /** Bytes on disk: the checkout's files, its state and its worktree's admin folder. */
  bytes: number;
  /** The session's last activity (ISO-8601). */
  lastActive: string;
  /** What gc did or would do. */
  action: 'reclaimed' | 'would reclaim' | 'kept';
  /** Why it was kept. */
  reason?: string;
};

/** What a listing or a collection found. */
export type CheckoutStorageReport = {
  /** Bytes all checkouts took before the collection. */
  totalBytes: number;
  /** Bytes the collection freed (or would free with `dryRun`). */
  reclaimedBytes: number;
  /** The bound from settings.json (`checkouts.storageLimitMB`), in bytes. */
  limitBytes: number;
  entries: CheckoutStorageEntry[];
};

/** Options of `collectCheckouts`. */
export type CollectOptions = {
  /** List what would be reclaimed; remove nothing. */
  dryRun?: boolean;
  /** Only sessions idle at least this long (default: settings' `checkouts.idleMinutes`). */
  idleMs?: number;
  /** Stop once the total is at most this many bytes (the bound); default: reclaim every idle checkout. */
  untilBytes?: number;
  /** Never this session (the one whose turn just ran). */
  except?: string;
  /** Measure every checkout again instead of using the figure cached when it was last measured. */
  measure?: boolean;
  /** The clock, for tests. */
  now?: number;
};

type Found = { sessionId: string; dataDir: string; dir: string; bytes: number; lastActive: number };

/**
 * Every checkout of every session in `home`, oldest activity first, with its size (cached, or measured once
 * when it has none or `measure`). Sessions without Persistent Dirs (`--commit direct`) have none.
 */
function findCheckouts(home: string, measure: boolean): Found[] {
  let ids: string[];
  try {
    ids = fs.readdirSync(sessionsDir(home));
  } catch {
    return [];
  }
  const index = openSessionIndex(home);
  const found: Found[] = [];
  try {
    for (const sessionId of ids) {
      const dataDir = sessionDir(home, sessionId);
      let dirs: string[];
      try {
        dirs = readPersistentConfig(dataDir)?.dirs.map((dir) => dir.name) ?? [];
      } catch {
        continue; // An unreadable persistent.json: nothing is reclaimed of a session Keel cannot read.
      }
      const updated = index.get(sessionId)?.updatedAt;
      const lastActive = updated ? Date.parse(updated) : (lstatOrUndefined(dataDir)?.mtimeMs ?? 0);
      for (const dir of dirs) {
        const location = checkoutLocation(dataDir, dir);
        if (!lstatOrUndefined(location.stateDir) && !lstatOrUndefined(location.checkout)) continue;
        found.push({ sessionId, dataDir, dir, bytes: checkoutUsage(location, measure), lastActive });
      }
    }
  } finally {
    index.close();
  }
  return found.sort((a, b) => a.lastActive - b.lastActive);
}

/** The bound and the idle time of settings.json. */
function boundOf(home: string): { limitBytes: number; idleMs: number } {
  const { checkouts } = readSettings(home);
  return { limitBytes: checkouts.storageLimitMB * 1024 * 1024, idleMs: checkouts.idleMinutes * 60_000 };
}

/** The checkouts of `home` and their sizes, nothing reclaimed (Settings, `keel gc --dry-run`'s list). */
export function checkoutStorage(home: string): CheckoutStorageReport {
  const found = findCheckouts(home, false);
  const entries = found.map((checkout): CheckoutStorageEntry => ({
    sessionId: checkout.sessionId,
    dir: checkout.dir,
    bytes: checkout.bytes,
    lastActive: new Date(checkout.lastActive).toISOString(),
    action: 'kept',
  }));
  return {
    totalBytes: sum(found),
    reclaimedBytes: 0,
    limitBytes: boundOf(home).limitBytes,
    entries,
  };
}

/**
 * Reclaims the checkouts of idle sessions, oldest first (all of them, or until the total is within
 * `untilBytes`). Each session is taken with its writer lease (a session in use elsewhere is kept) and its
 * checkout is kept when anything in it is not yet in the backing folder or the log: uncommitted changes,
 * an approval waiting, held files granted but not written, a commit a crash cut off, an auto commit owed.
 */
export async function collectCheckouts(
  home: string,
  options: CollectOptions = {},
): Promise<CheckoutStorageReport> {
  const bound = boundOf(home);
  const idleMs = options.idleMs ?? bound.idleMs;
  const now = options.now ?? Date.now();
  const found = findCheckouts(home, options.measure ?? false);
  const totalBytes = sum(found);
  let remaining = totalBytes;
  let reclaimedBytes = 0;
  const entries: CheckoutStorageEntry[] = [];
  for (const checkout of found) {
    const entry: CheckoutStorageEntry = {
      sessionId: checkout.sessionId,
      dir: checkout.dir,
      bytes: checkout.bytes,
      lastActive: new Date(checkout.lastActive).toISOString(),
      action: 'kept',
    };
    entries.push(entry);
    if (options.untilBytes !== undefined && remaining <= options.untilBytes) {
      entry.reason = 'within the bound';
      continue;
    }
    if (checkout.sessionId === options.except) {
      entry.reason = 'the session running now';
      continue;
    }
    if (now - checkout.lastActive < idleMs) {
      entry.reason = `active in the last ${Math.round(idleMs / 60_000)} minutes`;
      continue;
    }
    try {
      await withWritableSession(home, checkout.sessionId, async (log) => {
        const location = checkoutLocation(log.dir, checkout.dir);
        if (!options.dryRun) sweepAsideLayers(location);
        const reason = viewOwnedReason(location) ?? (await keepReason(log, checkout.dir));
        if (reason !== undefined) {
          entry.reason = reason;
          return;
        }
        const busy = await reclaimUnlessBusy(location, options.dryRun === true);
        if (busy !== undefined) {
          entry.reason = busy;
          return;
        }
        entry.action = options.dryRun ? 'would reclaim' : 'reclaimed';
        remaining -= checkout.bytes;
        reclaimedBytes += checkout.bytes;
      });
    } catch (error) {
      if (error instanceof ViewOwnedError)
        entry.reason = `its files are in use by ${error.owner.what} (pid ${error.owner.pid})`;
      else if (error instanceof HarnessSessionBusyError) entry.reason = 'in use by another process';
      else throw error;
    }
  }
  return { totalBytes, reclaimedBytes, limitBytes: bound.limitBytes, entries };
}

/**
 * Keeps checkout storage within settings.json's bound after a turn of `sessionId`: when the total is over
 * it, other sessions' idle checkouts are reclaimed, oldest first. Storage grows when a checkout is made, so
 * only a turn whose session has a checkout not measured yet looks (it is measured once, here, and cached):
 * every other turn costs a stat per checkout of its own session, not a pass over the home.
 */
export async function enforceCheckoutBound(
  home: string,
  sessionId: string,
): Promise<CheckoutStorageReport | undefined> {
  const dataDir = sessionDir(home, sessionId);
  const dirs = readPersistentConfig(dataDir)?.dirs ?? [];
  if (!dirs.some((dir) => !isMeasured(checkoutLocation(dataDir, dir.name)))) return undefined;
  const { limitBytes } = boundOf(home);
  return collectCheckouts(home, { untilBytes: limitBytes, except: sessionId });
}

/**
 * Issue #36: a copy-on-write view another live process mounts (viewOwner.ts's claim: the app's terminal, a `keel
 * run` of the session) is kept, said with who holds it; undefined for a copy or a view no other process holds.
 */
function viewOwnedReason(location: CheckoutLocation): string | undefined {
  if (readState(location.stateDir)?.kind !== 'view') return undefined;
  const owner = otherViewOwner(path.dirname(location.stateDir));
  return owner === undefined ? undefined : `its files are in use by ${owner.what} (pid ${owner.pid})`;
}

/**
 * Reclaims the checkout (unless `dryRun`): a view only with no process mounting it (withViewsReleased: this
 * process's holder stopped first, a box still running on one of its mounts keeps it). The reason it was kept, or
 * undefined once reclaimed.
 */
async function reclaimUnlessBusy(location: CheckoutLocation, dryRun: boolean): Promise<string | undefined> {
  const reclaim = (): void => {
    if (dryRun) return;
    reclaimCheckout(location);
    if (hasReclaimLeftovers(location)) sweepReclaimLeftovers(location);
  };
  const state = readState(location.stateDir);
  if (state?.kind !== 'view' || dryRun) {
    reclaim();
    return undefined;
  }
  const done = await withViewsReleased(
    path.dirname(location.stateDir),
    [viewLayers(location, state).upper],
    reclaim,
  );
  return 'busy' in done ? done.busy : undefined;
}

/** Why the checkout of `dir` must stay, or undefined when it can be made again from its backing folder. */
async function keepReason(log: SessionLog, dir: string): Promise<string | undefined> {
  const config = readPersistentConfig(log.dir);
  const spec = config?.dirs.find((candidate) => candidate.name === dir);
  if (!config || !spec) return 'no longer one of the session’s Persistent Dirs';
  const location = checkoutLocation(log.dir, dir);
  if (fs.existsSync(commitIntentFile(log.dir, dir))) return 'a commit a crash interrupted is to be finished';
  if (fs.existsSync(path.join(location.stateDir, 'turn-pending'))) return 'its turn’s auto commit is owed';
  const approvals = log.readKinds(['approval_request', 'approval_granted', 'approval_denied'], {
    validate: false,
  });
  const created = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (pendingApprovals([...created, ...approvals]).length > 0) return 'an approval is waiting';
  const events = heldEvents(log);
  if (approvedHeld(events, dir, false).length + approvedHeld(events, dir, 'nested').length > 0)
    return 'granted held-back files are still to be written';
  const checkout = Checkout.existing(spec, location);
  // Not intact (or half made): nothing of it can be committed; the next open makes it again anyway.
  if (!checkout) return undefined;
  const uncommitted = await checkout.uncommitted();
  if (uncommitted.length > 0) {
    const named = uncommitted
      .slice(0, 3)
      .map((file) => file.path)
      .join(', ');
    return `${uncommitted.length} uncommitted change${uncommitted.length === 1 ? '' : 's'} (${named}${uncommitted.length > 3 ? ', …' : ''}): commit or discard them first`;
  }
  return undefined;
}

function sum(found: readonly Found[]): number {
  return found.reduce((total, checkout) => total + checkout.bytes, 0);
}
