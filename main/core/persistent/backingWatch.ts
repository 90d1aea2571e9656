// Issue #36: the backing folder's changes without a stat pass. A snapshot's `add -A` over the whole folder costs
// O(files) (~230 ms at 80,000 files: every file lstat'd, every folder read); with a watcher of the folder that was
// in place before the last snapshot began, the next snapshot stages only the paths changed since (`add -A --
// <paths>`). Only long-lived hosts watch (the app, `keel serve`, the ACP agent: `watchBackingFolders`); a `keel run`
// takes one turn and would never use what it watched. See README.md ("The watcher").
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTrustedFilesystem } from '../../sandbox/envFiles.js';
import { mountsInside } from '../../sandbox/overlayInUse.js';
import { CloseWrites } from './closeWrites.js';
import { lstatOrNone } from './streamWrite.js';

/** Folders a watcher watches at most (one inotify watch each); past it the folder gets full stat passes. */
const MAX_FOLDERS = 20_000;

/** Changed paths a snapshot stages one by one at most; past it a full pass is the cheaper answer. */
export const MAX_WATCHED_PATHS = 5_000;

/** Paths remembered at most between snapshots; past it the watcher starts again (its marks void). */
const MAX_REMEMBERED = 200_000;

/** Folders a watcher's walk lists at once (the thread pool has four threads). */
const WALK_PARALLEL = 4;

/** How long a barrier waits for its own event before the watcher is judged not working. */
const BARRIER_TIMEOUT_MS = 5_000;

/** How often the files closed after writing are read between barriers (closeWrites.ts; its queue holds 16,384). */
const DRAIN_MS = 250;

/**
 * Where a snapshot left off: the watcher (by its id, which no other watcher or process shares), the last event
 * the snapshot's stat work came after, and the ignore rules' files as they were (`ignoreStamp`).
 */
export type WatchMark = { id: string; seq: number; ignores: string };

/** What a snapshot may stage instead of the whole folder, and the mark to keep once it is done. */
export type WatchedChanges = {
  /** The mark this snapshot leaves (undefined: no watcher can vouch for what follows). */
  mark: WatchMark | undefined;
  /** Folder-relative paths changed since `since` (and the folders always staged), or undefined: a full pass. */
  paths: string[] | undefined;
  /** Why a full pass, when `since` was given and could not be used (for the trace and the tests). */
  why?: string;
};

let enabled = false;
/** A smaller overflow mark than the queue's (tests: a burst of that many events voids the watcher). */
let overflowAt: number | undefined;
/** Folders watched at once at most; the least recently used stops first. */
const MAX_WATCHED_FOLDERS = 8;
const watchers = new Map<string, BackingWatcher>();
/** Backing folders this process does not watch, and why (too many folders, an untrusted filesystem...). */
const refused = new Map<string, string>();

/**
 * Whether this process watches the backing folders it snapshots (a long-lived host turns it on; off again stops
 * every watcher). Off, every snapshot is a full stat pass.
 */
export function watchBackingFolders(on: boolean, options: { overflowAt?: number } = {}): void {
  enabled = on;
  overflowAt = options.overflowAt;
  if (!on) {
    for (const watcher of watchers.values()) watcher.close();
    watchers.clear();
    refused.clear();
  }
}

/**
 * Starts watching `backing` now, in a process that does not watch the folders it snapshots (a one-turn host: `keel
 * run`), so that a snapshot taken later in the turn (a new session's view takes its baseline before the turn's first
 * tool that can change files) is marked, and the turn's later environment blocks can take a view's status from its
 * layers (viewStatus.ts). Its walk (~170 ms at 80,000 files alone, mostly the thread pool's listing) runs while the turn's
 * first request waits for the model; a snapshot that comes before it is done does not wait for it. Nothing in a
 * process that watches anyway (its first snapshot starts the watcher) or where the folder was refused.
 */
