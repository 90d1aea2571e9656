// Issue #36: the holder of a session's copy-on-write views in this process (main/sandbox/overlayView.ts). One holder
// mounts every view of a session (the box enters one namespace), started at the first use and stopped at a reset
// (a view is mounted again at every reset: a lower file replaced by rename keeps showing its old bytes while mounted).
// The views' layers live on disk (`<stateDir>/upper`, `work`); a holder is only this process's window onto them, so a
// killed Keel loses nothing a view held. One process at a time mounts a session's views (viewOwner.ts's claim,
// taken before the first mount, reset or reclaim, given up by stopViews). See README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  asideDevs,
  OverlayView,
  probeOverlay,
  removeIdleAside,
  type OverlaySupport,
  type OverlayLayers,
} from '../../sandbox/overlayView.js';
import { forgetLayeredFolders, noteLayeredFolder } from '../../sandbox/envFiles.js';
import { overlayInUse } from '../../sandbox/overlayInUse.js';
import { readState, type CheckoutContext, type CheckoutLocation, type CheckoutState } from './state.js';
import { claimViews, heldViewClaims, holdsViews, otherViewOwner, releaseViews } from './viewOwner.js';

/** Per session (its `checkouts` folder): the running holder and the mount points it mounted. */
const holders = new Map<string, OverlayView>();
/** Per session: the tail of the holder operations queued in this process (start and stop never interleave). */
const queues = new Map<string, Promise<unknown>>();

/** The layers of a view checkout: lower the backing folder, upper and work in its state folder. */
export function viewLayers(location: CheckoutLocation, state: Pick<CheckoutState, 'backing'>): OverlayLayers {
  return {
    lower: state.backing,
    upper: path.join(location.stateDir, 'upper'),
    work: path.join(location.stateDir, 'work'),
    mountpoint: location.checkout,
  };
}

/**
 * Attaches the session's holder to a view checkout's context (starting it, or starting it again with this view,
 * when needed), so its git runs in the view and Keel reads and writes it through the holder's root. Refuses a
 * holder whose mount point is not an overlay as its namespace shows it (a pid another process took). No-op for
 * other kinds.
 */
export async function attachView(context: CheckoutContext): Promise<void> {
  if (context.state.kind !== 'view') return;
  const view = await holderWith(context.location, viewLayers(context.location, context.state));
  context.view = { pid: view.pid, root: view.hostPath(context.state.checkout) };
}

/**
 * Runs `between` with the view at `location` down (a reset clears its layers there), then mounts it again in the
 * same holder when one runs in this process (its pid, and so the tools' roots through it, stay valid). Without a
 * running holder, `between` alone runs: the next use mounts the view.
 */
export async function withViewDown(context: CheckoutContext, between: () => Promise<void>): Promise<void> {
  const key = sessionKey(context.location);
  const layers = viewLayers(context.location, context.state);
  const view = await queued(key, async () => {
    // A reset changes the layers: never under another process's mount of them.
    claimViews(key);
    const running = holders.get(key);
    if (running?.running !== true) return undefined;
    await running.down(layers.mountpoint);
    return running;
  });
  await between();
  if (view === undefined) return;
  await queued(key, async () => {
    if (holders.get(key) !== view || !view.running) return;
    await view.up(layers);
    if (!view.isMounted(layers.mountpoint))
      throw new Error(
        `the copy-on-write view at ${layers.mountpoint} is not an overlay in its holder's namespace`,
      );
    recordMounted(view, layers);
  });
  armIdle(key);
}

/** Per view (its upper folder): the overlay instance (device) this process last mounted on its layers. */
const mountedDevs = new Map<string, string>();

/**
 * Records which overlay instance uses the view's layers now (a reset asks whether it is still alive), and tells the
 * .env search (sandbox/envFiles.ts) that the folders below the view's root through the holder are its layers'.
 */
function recordMounted(view: OverlayView, layers: OverlayLayers): void {
  const dev = view.deviceOf(layers.mountpoint);
  if (dev !== undefined) mountedDevs.set(layers.upper, dev);
  noteLayeredFolder({ mount: view.hostPath(layers.mountpoint), lower: layers.lower, upper: layers.upper });
}

