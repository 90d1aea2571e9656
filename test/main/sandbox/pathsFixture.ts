// A workspace on a real temp dir with real neighbours: "outside" (with a secret), a prefix sibling
// "ws-evil", and a snapshot of everything that is not the workspace, to prove nothing outside changed.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Fixture {
  base: string;
  ws: string;
  outside: string;
  evil: string;
  /** Every entry outside the workspace: type, mode, size, mtime and content hash. */
  snapshotOutside(): Record<string, string>;
  cleanup(): void;
}

export const OUTSIDE_SECRET = 'OUTSIDE-SECRET-DO-NOT-TOUCH\n';

function describeEntry(full: string, stat: fs.Stats): string {
  if (stat.isSymbolicLink()) return `link:${fs.readlinkSync(full)}`;
  if (stat.isDirectory()) return `dir:${stat.mode}:${stat.mtimeMs}`;
  if (stat.isFile()) {
    const hash = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    return `file:${stat.mode}:${stat.size}:${stat.mtimeMs}:${stat.nlink}:${hash}`;
  }
  return `special:${stat.mode}:${stat.rdev}`;
}

/** Creates base/{ws, outside, ws-evil} under `parent`; the workspace is named `wsName` (default "ws"). */
export function createFixture(wsName = 'ws', parent = os.tmpdir()): Fixture {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'keel-paths-')));
  const ws = path.join(base, wsName);
  const outside = path.join(base, 'outside');
  const evil = path.join(base, `${wsName}-evil`);
  fs.mkdirSync(ws);
  fs.mkdirSync(path.join(outside, 'dir'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'secret.txt'), OUTSIDE_SECRET);
  fs.writeFileSync(path.join(outside, 'dir', 'file.txt'), OUTSIDE_SECRET);
  fs.mkdirSync(evil);
  fs.writeFileSync(path.join(evil, 'file.txt'), OUTSIDE_SECRET);
  const snapshotOutside = (): Record<string, string> => {
    const entries: Record<string, string> = { '.': describeEntry(base, fs.lstatSync(base)) };
    const walk = (dir: string): void => {
      for (const name of fs.readdirSync(dir)) {
        const full = path.join(dir, name);
        if (full === ws) continue;
        const stat = fs.lstatSync(full);
        entries[path.relative(base, full)] = describeEntry(full, stat);
        if (stat.isDirectory()) walk(full);
      }
    };
    walk(base);
    return entries;
  };
  return {
    base,
    ws,
    outside,
    evil,
    snapshotOutside,
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/** Files outside the workspace (anywhere below `base`) whose text contains `needle`. */
export function outsideFilesContaining(f: Fixture, needle: string): string[] {
  const hits: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (full === f.ws) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && fs.readFileSync(full, 'utf8').includes(needle)) hits.push(full);
    }
  };
  walk(f.base);
  return hits;
}

/** Entries that `after` has and `before` lacks (two `snapshotOutside()` results), relative to `base`. */
export function addedOutside(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(after).filter((key) => !(key in before));
}

/** Entries of `before` that changed or vanished in `after`, folders aside (their mtimes move with any entry). */
export function changedOutside(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.entries(before)
    .filter(([key, value]) => !value.startsWith('dir:') && after[key] !== value)
    .map(([key]) => key);
}