export function watchAhead(backing: string): void {
  if (enabled || process.platform !== 'linux' || refused.has(backing) || watchers.has(backing)) return;
  const watcher = startWatcher(backing);
  void watcher.ready.then((why) => {
    if (why === undefined) return;
    if (watchers.get(backing) === watcher) watchers.delete(backing);
    refused.set(backing, why);
  });
}

/** A new watcher of `backing`, kept (the least recently used ones stopped first when there are too many). */
function startWatcher(backing: string): BackingWatcher {
  for (const [folder, old] of watchers) {
    if (watchers.size < MAX_WATCHED_FOLDERS) break;
    old.close();
    watchers.delete(folder);
  }
  const watcher = new BackingWatcher(backing, overflowAt);
  watchers.set(backing, watcher);
  return watcher;
}

/** Whether this process watches `backing`, once its watcher's walk is done (false: none, or it was refused). */
export async function watchedReady(backing: string): Promise<boolean> {
  const watcher = watchers.get(backing);
  return watcher === undefined ? false : (await watcher.ready) === undefined && watcher.dead === undefined;
}

/**
 * For a snapshot of `backing` about to begin: the paths changed since `since` when this process's watcher of the
 * folder was in place before it and saw everything since (no lost events, the ignore rules unchanged: `ignores`),
 * and the mark to record once the snapshot is done. Every event of a change made before this call returns has been
 * counted (a barrier), so the snapshot's git, which starts after, sees at least those changes; later ones are the
 * next snapshot's. `mapped`: the caller stages what live mappings wrote (a direct segment's end): paths only when the
 * watcher also sees files closed after writing through a shared memory map (closeWrites.ts).
 */
export async function backingChanges(
  backing: string,
  since: WatchMark | undefined,
  ignores: string,
  options: { mapped?: boolean } = {},
): Promise<WatchedChanges> {
  if (process.platform !== 'linux') return { mark: undefined, paths: undefined };
  if (refused.has(backing)) return { mark: undefined, paths: undefined, why: refused.get(backing) };
  let watcher = watchers.get(backing);
  if (!enabled) {
    // A process that does not watch may have started one ahead (`watchAhead`): used once its walk is done, never
    // waited for (the snapshot is then the full pass it would be anyway), never started again here.
    if (watcher === undefined || watcher.dead !== undefined) {
      if (watcher !== undefined) watchers.delete(backing);
      return { mark: undefined, paths: undefined };
    }
    if (!watcher.walked)
      return {
        mark: undefined,
        paths: undefined,
        why: 'the watch started ahead is still walking the folder',
      };
  }
  let why: string | undefined;
  if (watcher?.dead !== undefined) {
    // It stopped vouching since the last snapshot (events lost...): a new one, and a full pass.
    why = watcher.dead;
    watchers.delete(backing);
    watcher = undefined;
  }
  if (watcher === undefined) {
    watcher = startWatcher(backing);
    why ??= 'the folder was not watched yet';
  }
  // Most recently used last.
  watchers.delete(backing);
  watchers.set(backing, watcher);
  const started = await watcher.ready;
  if (started !== undefined) {
    watchers.delete(backing);
    refused.set(backing, started);
    return { mark: undefined, paths: undefined, why: started };
  }
  const seq = await watcher.barrier();
  if (watcher.dead !== undefined) return { mark: undefined, paths: undefined, why: watcher.dead };
  const mark = { id: watcher.id, seq, ignores };
  if (why !== undefined) return { mark, paths: undefined, why };
  if (since === undefined) return { mark, paths: undefined, why: 'no earlier snapshot was watched' };
  if (since.id !== watcher.id)
    return { mark, paths: undefined, why: 'the last snapshot was not watched by this watcher' };
  if (since.ignores !== ignores) return { mark, paths: undefined, why: 'the ignore rules changed' };
  if (options.mapped === true && !watcher.watchesCloses)
    return { mark, paths: undefined, why: 'writes through shared memory maps are not watched here' };
  const changed = watcher.changedSince(since.seq);
  // A `.gitignore` changed: what it newly ignores or lets in lies anywhere below its folder.
  if (changed.some((file) => path.posix.basename(file) === '.gitignore' && !file.includes('/')))
    return { mark, paths: undefined, why: 'the top .gitignore changed' };
  const paths = outermost(
    changed.map((file) => (path.posix.basename(file) === '.gitignore' ? path.posix.dirname(file) : file)),
  );
  if (paths.length > MAX_WATCHED_PATHS)
    return { mark, paths: undefined, why: `${paths.length} paths changed` };
  return { mark, paths };
}