/** Stops a holder; the .env search forgets the views seen through its root first (its pid may be reused). */
async function endHolder(view: OverlayView | undefined): Promise<void> {
  if (view === undefined) return;
  forgetLayeredFolders(`/proc/${view.pid}/root`);
  await view.stop();
}

/**
 * Whether a box still keeps the view's last mount alive (the view is down in this process's holder: a box started
 * in it, a background command, runs on): that instance's device, else undefined; `live` every instance on the
 * view's upper path (those of layers set aside too). A reset then sets the layers aside instead of emptying them
 * under the box (overlayView.ts's setLayersAside). A view this process never mounted: any live instance not
 * already set aside (boxes die with the Keel that started them, so normally none).
 */
export function mountStillUsed(layers: Pick<OverlayLayers, 'upper'>): {
  dev: string | undefined;
  live: ReadonlySet<string>;
} {
  const live = overlayInUse(layers.upper).devs;
  const known = mountedDevs.get(layers.upper);
  if (known !== undefined) return { dev: live.has(known) ? known : undefined, live };
  const aside = asideDevs(path.dirname(layers.upper));
  return { dev: [...live].find((dev) => !aside.has(dev)), live };
}

/**
 * Ends the session's holder in this process and gives up its claim on the views (viewOwner.ts), so another process
 * may mount them; the views' layers stay as they are.
 */
export async function stopViews(location: CheckoutLocation): Promise<void> {
  await stopViewsOf(sessionKey(location));
}

/** stopViews for the session whose data folder is `dataDir` (a host lets go of the session). */
export async function stopSessionViews(dataDir: string): Promise<void> {
  await stopViewsOf(path.join(dataDir, 'checkouts'));
}

async function stopViewsOf(key: string): Promise<void> {
  clearTimeout(idleTimers.get(key));
  idleTimers.delete(key);
  await queued(key, async () => {
    const view = holders.get(key);
    holders.delete(key);
    await endHolder(view);
    releaseViews(key);
  });
}

/** Per session: the turns of this process using its views now (pinViews); their holder is not idle meanwhile. */
const pins = new Map<string, number>();

/** True while a turn of this process uses the session's views (pinViews): their indexes are the turn's. */
export function viewsPinned(location: CheckoutLocation): boolean {
  return (pins.get(sessionKey(location)) ?? 0) > 0;
}

/** What runs before releaseIdleViews lets a session's views go (its `checkouts` folder): onViewsLetGo. */
let beforeLetGo: ((checkoutsDir: string) => Promise<void>) | undefined;

/**
 * Names what runs before a session's views are let go (turnCheckouts.ts: the views' indexes are thinned then). A hook,
 * not an import: what thins is a checkout job (checkout.ts), and checkout.ts imports this module.
 */
export function onViewsLetGo(hook: (checkoutsDir: string) => Promise<void>): void {
  beforeLetGo = hook;
}
/** Per session: the pending idle check (releaseIdleViews), armed whenever the views may have become idle. */
const idleTimers = new Map<string, NodeJS.Timeout>();

/**
 * How long a session's views stay mounted in this process once idle before they are let go (releaseIdleViews): a
 * long-lived host (the app, keel serve) does not keep another process (`keel run` of the session) out for longer.
 */
export const VIEW_IDLE_MS = 60_000;

/**
 * Marks the session's views in use by this process (a turn: its tools reach them through the holder's root) until
 * the returned function is called; the idle check then runs after VIEW_IDLE_MS.
 */
export function pinViews(dataDir: string): () => void {
  const key = path.join(dataDir, 'checkouts');
  pins.set(key, (pins.get(key) ?? 0) + 1);
  clearTimeout(idleTimers.get(key));
  idleTimers.delete(key);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (pins.get(key) ?? 1) - 1;
    if (left > 0) pins.set(key, left);
    else {
      pins.delete(key);
      armIdle(key);
    }
  };
}

