// Issue #36: a copy-on-write view of a folder, for the box. An overlay mount (lower: the folder, upper: what the
// session changed) held by a small process in a user + mount namespace of its own, so no privilege is needed and
// no mount ever appears on the host. A session's views: main/core/persistent/viewHolder.ts (README.md, #36).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bwrapProbeArgs } from './bwrap.js';
import { findExecutable } from './box.js';

/** The pids of the holders this process started and that still run: the only namespaces a box is entered into. */
const liveHolders = new Set<number>();

/**
 * The argv prefix that runs a program in the namespaces of holder `pid` (a box launched on a view), or undefined
 * when `pid` is no running holder of this process (a pid another process took is never entered).
 */
export function enterHolder(pid: number, nsenter = 'nsenter'): string[] | undefined {
  if (!liveHolders.has(pid)) return undefined;
  return [nsenter, `--target=${pid}`, '--user', '--mount', '--preserve-credentials', '--'];
}

/** statfs(2)'s type of an overlayfs mount (linux/magic.h). */
const OVERLAYFS_SUPER_MAGIC = 0x794c7630;

/** The folders of one view: `lower` is read, never written; `upper` and `work` are the view's own. */
export type OverlayLayers = {
  /** The folder the view starts from (the backing project folder). */
  lower: string;
  /** Where every write of the view lands (new and changed files, whiteouts for deletions). */
  upper: string;
  /** Overlayfs's scratch folder; same file system as `upper`. */
  work: string;
  /** Where the merged view appears inside the holder's namespace (an existing, empty host folder). */
  mountpoint: string;
};

/** Whether this machine can give a session a copy-on-write view, and why (said in the trace and settings). */
export type OverlaySupport = { available: boolean; reason: string };

/** What the probe needs found on the machine; tests substitute it to simulate a machine without a tool. */
export type Locate = (name: string) => string | null;

/**
 * Characters overlayfs's option string cannot carry in a path (`,` separates options, `:` lower layers, `\` and
 * `=` are escapes and keys): a layer there gets no view, said, rather than a mount of the wrong folder.
 */
const UNSAFE_LAYER_PATH = /[,:\\=\n]/;

/** Why `layers` cannot be mounted as they are, or undefined when they can. */
export function unsafeLayerPath(layers: OverlayLayers): string | undefined {
  for (const [name, value] of Object.entries(layers)) {
    if (!path.isAbsolute(value)) return `the ${name} folder is not an absolute path`;
    if (UNSAFE_LAYER_PATH.test(value))
      return `the ${name} folder's path contains one of , : \\ = (overlayfs cannot name it)`;
  }
  return undefined;
}

/**
 * The shell the holder runs as root of its own user namespace: mounts the overlay (the user-xattr flavour, the
 * one an unprivileged namespace may mount; no redirects, index or metacopy, so upper stays plain files and
 * whiteouts), says `ready`, then waits on its stdin: when Keel closes it, or dies, the holder ends and with it
 * the namespace and its mount (processes still inside keep it until they end).
 */
const HOLDER_SCRIPT = [
  'up() { mount -t overlay keel-view -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr" "$4"; }',
  'while [ $# -ge 4 ]; do up "$1" "$2" "$3" "$4" || exit 97; shift 4; done',
  'echo ready',
  // Keel's requests, one field a line (no layer path holds a newline): `up` and its four folders mounts one view
  // more, `down` and a mount point takes one down (detached; a process still inside keeps its old view).
  'while IFS= read -r op; do',
  '  case "$op" in',
  '    up) IFS= read -r l; IFS= read -r u; IFS= read -r w; IFS= read -r m;',
  '        if up "$l" "$u" "$w" "$m"; then echo ok; else echo failed; fi ;;',
  '    down) IFS= read -r m; umount -l "$m" 2>/dev/null; echo ok ;;',
  '    *) echo failed ;;',
  '  esac',
  'done',
].join('\n');

/** One set of layers, or several, as a list. */
function listOf(layers: OverlayLayers | readonly OverlayLayers[]): readonly OverlayLayers[] {
  return 'lower' in layers ? [layers] : layers;
}

/**
 * The holder's argv for `layers`: started with a pipe as its stdin, it prints `ready` once the view is mounted and
 * lives until that pipe closes (its writer ended or died).
 */