/**
 * True when this process's watcher of `backing` vouches that nothing in it changed since the snapshot that left
 * `since` (the same watcher, alive, no event after its mark, no nested repository, every event of a change made before
 * this call counted: a barrier). False whenever it cannot tell.
 */
export async function backingQuietSince(backing: string, since: WatchMark): Promise<boolean> {
  const watcher = watchers.get(backing);
  if (watcher === undefined || watcher.dead !== undefined || watcher.id !== since.id) return false;
  await watcher.barrier();
  return watcher.dead === undefined && watcher.changedSince(since.seq).length === 0;
}

/**
 * The paths changed in `backing` since the mark `since` (outermost, every nested repository among them), after a
 * barrier, and the mark of that barrier, when this process's watcher left `since`, is alive and also sees files closed
 * after writing (a direct segment's protected paths: what its commands did); undefined otherwise.
 */
export async function watchedSince(
  backing: string,
  since: WatchMark,
): Promise<{ paths: string[]; mark: WatchMark } | undefined> {
  const watcher = watchers.get(backing);
  if (watcher === undefined || watcher.id !== since.id || !watcher.watchesCloses) return undefined;
  const seq = await watcher.barrier();
  if (!watcher.watchesCloses) return undefined;
  return { paths: outermost(watcher.changedSince(since.seq)), mark: { ...since, seq } };
}

/** Stops watching `backing` (its marks void): the folder's sessions are gone from this process. */
export function stopWatching(backing: string): void {
  watchers.get(backing)?.close();
  watchers.delete(backing);
}

/** One process-wide folder whose files the barriers write (never the project's: Keel does not write there). */
let barrierFolder: string | undefined;
function barrierDir(): string {
  if (barrierFolder === undefined || !fs.existsSync(barrierFolder)) {
    barrierFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-watch-'));
    const made = barrierFolder;
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
  }
  return barrierFolder;
}

/** inotify's queue length: an overflow drops events, and libuv drops the overflow notice itself. */
function maxQueuedEvents(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim()) || 16_384;
  } catch {
    return 16_384;
  }
}

/**
 * A watcher of one backing folder: one `fs.watch` per folder (Node's recursive watch on Linux is a watch per file and
 * a stat of each: not usable at this size), the repository's own `.git` left out. Each event's path is remembered with
 * a sequence number. What it cannot vouch for makes it dead (the next snapshot starts a new one) or refused:
 *
 * - inotify drops events when its queue overflows, and libuv drops the `IN_Q_OVERFLOW` notice: Node reports nothing.
 *   libuv reads the queue to its end in one go, so an overflow shows as one burst (the events delivered before the
 *   loop moves on to its check phase) of at least the queue's length; a burst of half of it is taken as one.
 * - A new folder is watched before it is listed, and its path is remembered, so git scans it whole next time; a folder
 *   renamed, removed or replaced is watched again from scratch (a `rename` event naming a watched folder).
 * - A nested repository (a folder holding `.git`) is watched itself but not below (its `.git` moves with every git
 *   command there): its path is staged at every snapshot, as a full pass would look at it.
 * - A folder on another device (a mount inside the project), a filesystem whose changes the kernel may not see (FUSE,
 *   network, overlay), a name that is not UTF-8, or more than `MAX_FOLDERS` folders: refused, full passes.
 * - The repository's `.git` replaced or removed, the folder itself moved: dead.
 *
 * Changes made through a shared memory map of a file send no event fs.watch asks for: where libc's inotify can be
 * reached (closeWrites.ts), a second instance reports each file closed after writing, which comes when the mapping is
 * released; without it such a change shows at the next full pass (a direct segment's end, a restart of Keel).
 */