/** Schedules the idle check of a session whose views this process mounts or claims (unref'd: never keeps Keel up). */
function armIdle(key: string): void {
  if ((pins.get(key) ?? 0) > 0 || (!holders.has(key) && !holdsViews(key))) return;
  clearTimeout(idleTimers.get(key));
  const timer = setTimeout(() => {
    idleTimers.delete(key);
    void releaseIdleViews(key).catch(() => undefined);
  }, VIEW_IDLE_MS);
  timer.unref();
  idleTimers.set(key, timer);
}

/**
 * Lets the session's views go when nothing of this process uses them: no turn (pinViews) and no box on any of its
 * mounts (a terminal, a background command, a hook or command still running: overlayInUse, which sees a box's own
 * mount namespace). Then the holder ends and the claim is given up, so another process may mount them; the next
 * use here mounts them again. `key` is the session's data folder or its `checkouts` folder. True when let go;
 * false when still used (checked again after VIEW_IDLE_MS).
 */
export async function releaseIdleViews(key: string): Promise<boolean> {
  const checkoutsDir = path.basename(key) === 'checkouts' ? key : path.join(key, 'checkouts');
  if ((pins.get(checkoutsDir) ?? 0) > 0) {
    armIdle(checkoutsDir);
    return false;
  }
  // A session with no view (copies, or no checkout at all) has nothing to let go: nothing is claimed or written.
  if (!holders.has(checkoutsDir) && !holdsViews(checkoutsDir) && sessionViews(checkoutsDir).length === 0)
    return true;
  // The views' git indexes go before the views do (thin.ts: a view keeps them between the turns of a session in use,
  // so the next reset's snapshot starts from them). Under the claim (another process mounting the views meanwhile
  // would have its fresh indexes removed); outside the holder's queue, since a thin is a checkout job, and a
  // checkout job may be waiting on that queue (its mount).
  if (beforeLetGo !== undefined && otherViewOwner(checkoutsDir) === undefined) {
    claimViews(checkoutsDir);
    await beforeLetGo(checkoutsDir).catch(() => undefined);
  }
  const released = await queued(checkoutsDir, async () => {
    if ((pins.get(checkoutsDir) ?? 0) > 0) return false;
    const view = holders.get(checkoutsDir);
    const holderPid = view?.running === true ? view.pid : undefined;
    // Every view of the session on disk, not only those mounted now: a box of an earlier holder counts too.
    for (const layers of sessionViews(checkoutsDir))
      if (overlayInUse(layers.upper, holderPid).devs.size > 0) return false;
    holders.delete(checkoutsDir);
    await endHolder(view);
    releaseViews(checkoutsDir);
    return true;
  });
  if (!released) armIdle(checkoutsDir);
  return released;
}

/**
 * Removes the layers a reset set aside (overlayView.ts's setLayersAside) that no mount uses any more: `keel gc`'s
 * share of that work, besides the next reset. Only while no other live process holds the session's views (a reset
 * there may be setting layers aside right now); the caller holds the session's writer lease (no reset here).
 */
export function sweepAsideLayers(location: CheckoutLocation): void {
  const state = readState(location.stateDir);
  if (state?.kind !== 'view' || otherViewOwner(sessionKey(location)) !== undefined) return;
  removeIdleAside(location.stateDir, overlayInUse(viewLayers(location, state).upper).devs);
}

/**
 * True when a box of the session (a terminal, a background command, a hook still running) sees this view's overlay:
 * a process other than this process's holder holds a mount of its upper layer. A thin (thin.ts) waits for it: git in
 * that box may be reading the view's index.
 */
export function boxesOnView(location: CheckoutLocation, state: Pick<CheckoutState, 'backing'>): boolean {
  const view = holders.get(path.dirname(location.stateDir));
  const holderPid = view?.running === true ? view.pid : undefined;
  return overlayInUse(viewLayers(location, state).upper, holderPid).devs.size > 0;
}

/** Why a session's views may not be reclaimed now, or undefined (withViewsReleased). */
export type ViewsBusy = { busy: string };

/**
 * Runs `use` (a reclaim: the layers are removed) with the session's views mounted by no one: refused (the reason
 * returned, `use` not run) when another live process holds the claim, or when a box still runs on a mount of one
 * of `uppers` (a terminal, a background command: this process's or a holder another process left); else this
 * process's holder is stopped, the claim taken for the time of `use` and given up after.
 */
