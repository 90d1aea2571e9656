// Issue #36: the holder of a session's copy-on-write views in this process (main/sandbox/overlayView.ts). One holder
// mounts every view of a session (the box enters one namespace), started at the first use and stopped at a reset
// (a view is mounted again at every reset: a lower file replaced by rename keeps showing its old bytes while mounted).
// The views' layers live on disk (`<stateDir>/upper`, `work`); a holder is only this process's window onto them, so a
// killed Keel loses nothing a view held. See README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  OverlayView,
  probeOverlay,
  type OverlaySupport,
  type OverlayLayers,
} from '../../sandbox/overlayView.js';
import { readState, type CheckoutContext, type CheckoutLocation, type CheckoutState } from './state.js';

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
  });
}

/** Ends the session's holder in this process (a reclaim); the views' layers stay as they are. */
export async function stopViews(location: CheckoutLocation): Promise<void> {
  const key = sessionKey(location);
  await queued(key, async () => {
    const view = holders.get(key);
    holders.delete(key);
    await view?.stop();
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
  const all = [...holders.values()];
  holders.clear();
  await Promise.all(all.map((view) => view.stop()));
}

/** The `checkouts.kind` setting: a full copy, a copy-on-write view where the machine can, or Keel's choice. */
export type CheckoutKindSetting = 'auto' | 'copy' | 'view';

/**
 * What `auto` chooses. A full copy until the view passes every checkout flow (commit, reset, revert, rewind, fork,
 * crash recovery, the box) on this machine's kind: see README.md (#36) for which do.
 */
export const AUTO_CHECKOUT_KIND: 'copy' | 'view' = 'copy';

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
  return queued(key, async () => {
    const running = holders.get(key);
    if (running?.running === true) {
      if (running.all.some((one) => sameLayers(one, layers)) && running.isMounted(layers.mountpoint))
        return running;
      // Another view of the session, or this one taken down: mounted in the same holder.
      if (!running.all.some((one) => one.mountpoint === layers.mountpoint)) {
        await running.up(layers);
        if (running.isMounted(layers.mountpoint)) return running;
      }
    }
    holders.delete(key);
    await running?.stop();
    const others = sessionViews(key).filter((one) => one.mountpoint !== layers.mountpoint);
    const view = await OverlayView.start([layers, ...others]);
    if (!view.isMounted(layers.mountpoint)) {
      await view.stop();
      throw new Error(
        `the copy-on-write view at ${layers.mountpoint} is not an overlay in its holder's namespace`,
      );
    }
    holders.set(key, view);
    return view;
  });
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
