// Issue #36: writes through a shared memory map. `fs.watch` (libuv) asks inotify for the events of write(2), creation,
// removal, renames and attributes; a process that writes a file through a `MAP_SHARED` mapping sends none of them.
// The one event that does come is IN_CLOSE_WRITE, when the file opened for writing is released: its last descriptor
// closed and its last mapping gone (the mapping holds the file open; at the latest, when the process exits). libuv
// cannot be asked for it, so a second inotify instance is opened through libc (koffi: an FFI with prebuilt binaries
// from npm, no compiler), one watch per folder the backing watcher watches (backingWatch.ts), read without blocking
// when the watcher's barrier runs and every `DRAIN_MS` in between. What a mapping still held when a tree is made has
// written is found by `mappedForWriting` (the live mappings of Keel's descendants: the boxes' processes).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type Koffi from 'koffi';
import path from 'node:path';
import { listProcesses } from '../../runner/processTree.js';

const IN_CLOSE_WRITE = 0x8;
const IN_Q_OVERFLOW = 0x4000;
const IN_IGNORED = 0x8000;
const IN_ONLYDIR = 0x0100_0000;
const IN_DONT_FOLLOW = 0x0200_0000;
const IN_NONBLOCK = 0o4000;
const IN_CLOEXEC = 0o2000000;
const EAGAIN = 11;
const ENOENT = 2;
const ENOTDIR = 20;
/** struct inotify_event: wd, mask, cookie, len, then `len` bytes of NUL-padded name. */
const EVENT_HEADER = 16;

/** libc's inotify calls, bound once per process (null: not Linux, or the binding could not be loaded). */
type Libc = {
  init: (flags: number) => number;
  add: (fd: number, file: string, mask: number) => number;
  rm: (fd: number, wd: number) => number;
  read: (fd: number, buffer: Buffer, size: number) => number | bigint;
  close: (fd: number) => number;
  errno: () => number;
};
let libc: Libc | null | undefined;
/** Tests: as if the binding could not be loaded (the backing watcher then vouches for no segment's end). */
let disabled = false;

function bind(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== 'linux') return libc;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    const lib = koffi.load(null);
    libc = {
      init: lib.func('int inotify_init1(int flags)') as Libc['init'],
      add: lib.func('int inotify_add_watch(int fd, const char *path, uint32_t mask)') as Libc['add'],
      rm: lib.func('int inotify_rm_watch(int fd, int wd)') as Libc['rm'],
      read: lib.func('intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)') as Libc['read'],
      close: lib.func('int close(int fd)') as Libc['close'],
      errno: () => koffi.errno(),
    };
  } catch {
    // No binding for this platform or libc: the watcher runs without it (a segment's end is the full pass).
  }
  return libc;
}

/** Tests: turns the close watch off (as on a machine where koffi cannot load) or on again. */
export function closeWritesEnabled(on: boolean): void {
  disabled = !on;
}

/**
 * One inotify instance that reports files closed after being written, for the folders a backing watcher watches
 * (by their folder-relative paths). `lost` says why it can no longer vouch (its queue overflowed, a watch failed).
 */
export class CloseWrites {
  lost: string | undefined;
  /** Its descriptor is closed: nothing may use the number again (the kernel hands it to the next open). */
  private closed = false;
  private readonly wds = new Map<string, number>();
  private readonly rels = new Map<number, string>();
  private readonly buffer = Buffer.alloc(64 * 1024);

  private constructor(
    private readonly lib: Libc,
    private readonly fd: number,
  ) {}

  /** A new instance, or undefined where it cannot be had (the watcher then vouches only for what fs.watch sees). */
  static open(): CloseWrites | undefined {
    const lib = disabled ? null : bind();
    if (lib === null) return undefined;
    const fd = lib.init(IN_NONBLOCK | IN_CLOEXEC);
    return fd < 0 ? undefined : new CloseWrites(lib, fd);
  }

  /** Watches the folder `rel` (at `full`) for files closed after writing; a folder gone meanwhile is skipped. */
  add(rel: string, full: string): void {
    if (this.lost !== undefined || this.closed) return;
    const wd = this.lib.add(this.fd, full, IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW);
    if (wd < 0) {
      const errno = this.lib.errno();
      // Gone or replaced by a file since it was listed: its parent's fs.watch event stages it.
      if (errno !== ENOENT && errno !== ENOTDIR)
        this.lost = `${rel || '.'} could not be watched (errno ${errno})`;
      return;
    }
    const before = this.wds.get(rel);
    if (before !== undefined && before !== wd) this.remove(rel);
    this.wds.set(rel, wd);
    this.rels.set(wd, rel);
  }

  /** Stops watching `rel` (renamed, removed, replaced: the backing watcher watches what is there anew). */
  remove(rel: string): void {
    const wd = this.wds.get(rel);
    if (wd === undefined || this.closed) return;
    this.wds.delete(rel);
    if (this.rels.get(wd) !== rel) return;
    this.rels.delete(wd);
    this.lib.rm(this.fd, wd);
  }

