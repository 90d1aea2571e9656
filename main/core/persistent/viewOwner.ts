// Issue #36: one process at a time mounts a session's copy-on-write views. Two overlays on one upper layer (the
// app's terminal while `keel run` holds the session, or keel serve and the CLI) are undefined in overlayfs, so
// the first process to mount (or reset, or reclaim) a session's views takes a claim, `<dataDir>/checkouts/
// view-owner.json`: its pid, its start time (so a reused pid is never taken for the owner) and what it is. A
// second live process is refused with a sentence naming the owner; a dead owner's claim is taken over. The claim
// goes when the process stops the session's views (viewHolder.ts), or with the process.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** The claim's file in a session's `checkouts` folder. */
export const VIEW_OWNER_FILE = 'view-owner.json';

const ViewOwner = z.object({
  pid: z.number().int().positive(),
  /** /proc/<pid>/stat's start time (clock ticks since boot); '' where there is no /proc. */
  start: z.string(),
  /** What the process is, for the refusal's sentence: `keel run`, `the Keel app`, `keel serve`... */
  what: z.string(),
  at: z.string(),
});
export type ViewOwner = z.infer<typeof ViewOwner>;

/** Thrown when another live process mounts the session's views: what to do is in the message. */
export class ViewOwnedError extends Error {
  constructor(
    readonly owner: ViewOwner,
    readonly checkoutsDir: string,
  ) {
    super(
      `this session's files (a copy-on-write view) are in use by ${owner.what} (pid ${owner.pid}); ` +
        `finish or stop what it runs in this session (its turn, terminal or background commands), ` +
        `or quit it, and try again (a process done with them lets them go a minute after its last use)`,
    );
    this.name = 'ViewOwnedError';
  }
}

/** The `checkouts` folders whose claim this process holds. */
const held = new Set<string>();
let exitHook = false;

/** Start time of `pid` (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has ended: its mounts and namespaces are gone.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    if (process.platform === 'linux') return undefined;
    try {
      process.kill(pid, 0);
      return '';
    } catch {
      return undefined;
    }
  }
}

/** What this process is, as a person knows it. */
export function describeProcess(): string {
  if (process.versions['electron'] !== undefined) return 'the Keel app';
  const script = process.argv[1] ?? '';
  if (/(^|[/\\])(keel|cli[/\\]bin\.[cm]?[jt]s)$/.test(script)) {
    // The subcommand: the first plain word (an option's value, such as `--home <folder>`'s, is a path).
    const command = process.argv.slice(2).find((arg) => /^[a-z][a-z-]*$/.test(arg));
    return command === undefined ? 'keel' : `keel ${command}`;
  }
  return `another Keel process (${path.basename(script) || path.basename(process.execPath)})`;
}

/** The claim on the session's views, or undefined when there is none (or it does not parse: taken over). */
export function readViewOwner(checkoutsDir: string): ViewOwner | undefined {
  try {
    return ViewOwner.parse(JSON.parse(fs.readFileSync(path.join(checkoutsDir, VIEW_OWNER_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

/** True when `owner` is a process that still runs (the same pid and start time). */
export function isLiveOwner(owner: ViewOwner): boolean {
  const start = processStart(owner.pid);
  return start !== undefined && start === owner.start;
}

/** True when `owner` is this very process. */
function isSelf(owner: ViewOwner): boolean {
  return owner.pid === process.pid && owner.start === (processStart(process.pid) ?? '');
}

/** The live process other than this one that holds the claim, or undefined (none, a dead one, or this one). */
export function otherViewOwner(checkoutsDir: string): ViewOwner | undefined {
  const owner = readViewOwner(checkoutsDir);
  return owner !== undefined && !isSelf(owner) && isLiveOwner(owner) ? owner : undefined;
}

/** True when this process holds the claim on the session's views. */
export function holdsViews(checkoutsDir: string): boolean {
  return held.has(checkoutsDir);
}

/** How long a takeover lock may stand before it is taken for one a killed process left (a takeover takes µs). */
const TAKEOVER_STALE_MS = 5_000;

/**
 * Takes the claim on the session's views for this process (no-op when it holds it). Throws ViewOwnedError when
 * another live process holds it. Created whole and atomically (written aside, then linked: never a half file,
 * never two owners); a dead owner's claim is replaced under a takeover lock, so two processes taking over the same
 * dead claim never both win.
 */
export function claimViews(checkoutsDir: string): void {
  if (held.has(checkoutsDir)) {
    // Still ours on disk (nobody removes a live owner's claim); a removed file is written again below.
    const owner = readViewOwner(checkoutsDir);
    if (owner !== undefined && isSelf(owner)) return;
    held.delete(checkoutsDir);
  }
  fs.mkdirSync(checkoutsDir, { recursive: true });
  const file = path.join(checkoutsDir, VIEW_OWNER_FILE);
  const mine: ViewOwner = {
    pid: process.pid,
    start: processStart(process.pid) ?? '',
    what: describeProcess(),
    at: new Date().toISOString(),
  };
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(mine));
  try {
    // Long enough to outlast a takeover lock a killed process left (it is removed once TAKEOVER_STALE_MS old).
    const deadline = Date.now() + TAKEOVER_STALE_MS + 1_000;
    while (Date.now() < deadline) {
      try {
        fs.linkSync(temp, file);
        held.add(checkoutsDir);
        releaseOnExit();
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = readViewOwner(checkoutsDir);
      if (owner !== undefined && isSelf(owner)) {
        held.add(checkoutsDir);
        releaseOnExit();
        return;
      }
      if (owner !== undefined && isLiveOwner(owner)) throw new ViewOwnedError(owner, checkoutsDir);
      takeOver(checkoutsDir, owner);
    }
    throw new Error(`could not take the claim on the copy-on-write views in ${checkoutsDir}: try again`);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Removes a dead owner's claim (`seen`, or an unreadable file) under the takeover lock; the caller links again. */
function takeOver(checkoutsDir: string, seen: ViewOwner | undefined): void {
  const lock = path.join(checkoutsDir, `${VIEW_OWNER_FILE}.takeover`);
  try {
    fs.mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > TAKEOVER_STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    return;
  }
  try {
    // Only the claim that was seen dead goes: one a faster process wrote meanwhile is live and stays.
    const now = readViewOwner(checkoutsDir);
    const same =
      now === undefined
        ? seen === undefined
        : seen !== undefined && now.pid === seen.pid && now.start === seen.start && now.at === seen.at;
    if (same) fs.rmSync(path.join(checkoutsDir, VIEW_OWNER_FILE), { force: true });
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Gives the claim up (the session's views are stopped in this process); never removes another's claim. */
export function releaseViews(checkoutsDir: string): void {
  if (!held.delete(checkoutsDir)) return;
  const owner = readViewOwner(checkoutsDir);
  if (owner !== undefined && isSelf(owner))
    fs.rmSync(path.join(checkoutsDir, VIEW_OWNER_FILE), { force: true });
}

/** A claim left on disk by an exit would be taken over anyway (its pid is dead); removed for tidiness. */
function releaseOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const checkoutsDir of [...held]) {
      try {
        releaseViews(checkoutsDir);
      } catch {
        // The next process takes a dead owner's claim over.
      }
    }
  });
}

/** The `checkouts` folders whose claim this process holds (stopAllViews gives them all up). */
export function heldViewClaims(): string[] {
  return [...held];
}
