// Issue #36: a view's private snapshot index kept split in two (git's split index): the shared part (every entry, ~80
// bytes a file: 7 MB at 80,000 files) written once, and a small part holding what changed since, which is all a
// watched snapshot's `add` then writes (at 80,000 files ~60 -> ~35 ms), and all the reset copies in as the view's own
// index. git writes a shared part into the git folder it runs with, so the split is made with the view's own git
// folder (`.git/worktrees/<n>/`, Keel's), where the view's git finds it, and a copy is kept beside the private index,
// where git finds it for the snapshot's gits (they run with the repository's `.git`, which Keel never writes this into:
// `splitIndex.maxPercentChange=100` keeps git from ever writing a new shared part there). See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { runGit } from './git.js';
import { backingIndex, copyIndexFile, KEEP_SHARED_PART, type CheckoutContext } from './state.js';

/** git's name of a shared index part: `sharedindex.<its checksum>`. */
const SHARED_PART = /^sharedindex\.[0-9a-f]{40,64}$/;

/** A private index at least this large is split (smaller ones cost less to write whole than to keep in two). */
let splitFromBytes = 1024 * 1024;

/** Test seam: split private indexes from this size on (a test project is far smaller than one worth splitting). */
export function splitIndexesFrom(bytes: number): void {
  splitFromBytes = bytes;
}

/**
 * Splits a view's private index when it is large and whole (a new or reseeded index; or one whose changed part grew
 * past the bound after a large change): the shared part written into the view's git folder, copied beside the index.
 * Shared parts the private index no longer names are removed beside it (the view's git folder keeps its own until the
 * view is thinned: the view's current index may still name one).
 */
export async function splitPrivateIndex(context: CheckoutContext): Promise<void> {
  const { state, location } = context;
  if (state.kind !== 'view' || state.gitDir === '') return;
  const index = backingIndex(context);
  const size = fs.statSync(index, { throwIfNoEntry: false })?.size ?? 0;
  if (size < splitFromBytes || size === 0) return;
  const side = {
    cwd: state.backing,
    env: { GIT_DIR: state.gitDir, GIT_WORK_TREE: state.backing, GIT_INDEX_FILE: index },
    config: [KEEP_SHARED_PART],
  };
  await runGit(side, ['update-index', '--split-index']);
  const made = sharedPartOf(fs.readFileSync(index));
  if (made === undefined) {
    // Not read (an index format this reader does not know): whole again, so the snapshot's gits, which look for a
    // shared part beside the index, never meet one they cannot find.
    await runGit(side, ['update-index', '--no-split-index']);
    return;
  }
  const beside = path.join(location.stateDir, made);
  if (!fs.existsSync(beside)) {
    const temp = `${beside}.${process.pid}.tmp`;
    copyIndexFile(path.join(state.gitDir, made), temp);
    fs.renameSync(temp, beside);
  }
  for (const name of sharedParts(location.stateDir))
    if (name !== made) fs.rmSync(path.join(location.stateDir, name), { force: true });
}

/**
 * The shared part a split index names (`sharedindex.<id>`, from its `link` extension), or undefined for an index that
 * is whole. git's index format: a 12-byte header (`DIRC`, version, entry count), the entries (version 2 and 3: 62
 * bytes, 2 more with extended flags, the path, padded with NULs to a multiple of 8; version 4: no padding, the path
 * as a count of bytes to drop from the previous one and a NUL-ended suffix), then extensions (a 4-byte signature, a
 * 4-byte length, the data); `link`'s data starts with the shared part's id.
 */
export function sharedPartOf(bytes: Buffer): string | undefined {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = bytes.readUInt32BE(4);
  const count = bytes.readUInt32BE(8);
  const hashBytes = 20;
  let at = 12;
  for (let entry = 0; entry < count; entry++) {
    const flags = bytes.readUInt16BE(at + 40 + hashBytes);
    const extended = version >= 3 && (flags & 0x4000) !== 0;
    const fixed = 40 + hashBytes + 2 + (extended ? 2 : 0);
    if (version === 4) {
      let cursor = at + fixed;
      while ((bytes[cursor] as number) & 0x80) cursor++; // the varint's bytes
      const end = bytes.indexOf(0, cursor + 1);
      if (end < 0) return undefined;
      at = end + 1;
    } else {
      const end = bytes.indexOf(0, at + fixed);
      if (end < 0) return undefined;
      at += (fixed + (end - (at + fixed)) + 8) & ~7;
    }
  }
  while (at + 8 <= bytes.length - hashBytes) {
    const signature = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32BE(at + 4);
    if (signature === 'link') return `sharedindex.${bytes.toString('hex', at + 8, at + 8 + hashBytes)}`;
    at += 8 + size;
  }
  return undefined;
}

/**
 * Before the private index is copied in as the view's own: the shared part it names must be in the view's git folder
 * (where the view's git looks). The split put it there; a copy is placed again if it went.
 */
export function placeSharedPart(context: CheckoutContext): void {
  const { state, location } = context;
  if (state.kind !== 'view' || state.gitDir === '') return;
  for (const name of sharedParts(location.stateDir)) {
    const there = path.join(state.gitDir, name);
    if (fs.existsSync(there)) continue;
    const temp = `${there}.${process.pid}.tmp`;
    copyIndexFile(path.join(location.stateDir, name), temp);
    fs.renameSync(temp, there);
  }
}

/** Removes every shared part of a view's indexes (it is thinned: both indexes go). */
export function dropSharedParts(context: CheckoutContext): void {
  const { state, location } = context;
  for (const folder of [location.stateDir, state.gitDir])
    if (folder !== '')
      for (const name of sharedParts(folder)) fs.rmSync(path.join(folder, name), { force: true });
}

function sharedParts(folder: string): string[] {
  try {
    return fs.readdirSync(folder).filter((name) => SHARED_PART.test(name));
  } catch {
    return [];
  }
}
