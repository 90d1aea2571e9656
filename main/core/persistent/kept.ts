// The history store: bytes of files as a change found and left them, kept by sha256 so a change can be
// reverted later (main/core/history). Keel's own folder, never the user's repository. See README.md.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FileMode } from '../../common/events.js';

/** Files larger than this are not kept: a change of one is recorded, but reverting it is refused. */
export const KEEP_MAX_BYTES = 64 * 1024 * 1024;

/** True for a sha256 as Keel writes one: 64 lowercase hex digits, so a file name inside the store. */
export function isSha256(text: string): boolean {
  return /^[0-9a-f]{64}$/.test(text);
}

/**
 * Where the bytes with this sha256 are kept in `store`. A hash comes from a log, which may come from a file
 * someone else wrote: anything but a sha256 (`../../proc/self/environ`) would name a path outside, so it throws.
 */
export function keptPath(store: string, sha256: string): string {
  if (!isSha256(sha256)) throw new Error('a recorded hash is not a sha256: no kept bytes have that name');
  return path.join(store, sha256);
}

/** True when the bytes with this sha256 are in `store` (never for a text that is not a sha256). */
export function isKept(store: string, sha256: string): boolean {
  return isSha256(sha256) && fs.existsSync(keptPath(store, sha256));
}

/**
 * Keeps `bytes` (temp file, rename: a crash leaves either nothing or the whole blob); returns the sha256.
 * `durable` fsyncs before the rename (a revert's journal relies on it); a commit's copies skip it, so a turn
 * pays no fsync per changed file: one lost in a power cut only makes that file's change not revertible.
 */
export function keepBytes(store: string, bytes: Buffer, options: { durable?: boolean } = {}): string {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (isKept(store, sha256)) return sha256;
  fs.mkdirSync(store, { recursive: true });
  const temp = path.join(store, `.tmp-${randomBytes(6).toString('hex')}`);
  const fd = fs.openSync(temp, 'wx', 0o600);
  try {
    fs.writeSync(fd, bytes);
    if (options.durable) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, keptPath(store, sha256));
  return sha256;
}

/** What is at a path, as a change records it: its mode and bytes (a link's bytes are its target text). */
export type FileState = { mode: FileMode; bytes: Buffer; sha256: string };

/**
 * Reads what is at `file` without following a link: undefined when nothing (or a folder, a device) is
 * there, `'too-large'` past KEEP_MAX_BYTES.
 */
export function readFileState(file: string): FileState | 'too-large' | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return undefined;
  }
  if (stat.isSymbolicLink()) {
    const bytes = fs.readlinkSync(file, { encoding: 'buffer' });
    return { mode: '120000', bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
  if (!stat.isFile()) return undefined;
  if (stat.size > KEEP_MAX_BYTES) return 'too-large';
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile()) return undefined;
    const bytes = fs.readFileSync(fd);
    return {
      mode: (opened.mode & 0o111) !== 0 ? '100755' : '100644',
      bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Keeps what is at `file` when it hashes to `expected` (a link: its target text) and returns its mode;
 * undefined when it differs, is missing or is too large (then it is not kept and the change of it cannot
 * be reverted).
 */
export function keepFile(store: string, file: string, expected: string): FileMode | undefined {
  const state = readFileState(file);
  if (state === undefined || state === 'too-large' || state.sha256 !== expected) return undefined;
  keepBytes(store, state.bytes);
  return state.mode;
}

/** The kept bytes with this sha256, or undefined when they were never kept (or it is not a sha256). */
export function readKept(store: string, sha256: string): Buffer | undefined {
  if (!isSha256(sha256)) return undefined;
  try {
    return fs.readFileSync(keptPath(store, sha256));
  } catch {
    return undefined;
  }
}