export function holderArgv(layers: OverlayLayers | readonly OverlayLayers[], unshare = 'unshare'): string[] {
  const all = listOf(layers);
  return [
    unshare,
    '--user',
    '--map-root-user',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    HOLDER_SCRIPT,
    'keel-view',
    ...all.flatMap((one) => [one.lower, one.upper, one.work, one.mountpoint]),
  ];
}

/**
 * One copy-on-write view, mounted while this object's holder process lives. One holder may mount several views
 * (a session's Persistent Dirs: the box enters one namespace); `layers` is the first, `all` every one.
 */
export class OverlayView {
  /** The requests sent to the holder and not answered yet, oldest first (it answers in order). */
  private readonly waiting: Array<(answer: string) => void> = [];

  private constructor(
    readonly layers: OverlayLayers,
    private mounted: OverlayLayers[],
    private readonly holder: ChildProcess,
    /** The holder's process id: its namespaces are the view's. */
    readonly pid: number,
  ) {}

  /**
   * Mounts the view and resolves once it is up (a few milliseconds, whatever the folder's size: nothing is
   * copied). `upper` and `work` are made when missing. Throws with the holder's own words when the mount fails.
   */
  static async start(
    layers: OverlayLayers | readonly OverlayLayers[],
    options: { unshare?: string } = {},
  ): Promise<OverlayView> {
    const all = listOf(layers);
    const first = all[0];
    if (first === undefined) throw new Error('cannot mount a copy-on-write view: no layers given');
    for (const one of all) {
      const unsafe = unsafeLayerPath(one);
      if (unsafe !== undefined) throw new Error(`cannot mount a copy-on-write view: ${unsafe}`);
      fs.mkdirSync(one.upper, { recursive: true });
      fs.mkdirSync(one.work, { recursive: true });
    }
    const [file, ...args] = holderArgv(all, options.unshare);
    const holder = spawn(file as string, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const pid = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      holder.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready\n') && holder.pid !== undefined) resolve(holder.pid);
      });
      holder.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      holder.on('error', (error) => reject(new Error(`cannot start the view's holder: ${error.message}`)));
      holder.on('exit', (code, signal) =>
        reject(
          new Error(
            `the copy-on-write view did not mount (${signal ?? `exit ${code}`}): ${stderr.trim() || 'no message'}`,
          ),
        ),
      );
    });
    // Keel may exit with the view up: the holder then sees its stdin close and ends.
    holder.unref();
    for (const stream of [holder.stdin, holder.stdout, holder.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    const view = new OverlayView(first, [...all], holder, pid);
    liveHolders.add(pid);
    holder.once('exit', () => liveHolders.delete(pid));
    let pending = '';
    holder.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
        const line = pending.slice(0, at);
        pending = pending.slice(at + 1);
        if (line !== 'ready') view.waiting.shift()?.(line);
      }
    });
    holder.on('exit', () => {
      for (const answer of view.waiting.splice(0)) answer('exited');
    });
    return view;
  }

  /** Every view this holder has mounted now. */
  get all(): readonly OverlayLayers[] {
    return this.mounted;
  }

  /**
   * Mounts one view more in this holder's namespace (the same pid, so paths through its root stay valid). Throws
   * when the holder cannot (its answer) or has ended.
   */
  async up(layers: OverlayLayers): Promise<void> {
    const unsafe = unsafeLayerPath(layers);
    if (unsafe !== undefined) throw new Error(`cannot mount a copy-on-write view: ${unsafe}`);
    fs.mkdirSync(layers.upper, { recursive: true });
    fs.mkdirSync(layers.work, { recursive: true });
    const answer = await this.request(['up', layers.lower, layers.upper, layers.work, layers.mountpoint]);
    if (answer !== 'ok')
      throw new Error(`the copy-on-write view at ${layers.mountpoint} did not mount (${answer})`);
    this.mounted = [...this.mounted.filter((one) => one.mountpoint !== layers.mountpoint), layers];
  }

  /**
   * Takes the view at `mountpoint` down (its layers may then be cleared and it mounted again with `up`: a reset that
   * keeps the holder). A process still inside keeps its old view until it ends.
   */
  async down(mountpoint: string): Promise<void> {
    if (!this.running) return;
    await this.request(['down', mountpoint]);
    this.mounted = this.mounted.filter((one) => one.mountpoint !== mountpoint);
  }

  private request(lines: readonly string[]): Promise<string> {
    if (!this.running) return Promise.resolve('exited');
    const stdout = this.holder.stdout as unknown as { ref?: () => void; unref?: () => void } | null;
    // Keel waits for the answer: the pipe keeps the process alive meanwhile, and no longer.
    stdout?.ref?.();
    const answered = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.holder.stdin?.write(lines.map((line) => `${line}\n`).join(''));
    return answered.finally(() => {
      if (this.waiting.length === 0) stdout?.unref?.();
    });
  }

  /**
   * The argv that runs `argv` inside the view's namespaces (where the merged folder is at `mountpoint`): the box's
   * launcher puts its bwrap behind it. Inside, the caller is root of a namespace that maps only its own user, and
   * bwrap's `--cap-drop ALL` drops that too.
   */
  enter(argv: readonly string[], nsenter = 'nsenter'): string[] {
    return [nsenter, `--target=${this.pid}`, '--user', '--mount', '--preserve-credentials', '--', ...argv];
  }

  /**
   * The host path of `logical` (a path under `mountpoint`) as the view shows it, through the holder's root. Reads
   * and writes through it reach the merged view. Not a path for realpath or for a readlink of an opened folder:
   * both answer in Keel's own namespace, where the mount point is an empty folder (viewPath.ts answers in the
   * holder's). Throws once the holder has exited.
   */
  hostPath(logical: string): string {
    // Once the holder is reaped its pid may be another process's, whose root is not the view: refuse then. Until
    // Node reaps it (this object's exit state), the pid cannot be reused and a dead holder's root fails to open.
    if (!this.running) throw new Error('the copy-on-write view has ended (its holder exited)');
    return path.join(`/proc/${this.pid}/root`, path.resolve(logical));
  }

  /**
   * True when `mountpoint` is an overlay as the holder's namespace shows it (statfs's file system type): the check
   * before Keel trusts a path through the holder, so a process that took a reused pid (its root is not the view)
   * is never read or written through.
   */
  isMounted(mountpoint: string): boolean {
    try {
      return fs.statfsSync(this.hostPath(mountpoint)).type === OVERLAYFS_SUPER_MAGIC;
    } catch {
      return false;
    }
  }

  /** The device (`major:minor`) of the overlay at `mountpoint` in the holder's namespace, or undefined. */
  deviceOf(mountpoint: string): string | undefined {
    try {
      return deviceName(fs.statSync(this.hostPath(mountpoint)).dev);
    } catch {
      return undefined;
    }
  }

  /** True while the holder runs. */
  get running(): boolean {
    return this.holder.exitCode === null && this.holder.signalCode === null;
  }

  /** Ends the holder (its stdin closed; killed after `graceMs`); resolves when it has exited. */
  async stop(graceMs = 2_000): Promise<void> {
    if (!this.running) return;
    const exited = new Promise<void>((resolve) => this.holder.once('exit', () => resolve()));
    this.holder.stdin?.end();
    const timer = setTimeout(() => this.holder.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Empties the view's own layers (`upper`, `work`), so the view equals `lower` again: a reset. The view must be
 * down. `keep` names top-level entries of upper the view placed itself (its `.git` file, viewGit.ts), kept; `carry`
 * names files, links and whole folders of upper, relative paths, moved into the emptied upper at the same place (a
 * session's build output: main/core/persistent/reset.ts), the folders on their way made again as plain folders (no opaque mark: the lower
 * folder's files show again). Each layer is renamed aside first and removed after; with entries kept or carried, a
 * fresh upper (`upper.next`) is filled first and takes upper's place by rename. A crash in between leaves an empty
 * or missing layer, or upper as it was (a view not reset yet, which the caller must not use before a call completes:
 * a checkout is made clean only after its reset finished); leftovers (`upper.next`, the layers set aside) are
 * removed by the next call, so a crash may lose carried files, never reset less.
 */
export function clearLayers(
  layers: Pick<OverlayLayers, 'upper' | 'work'>,
  keep: readonly string[] = [],
  carry: readonly string[] = [],
): void {
  const next = `${layers.upper}.next`;
  removeLayer(next);
  for (const layer of [layers.upper, layers.work]) {
    const parent = path.dirname(layer);
    for (const name of fs.existsSync(parent) ? fs.readdirSync(parent) : [])
      if (name.startsWith(`${path.basename(layer)}.cleared-`)) removeLayer(path.join(parent, name));
    if (!fs.existsSync(layer)) continue;
    const moved = layer === layers.upper && (keep.length > 0 || carry.length > 0);
    if (moved) fillNext(layer, next, keep, carry);
    const aside = `${layer}.cleared-${process.pid}-${Date.now()}`;
    fs.renameSync(layer, aside);
    if (moved) fs.renameSync(next, layer);
    else fs.mkdirSync(layer);
    removeLayer(aside);
  }
}

/** The folder prefix of layers set aside (`<parent>/aside-<pid>-<ms>/{upper,work,devs.json}`). */
const ASIDE_PREFIX = 'aside-';

/** `st_dev` as mountinfo writes it (`major:minor`, glibc's encoding of the number Node gives). */
export function deviceName(dev: number): string {
  const big = BigInt(dev);
  const major = ((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn);
  const minor = (big & 0xffn) | ((big >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

/**
 * A reset while a box still runs on the view's old mount (a background command, main/sandbox/overlayInUse.ts): the
 * layers are renamed into `<parent>/aside-<pid>-<ms>/` with the overlay instances (`devs`) still using them, and
 * fresh empty ones made, so the running box keeps a consistent (old) view and the next mount a fresh one. The
 * renames keep the layers on their file system (the mount holds them by inode, not by path). Returns the folder.
 */
export function setLayersAside(
  layers: Pick<OverlayLayers, 'upper' | 'work'>,
  devs: Iterable<string>,
): string {
  const parent = path.dirname(layers.upper);
  const aside = path.join(parent, `${ASIDE_PREFIX}${process.pid}-${Date.now()}`);
  fs.mkdirSync(aside);
  // Written first: an aside without its instances named is one a crash left before its renames (removable).
  fs.writeFileSync(path.join(aside, 'devs.json'), JSON.stringify([...devs]));
  for (const layer of [layers.upper, layers.work]) {
    if (fs.existsSync(layer)) fs.renameSync(layer, path.join(aside, path.basename(layer)));
    fs.mkdirSync(layer);
  }
  return aside;
}

/** The overlay instances (devices) the layers set aside in `parent` were set aside for. */
export function asideDevs(parent: string): Set<string> {
  const devs = new Set<string>();
  for (const name of fs.existsSync(parent) ? fs.readdirSync(parent) : []) {
    if (!name.startsWith(ASIDE_PREFIX)) continue;
    for (const dev of asideList(path.join(parent, name))) devs.add(dev);
  }
  return devs;
}

function asideList(aside: string): string[] {
  try {
    return JSON.parse(fs.readFileSync(path.join(aside, 'devs.json'), 'utf8')) as string[];
  } catch {
    return []; // No list: a crash cut the setting aside before anything was moved in.
  }
}

/**
 * Removes the layers set aside in `parent` whose overlay instances are all gone (`live`: the devices of the mounts
 * of the view's upper path alive now, overlayInUse); returns how many stay (still in use).
 */
export function removeIdleAside(parent: string, live: ReadonlySet<string>): number {
  let kept = 0;
  for (const name of fs.existsSync(parent) ? fs.readdirSync(parent) : []) {
    if (!name.startsWith(ASIDE_PREFIX)) continue;
    const aside = path.join(parent, name);
    if (asideList(aside).some((dev) => live.has(dev))) kept += 1;
    else removeLayer(aside);
  }
  return kept;
}

/** A fresh upper at `next` holding `keep`'s top-level entries and `carry`'s files of `upper`, moved by rename. */
function fillNext(upper: string, next: string, keep: readonly string[], carry: readonly string[]): void {
  fs.mkdirSync(next);
  for (const name of keep) {
    if (fs.lstatSync(path.join(upper, name), { throwIfNoEntry: false }) === undefined) continue;
    fs.renameSync(path.join(upper, name), path.join(next, name));
  }
  for (const rel of carry) {
    const parts = rel.split('/');
    if (
      parts.some((part) => part === '' || part === '.' || part === '..') ||
      keep.includes(parts[0] as string)
    )
      continue;
    const from = path.join(upper, ...parts);
    const stat = fs.lstatSync(from, { throwIfNoEntry: false });
    if (stat === undefined || !(stat.isFile() || stat.isSymbolicLink() || stat.isDirectory())) continue;
    // Each folder on the way is a real folder of upper (no link followed) made again in next with its mode.
    let source = upper;
    let target = next;
    let folders = true;
    for (const part of parts.slice(0, -1)) {
      source = path.join(source, part);
      target = path.join(target, part);
      const folder = fs.lstatSync(source, { throwIfNoEntry: false });
      if (folder?.isDirectory() !== true) {
        folders = false;
        break;
      }
      if (fs.lstatSync(target, { throwIfNoEntry: false }) === undefined)
        fs.mkdirSync(target, (folder.mode & 0o7777) | 0o700);
    }
    if (folders) fs.renameSync(from, path.join(next, ...parts));
  }
}

/** Removes a layer folder or entry; overlayfs leaves `work/work` with mode 000, which its owner may open again. */
function removeLayer(folder: string): void {
  const open = (dir: string): void => {
    if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) return;
    try {
      fs.chmodSync(dir, 0o700);
      for (const entry of fs.readdirSync(dir, { withFileTypes: true }))
        if (entry.isDirectory()) open(path.join(dir, entry.name));
    } catch {
      // Removal below says what could not go.
    }
  };
  open(folder);
  fs.rmSync(folder, { recursive: true, force: true });
}

/**
 * Probes whether a copy-on-write view works here, in `scratch` (a folder on the file system the views' upper
 * layers will use): Linux, `unshare` and `nsenter` found, an overlay mounted in an unprivileged user namespace,
 * a write landing in upper only, a deletion leaving a whiteout, the view readable from Keel through the holder,
 * and bwrap starting inside the namespace when it is installed. Never throws: the answer says why not.
 */
export async function probeOverlay(
  scratch: string,
  options: { platform?: NodeJS.Platform; locate?: Locate } = {},
): Promise<OverlaySupport> {
  const platform = options.platform ?? process.platform;
  const locate = options.locate ?? findExecutable;
  if (platform !== 'linux')
    return { available: false, reason: `overlayfs is a Linux file system; ${platform} gets full copies` };
  const unshare = locate('unshare');
  const nsenter = locate('nsenter');
  if (unshare === null || nsenter === null)
    return { available: false, reason: 'util-linux `unshare` / `nsenter` are not installed' };
  const root = fs.mkdtempSync(path.join(scratch, 'overlay-probe-'));
  const layers: OverlayLayers = {
    lower: path.join(root, 'lower'),
    upper: path.join(root, 'upper'),
    work: path.join(root, 'work'),
    mountpoint: path.join(root, 'view'),
  };
  let view: OverlayView | undefined;
  try {
    const unsafe = unsafeLayerPath(layers);
    if (unsafe !== undefined) return { available: false, reason: unsafe };
    fs.mkdirSync(layers.lower);
    fs.mkdirSync(layers.mountpoint);
    fs.writeFileSync(path.join(layers.lower, 'kept'), 'lower\n');
    fs.writeFileSync(path.join(layers.lower, 'gone'), 'lower\n');
    view = await OverlayView.start(layers, { unshare });
    fs.writeFileSync(view.hostPath(path.join(layers.mountpoint, 'kept')), 'view\n');
    fs.rmSync(view.hostPath(path.join(layers.mountpoint, 'gone')));
    const lowerIntact =
      fs.readFileSync(path.join(layers.lower, 'kept'), 'utf8') === 'lower\n' &&
      fs.existsSync(path.join(layers.lower, 'gone'));
    const whiteout = fs.lstatSync(path.join(layers.upper, 'gone'), { throwIfNoEntry: false });
    if (!lowerIntact || fs.readFileSync(path.join(layers.upper, 'kept'), 'utf8') !== 'view\n')
      return {
        available: false,
        reason: 'an overlay mounted but its writes did not stay in its upper layer',
      };
    if (!whiteout?.isCharacterDevice() || whiteout.rdev !== 0)
      return {
        available: false,
        reason: 'an overlay mounted but a deletion left no whiteout in its upper layer',
      };
    const bwrap = locate('bwrap');
    if (bwrap !== null) {
      const code = await exitCode(view.enter([bwrap, ...bwrapProbeArgs(), '--', 'true'], nsenter));
      if (code !== 0)
        return { available: false, reason: `bwrap did not start inside the view's namespace (exit ${code})` };
    }
    return {
      available: true,
      reason:
        'an overlay mounts in an unprivileged user namespace here (writes stay in the session, deletions are whiteouts)',
    };
  } catch (error) {
    return { available: false, reason: firstLine((error as Error).message) };
  } finally {
    await view?.stop();
    clearLayers(layers);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

function exitCode(argv: readonly string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const [file, ...args] = argv;
    if (file === undefined) return resolve(null);
    const child = spawn(file, args, { stdio: 'ignore' });
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
}
