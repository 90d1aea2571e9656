// Issue #36: which processes still see a copy-on-write view's overlay (main/sandbox/overlayView.ts). A box started
// in a view (bwrap behind nsenter into the holder) gets a mount namespace of its own holding the overlay; taking the
// view down in the holder (a reset) or ending the holder leaves that mount alive while the box runs (a background
// command lives across turns). Emptying or removing the layers under it is undefined in overlayfs, so a reset or a
// reclaim asks here first. Read from /proc/<pid>/mountinfo, one process per mount namespace. Also from the mount table:
// the filesystems mounted inside a folder (`mountsInside`).
import fs from 'node:fs';

/** The overlay mounts of one upper layer still alive somewhere, and the processes that see them. */
export type OverlayUse = {
  /** Each mount's device (`major:minor`, mountinfo's third field): one per overlay instance. */
  devs: Set<string>;
  /** Processes whose mount namespace holds one of them. */
  pids: number[];
};

/** A path as mountinfo writes it in an option (space, tab, newline and backslash as octal escapes). */
function mangled(folder: string): string {
  return folder.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The overlay mounts whose upper layer was `upper` when mounted (overlayfs shows the path it was given, so a layer
 * set aside by rename still shows its old path: tell mounts apart by `devs`), in every mount namespace of a process
 * this user can read, but `ignorePid`'s own process (a holder about to be stopped). Linux only; elsewhere empty.
 */
export function overlayInUse(upper: string, ignorePid?: number): OverlayUse {
  const use: OverlayUse = { devs: new Set(), pids: [] };
  if (process.platform !== 'linux') return use;
  const option = `upperdir=${mangled(upper)}`;
  const seen = new Map<string, string[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === ignorePid || pid === process.pid) continue;
    let ns: string;
    try {
      ns = fs.readlinkSync(`/proc/${pid}/ns/mnt`);
    } catch {
      continue; // Gone, or another user's: it cannot hold this user's overlay.
    }
    let devs = seen.get(ns);
    if (devs === undefined) {
      devs = matchingMounts(pid, option);
      seen.set(ns, devs);
    }
    if (devs.length === 0) continue;
    use.pids.push(pid);
    for (const dev of devs) use.devs.add(dev);
  }
  return use;
}

/** The devices of the overlay mounts carrying `option` in `pid`'s mountinfo. */
function matchingMounts(pid: number, option: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
  } catch {
    return [];
  }
  const devs: string[] = [];
  for (const line of text.split('\n')) {
    const split = line.indexOf(' - ');
    if (split < 0) continue;
    const [fsType, , superOptions] = line.slice(split + 3).split(' ');
    if (fsType !== 'overlay' || superOptions === undefined) continue;
    if (!superOptions.split(',').includes(option)) continue;
    const dev = line.slice(0, split).split(' ')[2];
    if (dev !== undefined && !devs.includes(dev)) devs.push(dev);
  }
  return devs;
}

function readMountTable(): string | undefined {
  try {
    return fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * A mount point below `root` in this process's mount table (`/proc/self/mountinfo`: its fifth field, with space, tab,
 * newline and backslash written as octal escapes), folder-relative; undefined when none. The backing folder watcher's first
 * walk lists folders without an lstat of each, so a filesystem mounted inside is found here (core/persistent/
 * backingWatch.ts; an unreadable table: one said to be there).
 */
export function mountsInside(root: string, table = readMountTable()): string | undefined {
  if (table === undefined) return 'a folder (the mount table could not be read)';
  const prefix = root.endsWith('/') ? root : `${root}/`;
  for (const line of table.split('\n')) {
    const field = line.split(' ')[4];
    if (field === undefined) continue;
    const point = field.replace(/\\([0-7]{3})/g, (_all, octal: string) =>
      String.fromCharCode(parseInt(octal, 8)),
    );
    if (point.startsWith(prefix)) return point.slice(prefix.length);
  }
  return undefined;
}