class BackingWatcher {
  readonly id = randomUUID();
  /** Why it stopped vouching (it no longer counts events; the next snapshot starts another). */
  dead: string | undefined;
  /** Resolves when every folder is watched: undefined, or why this folder is refused. */
  readonly ready: Promise<string | undefined>;
  /** True once `ready` has resolved (its first walk is done). */
  walked = false;
  private seq = 0;
  private readonly changed = new Map<string, number>();
  /** Watched folders by folder-relative path ('' the root). */
  private readonly folders = new Map<string, fs.FSWatcher>();
  /** Nested repositories: staged at every snapshot, not watched below. */
  private readonly nested = new Set<string>();
  private readonly walks = new Set<Promise<void>>();
  private refusal: string | undefined;
  private dev = 0;
  private rootIdentity = '';
  private gitIdentity = '';
  private burst = 0;
  private readonly overflowAt: number;
  private barrierWatch: fs.FSWatcher | undefined;
  private readonly barriers = new Map<string, () => void>();
  private barrierCount = 0;
  /** Files closed after writing (a shared mapping's writes come so), where it can be had. */
  private readonly closes = CloseWrites.open();
  private readonly drainTimer = setInterval(() => this.drainCloses(), DRAIN_MS).unref();

  constructor(
    private readonly root: string,
    overflowAt?: number,
  ) {
    this.overflowAt = overflowAt ?? Math.floor(maxQueuedEvents() / 2);
    this.ready = this.start().finally(() => {
      this.walked = true;
    });
  }

  private async start(): Promise<string | undefined> {
    if (!onTrustedFilesystem(this.root)) return 'its filesystem is not one whose changes Keel can watch';
    try {
      this.dev = fs.statSync(this.root).dev;
      this.rootIdentity = identity(this.root);
      this.gitIdentity = identity(path.join(this.root, '.git'));
      const dir = barrierDir();
      this.barrierWatch = fs.watch(dir, { persistent: false }, (_type, name) => {
        this.count();
        const done = name === null ? undefined : this.barriers.get(String(name));
        if (done) done();
      });
      this.barrierWatch.on('error', () => this.kill('the watch of its barrier folder failed'));
    } catch (error) {
      return `it could not be watched (${(error as Error).message})`;
    }
    const mounted = mountsInside(this.root);
    if (mounted !== undefined) return `${mounted} is another filesystem mounted inside it`;
    this.watchTree('');
    await this.settled();
    if (this.refusal !== undefined) this.close();
    return this.refusal;
  }

  /** Waits until no walk of a new folder is under way. */
  private async settled(): Promise<void> {
    while (this.walks.size > 0) await Promise.all([...this.walks]);
  }

  /**
   * The sequence number after every event of a change made before this call: a file written in the barrier folder
   * (watched on the same inotify instance, whose queue is in order) comes back after all of them; the walks of new
   * folders are waited for, so every folder is watched again.
   */
  async barrier(): Promise<number> {
    const name = `${process.pid}-${(this.barrierCount += 1)}`;
    const file = path.join(barrierDir(), name);
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
      this.barriers.set(name, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      fs.writeFileSync(file, '');
    } catch (error) {
      this.kill(`its barrier could not be written (${(error as Error).message})`);
    }
    const ok = await arrived;
    this.barriers.delete(name);
    fs.rmSync(file, { force: true });
    if (!ok) this.kill('its barrier event never came');
    await this.settled();
    // A file closed before the barrier was written is in the close instance's queue already (queued at its release).
    this.drainCloses();
    return this.seq;
  }

  /** Whether it also sees files closed after writing (writes through a shared memory map). */
  get watchesCloses(): boolean {
    return this.closes !== undefined && this.dead === undefined;
  }