  /** Reads every event queued so far; each file closed after writing is passed to `changed` (folder-relative). */
  drain(changed: (file: string) => void): void {
    for (;;) {
      if (this.lost !== undefined || this.closed) return;
      const size = Number(this.lib.read(this.fd, this.buffer, this.buffer.length));
      if (size < 0) {
        const errno = this.lib.errno();
        if (errno !== EAGAIN) this.lost = `its queue could not be read (errno ${errno})`;
        return;
      }
      if (size === 0) return;
      for (let at = 0; at + EVENT_HEADER <= size;) {
        const wd = this.buffer.readInt32LE(at);
        const mask = this.buffer.readUInt32LE(at + 4);
        const length = this.buffer.readUInt32LE(at + 12);
        const raw = this.buffer.subarray(at + EVENT_HEADER, at + EVENT_HEADER + length);
        at += EVENT_HEADER + length;
        if (mask & IN_Q_OVERFLOW) {
          this.lost = 'writes came faster than they could be read: some may have been lost';
          return;
        }
        const rel = this.rels.get(wd);
        if (mask & IN_IGNORED) {
          // The folder is gone (or its watch removed): its parent's events stage it.
          if (rel !== undefined && this.wds.get(rel) === wd) this.wds.delete(rel);
          this.rels.delete(wd);
          continue;
        }
        // A folder no longer watched under that name (renamed since): the backing watcher scans its new path whole.
        if (rel === undefined || !(mask & IN_CLOSE_WRITE)) continue;
        const end = raw.indexOf(0);
        const bytes = end === -1 ? raw : raw.subarray(0, end);
        const name = bytes.toString('utf8');
        if (!Buffer.from(name, 'utf8').equals(bytes)) {
          this.lost = 'a name in it is not UTF-8';
          return;
        }
        if (name !== '') changed(rel === '' ? name : `${rel}/${name}`);
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wds.clear();
    this.rels.clear();
    this.lib.close(this.fd);
  }
}

/** The pid namespace `pid` is in (undefined when it cannot be read). */
function pidNamespace(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * The files below `root` (folder-relative) that a live process started by Keel (a box's command, a background
 * command, an MCP server: every box is a descendant of Keel's process, in a pid namespace of its own) maps shared and
 * writable now: what it wrote through that mapping sends no event until the mapping is released. Only boxed processes
 * are looked at: a segment's end is taken from the watcher only where the commands run in bwrap. A box binds the project at its own path, so the
 * paths its processes' maps name are the host's. Processes that vanish meanwhile, or whose maps cannot be read, are
 * skipped (a process Keel started runs as Keel's user: its maps are readable).
 */
export function mappedForWriting(root: string): string[] {
  if (process.platform !== 'linux') return [];
  const rows = listProcesses();
  const children = new Map<number, number[]>();
  for (const row of rows) {
    if (row.zombie) continue;
    const list = children.get(row.ppid) ?? [];
    list.push(row.pid);
    children.set(row.ppid, list);
  }
  const prefix = root.endsWith('/') ? root : `${root}/`;
  const found = new Set<string>();
  const ours = pidNamespace(process.pid);
  const pending = [...(children.get(process.pid) ?? [])];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    pending.push(...(children.get(pid) ?? []));
    // Only a box's processes (bwrap gives each box a pid namespace of its own): the app's own helpers (the renderer,
    // the GPU process: thousands of mappings each) write no project file, and their maps cost milliseconds to read.
    if (ours !== undefined && pidNamespace(pid) === ours) continue;
    let maps: string;
    try {
      maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
    } catch {
      continue;
    }
    for (const line of maps.split('\n')) {
      // address perms offset dev inode path: perms "rw-s" is a shared mapping that can be written.
      const fields = /^\S+ (\S{4}) \S+ \S+ \d+ +(.*)$/.exec(line);
      if (fields === null || fields[1]?.[1] !== 'w' || fields[1][3] !== 's') continue;
      const file = fields[2] ?? '';
      if (file.startsWith(prefix) && !file.endsWith(' (deleted)'))
        found.add(path.relative(root, file).split(path.sep).join('/'));
    }
  }
  return [...found];
}

/**
 * Whether a file among `paths` (folder-relative; a folder counts for every file below it, but folders named in `skip`
 * (dependency folders the tree leaves out) and nested repositories, which the tree holds as gitlinks) has another
 * name (a hard link): a write through one name sends events only for that name's folder, so the other's change would
 * not be staged from the watcher. Inside the box a link can only join two names of the project (the project is its own
 * mount there: link(2) across mounts fails with EXDEV), so the name written is among the changed paths.
 */
export function linkedAmong(root: string, paths: readonly string[], skip: ReadonlySet<string>): boolean {
  const pending = [...paths];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(path.join(root, rel));
    } catch {
      continue; // Gone: staged as removed.
    }
    if (stat.isFile() && stat.nlink > 1) return true;
    if (!stat.isDirectory() || skip.has(path.posix.basename(rel))) continue;
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, rel));
    } catch {
      continue;
    }
    if (names.includes('.git')) continue;
    for (const name of names) pending.push(`${rel}/${name}`);
  }
  return false;
}