export async function withViewsReleased<T>(
  checkoutsDir: string,
  uppers: readonly string[],
  use: () => T | Promise<T>,
): Promise<{ value: T } | ViewsBusy> {
  return queued(checkoutsDir, async () => {
    const other = otherViewOwner(checkoutsDir);
    if (other !== undefined) return { busy: `its files are in use by ${other.what} (pid ${other.pid})` };
    const running = holders.get(checkoutsDir);
    const holderPid = running?.running === true ? running.pid : undefined;
    for (const upper of uppers) {
      if (overlayInUse(upper, holderPid).devs.size > 0)
        return { busy: 'a terminal or background command still runs in its files' };
    }
    claimViews(checkoutsDir);
    holders.delete(checkoutsDir);
    try {
      await endHolder(running);
      return { value: await use() };
    } finally {
      releaseViews(checkoutsDir);
    }
  });
}

/**
 * The running holder of the session whose data folder is `dataDir`, when it mounts the view at `checkout`: what a
 * box is entered into and the tools' roots go through. Undefined when none runs here (a turn mounts them first).
 */
export function runningView(dataDir: string, checkout: string): OverlayView | undefined {
  const view = holders.get(path.join(dataDir, 'checkouts'));
  if (view === undefined || !view.running) return undefined;
  if (!view.all.some((layers) => layers.mountpoint === checkout)) return undefined;
  return view.isMounted(checkout) ? view : undefined;
}

/** Ends every holder this process started (tests; Keel's exit ends them anyway: their stdin closes). */
export async function stopAllViews(): Promise<void> {
  for (const timer of idleTimers.values()) clearTimeout(timer);
  idleTimers.clear();
  const all = [...holders.values()];
  holders.clear();
  await Promise.all(all.map((view) => endHolder(view)));
  for (const key of heldViewClaims()) releaseViews(key);
}

/** The `checkouts.kind` setting: a full copy, a copy-on-write view where the machine can, or Keel's choice. */
export type CheckoutKindSetting = 'auto' | 'copy' | 'view';

/**
 * What `auto` chooses: a copy-on-write view where the machine can mount one (the probe), else a full copy. The view
 * passes every checkout flow (commit, reset, revert, rewind, fork, crash recovery, the box): the whole suite runs with
 * it forced (`KEEL_CHECKOUT_KIND=view`), see README.md (#36).
 */
export const AUTO_CHECKOUT_KIND: 'copy' | 'view' = 'view';

/**
 * Asked for a copy-on-write view: the machine's answer (the probe) decides; `reason` is its sentence, said in the
 * `checkout` trace record either way.
 */
export type ViewChoice = { reason: string; available: boolean };

/**
 * Whether a new checkout is asked to be a view: `KEEL_CHECKOUT_KIND` (copy, view, auto: tests and benchmarks run the
 * checkout suites with the view forced) over the setting; `auto` is AUTO_CHECKOUT_KIND. Undefined for a full copy;
 * else the machine's answer, probed in `scratch` once per process.
 */
export async function viewChoiceFor(
  setting: CheckoutKindSetting | undefined,
  scratch: string,
  cacheFile?: string,
): Promise<ViewChoice | undefined> {
  const forced = process.env['KEEL_CHECKOUT_KIND'];
  const asked = forced === 'copy' || forced === 'view' || forced === 'auto' ? forced : (setting ?? 'auto');
  const kind = asked === 'auto' ? AUTO_CHECKOUT_KIND : asked;
  if (kind === 'copy') return undefined;
  return viewSupport(scratch, cacheFile);
}

let probed: Promise<OverlaySupport> | undefined;

/** How long a probe's answer kept in the home holds (for the same kernel): a day. */
const PROBE_CACHE_MS = 24 * 60 * 60 * 1000;