  private drainCloses(): void {
    if (this.closes === undefined || this.dead !== undefined) return;
    this.closes.drain((file) => {
      if (!this.insideNested(file)) this.remember(file);
    });
    if (this.closes.lost !== undefined) this.kill(this.closes.lost);
  }

  /** The paths changed after `seq`, and every nested repository. */
  changedSince(seq: number): string[] {
    const paths = [...this.nested];
    for (const [file, at] of this.changed) if (at > seq) paths.push(file);
    return paths;
  }

  close(): void {
    if (this.dead === undefined) this.dead = 'it was stopped';
    for (const watcher of this.folders.values()) watcher.close();
    this.folders.clear();
    clearInterval(this.drainTimer);
    this.closes?.close();
    this.barrierWatch?.close();
    for (const done of this.barriers.values()) done();
  }

  private kill(why: string): void {
    if (this.dead !== undefined) return;
    this.dead = why;
    this.close();
  }

  private refuse(why: string): void {
    if (this.refusal === undefined) this.refusal = why;
  }

  /** One event of a burst; a burst as long as the overflow mark means events were lost. */
  private count(): void {
    if (this.burst === 0) setImmediate(() => (this.burst = 0));
    this.burst += 1;
    if (this.burst >= this.overflowAt)
      this.kill(`${this.burst} events came at once: some may have been lost`);
  }

  private remember(file: string): void {
    this.seq += 1;
    this.changed.set(file, this.seq);
    if (this.changed.size > MAX_REMEMBERED) this.kill('too many changed paths to remember');
  }

  /** Watches `rel` and every folder below it (but nested repositories' insides and `.git`). */
  private watchTree(rel: string): void {
    // Nothing a walk meets may fail a snapshot: whatever it could not watch voids the watcher (a full pass).
    const walk = this.walk(rel)
      .catch((error: unknown) =>
        this.kill(`${rel || 'its top folder'} could not be watched (${String(error)})`),
      )
      .finally(() => this.walks.delete(walk));
    this.walks.add(walk);
  }

  /**
   * Watches and lists `rel` and the folders below it, `WALK_PARALLEL` folders at a time. One listing at a time took
   * ~320 ms at 80,000 files (800 folders) alone and ~1.3 s in a `keel run --session` whose turn shared the machine,
   * past its third request; four at a time ~170 ms alone, ~600 ms in that turn (a walk not done marks no snapshot).
   */
  private walk(rel: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending = [rel];
      let running = 0;
      const next = (): void => {
        while (
          running < WALK_PARALLEL &&
          pending.length > 0 &&
          this.dead === undefined &&
          this.refusal === undefined
        ) {
          running += 1;
          this.visit(pending.pop() as string).then(
            (below) => {
              running -= 1;
              pending.push(...below);
              next();
            },
            (error: unknown) => {
              running -= 1;
              reject(error instanceof Error ? error : new Error(String(error)));
            },
          );
        }
        if (running === 0) resolve();
      };
      next();
    });
  }

  /** Watches one folder, then lists it: the folders below it to walk (none for a nested repository's). */
  private async visit(folder: string): Promise<string[]> {
    const full = folder === '' ? this.root : path.join(this.root, folder);
    // The first walk's folders are known to be folders of the root's filesystem (the listing's types, the mount table
    // read at the start): no lstat of each (a walk is the main thread's work, ~35% of it lstat and name buffers).
    if (!this.watchOne(folder, full, !this.walked && folder !== '')) return [];
    let entries: fs.Dirent[];
    try {
      // Names as strings: a name that is not UTF-8 comes back with U+FFFD in it (refused: events name it otherwise).
      entries = await fs.promises.readdir(full, { withFileTypes: true });
    } catch {
      // A folder gone since it was watched: its parent's event stages it.
      return [];
    }
    if (entries.some((entry) => entry.name.includes('\uFFFD'))) {
      this.refuse('a name in it is not UTF-8');
      return [];
    }
    if (folder !== '' && entries.some((entry) => entry.name === '.git')) {
      this.nested.add(folder);
      return [];
    }
    const below: string[] = [];
    for (const entry of entries)
      if (entry.isDirectory() && !(folder === '' && entry.name === '.git'))
        below.push(folder === '' ? entry.name : `${folder}/${entry.name}`);
    return below;
  }

  /** Starts the watch of one folder (before it is listed); false when it is not a folder of this device any more. */
  private watchOne(rel: string, full: string, knownFolder = false): boolean {
    this.folders.get(rel)?.close();
    this.folders.delete(rel);
    if (!knownFolder) {
      const stat = lstatOrNone(full);
      if (stat === undefined || !stat.isDirectory()) return false;
      if (stat.dev !== this.dev) {
        this.refuse(`${rel} is another filesystem mounted inside it`);
        return false;
      }
    }
    if (this.folders.size >= MAX_FOLDERS) {
      this.refuse(`it has more than ${MAX_FOLDERS} folders`);
      return false;
    }
    try {
      const watcher = fs.watch(full, { persistent: false, encoding: 'buffer' }, (type, name) =>
        this.onEvent(rel, type, name),
      );
      watcher.on('error', (error) => this.kill(`the watch of ${rel || '.'} failed (${error.message})`));
      this.folders.set(rel, watcher);
      this.closes?.add(rel, full);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      this.refuse(`${rel || 'its top folder'} could not be watched (${(error as Error).message})`);
      return false;
    }
  }

  private onEvent(rel: string, type: string, raw: Buffer | null): void {
    this.count();
    if (this.dead !== undefined) return;
    if (raw === null) return this.kill('an event named no file');
    const name = raw.toString('utf8');
    if (!Buffer.from(name, 'utf8').equals(raw)) return this.kill('a name in it is not UTF-8');
    if (rel === '' && name === '.git') {
      // The repository's own folder: its insides are not watched; it being replaced or removed voids everything.
      if (identity(path.join(this.root, '.git')) !== this.gitIdentity) this.kill('its .git was replaced');
      return;
    }
    // An event of the top folder itself carries its own name (libuv names a watched folder's own events so).
    if (rel === '' && name === path.basename(this.root) && identity(this.root) !== this.rootIdentity)
      return this.kill('the folder itself was moved or replaced');
    const file = rel === '' ? name : `${rel}/${name}`;
    this.remember(file);
    if (name === '.git') {
      // A repository made or removed in a watched folder: staged with every snapshot from now on.
      this.nested.add(rel);
      return;
    }
    if (type !== 'rename' || this.insideNested(file)) return;
    // A name added, removed or renamed: whatever was watched there is stale; a folder there now is watched anew.
    if (this.folders.has(file)) {
      for (const [folder, watcher] of this.folders)
        if (folder === file || folder.startsWith(`${file}/`)) {
          watcher.close();
          this.folders.delete(folder);
          this.closes?.remove(folder);
        }
    }
    for (const folder of this.nested)
      if (folder === file || folder.startsWith(`${file}/`)) this.nested.delete(folder);
    let folderNow = false;
    try {
      folderNow = fs.lstatSync(path.join(this.root, file)).isDirectory();
    } catch {
      // Gone: its path is remembered, which stages its removal.
    }
    if (folderNow) this.watchTree(file);
  }

  private insideNested(file: string): boolean {
    for (const folder of this.nested) if (file.startsWith(`${folder}/`)) return true;
    return false;
  }
}

/** The paths without those lying below another of them (git stages a folder's path with all it holds). */
export function outermost(paths: readonly string[]): string[] {
  const all = new Set(paths);
  return [...all].filter((file) => {
    for (let at = file.indexOf('/'); at !== -1; at = file.indexOf('/', at + 1))
      if (all.has(file.slice(0, at))) return false;
    return true;
  });
}

/** A path's device and inode ('-' for nothing there). */
function identity(file: string): string {
  try {
    const stat = fs.lstatSync(file);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return '-';
  }
}