/**
 * Whether this machine can give a checkout a copy-on-write view (probed once per process, in `scratch`, a folder
 * on the file system the views' layers use), and why: said in the `checkout` trace record. With `cacheFile` (in
 * the Keel home) the answer is kept for a day for the same kernel, so each `keel run` does not mount a test
 * overlay and start bwrap again (60-140 ms measured).
 */
export function viewSupport(scratch: string, cacheFile?: string): Promise<OverlaySupport> {
  const cached = cacheFile === undefined ? undefined : readProbeCache(cacheFile);
  if (cached !== undefined) return Promise.resolve(cached);
  if (probed === undefined) {
    fs.mkdirSync(scratch, { recursive: true });
    probed = probeOverlay(scratch).then((answer) => {
      if (cacheFile !== undefined) writeProbeCache(cacheFile, answer);
      return answer;
    });
  }
  return probed;
}

function readProbeCache(file: string): OverlaySupport | undefined {
  try {
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<
      OverlaySupport & { kernel: string; at: number }
    >;
    if (kept.kernel !== `${process.platform} ${os.release()}` || typeof kept.at !== 'number')
      return undefined;
    if (Date.now() - kept.at > PROBE_CACHE_MS || typeof kept.available !== 'boolean') return undefined;
    return { available: kept.available, reason: String(kept.reason) };
  } catch {
    return undefined;
  }
}

function writeProbeCache(file: string, answer: OverlaySupport): void {
  try {
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(
      temp,
      JSON.stringify({ ...answer, kernel: `${process.platform} ${os.release()}`, at: Date.now() }),
    );
    fs.renameSync(temp, file);
  } catch {
    // A cache only: the next process probes again.
  }
}

async function holderWith(location: CheckoutLocation, layers: OverlayLayers): Promise<OverlayView> {
  const key = sessionKey(location);
  const holder = await queued(key, async () => {
    // Before any mount of the session's views (a second process's overlay on the same upper is undefined).
    claimViews(key);
    const running = holders.get(key);
    if (running?.running === true) {
      if (running.all.some((one) => sameLayers(one, layers)) && running.isMounted(layers.mountpoint))
        return running;
      // Another view of the session, or this one taken down: mounted in the same holder.
      if (!running.all.some((one) => one.mountpoint === layers.mountpoint)) {
        await running.up(layers);
        if (running.isMounted(layers.mountpoint)) {
          recordMounted(running, layers);
          return running;
        }
      }
    }
    holders.delete(key);
    await endHolder(running);
    const others = sessionViews(key).filter((one) => one.mountpoint !== layers.mountpoint);
    const view = await OverlayView.start([layers, ...others]);
    if (!view.isMounted(layers.mountpoint)) {
      await endHolder(view);
      throw new Error(
        `the copy-on-write view at ${layers.mountpoint} is not an overlay in its holder's namespace`,
      );
    }
    for (const one of view.all) recordMounted(view, one);
    holders.set(key, view);
    return view;
  });
  // A mount outside a turn (a terminal, a preview, a hook, Keel's file reads) is let go once idle.
  armIdle(key);
  return holder;
}

/** The other views of the session on disk (kind `view`, their mount point a folder), to mount in the same holder. */
function sessionViews(checkoutsDir: string): OverlayLayers[] {
  let names: string[];
  try {
    names = fs.readdirSync(checkoutsDir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const stateDir = path.join(checkoutsDir, name);
    const state = readState(stateDir);
    if (state?.kind !== 'view') return [];
    if (fs.lstatSync(state.checkout, { throwIfNoEntry: false })?.isDirectory() !== true) return [];
    return [viewLayers({ stateDir, checkout: state.checkout, workspaceRoot: '', locksRoot: '' }, state)];
  });
}

function sameLayers(a: OverlayLayers, b: OverlayLayers): boolean {
  return a.lower === b.lower && a.upper === b.upper && a.work === b.work && a.mountpoint === b.mountpoint;
}

function sessionKey(location: CheckoutLocation): string {
  return path.dirname(location.stateDir);
}

async function queued<T>(key: string, operation: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(operation, operation);
  const tail = run.catch(() => undefined);
  queues.set(key, tail);
  try {
    return await run;
  } finally {
    if (queues.get(key) === tail) queues.delete(key);
  }
}
