import type * as MonacoApi from 'monaco-editor/editor/editor.api';
import type { PerfMark } from '../../lib/perf.js';
import { isDarkTheme } from '../../lib/theme.js';
import { diffOptions } from './editorOptions.js';

/** The Monaco API type, for code that receives it from loadMonaco(). */
export type Monaco = typeof MonacoApi;

/** The session list's first rows are on screen (SessionBrowser marks it). */
const LIST_SHOWN: PerfMark = 'keel:list-rows-rendered';
/** Without a list (a first run, an empty home) the start-up prefetch waits this long instead. */
const STARTUP_FALLBACK_MS = 3000;
/** How long an idle callback may wait for idle time before it runs anyway. */
const IDLE_TIMEOUT_MS = 2000;
/** Monaco stops its worker after 5 minutes without a diff: a later prefetch warms it again. */
const REWARM_AFTER_MS = 4 * 60_000;
/** A warm-up is skipped when a view asked for Monaco this recently. */
const WANTED_SKIPS_WARM_MS = 10_000;
/** A warm-up whose diff never arrives (a broken worker) gives up after this long. */
const WARM_TIMEOUT_MS = 10_000;

/** At start-up a prefetch step waits until the user has not typed, clicked or scrolled for this long. */
const QUIET_MS = 500;

let pending: Promise<Monaco> | undefined;
let warming: Promise<void> | undefined;
let warmedAt: number | undefined;
/** When a view last asked for Monaco: its own first diff is on its way. */
let wantedAt = Number.NEGATIVE_INFINITY;
let lastInputAt = Number.NEGATIVE_INFINITY;
let trackingInput = false;

/** Notes the time of the user's last input (for the whole page: a few passive listeners). */
function trackInput(): void {
  if (trackingInput) return;
  trackingInput = true;
  const note = () => {
    lastInputAt = performance.now();
  };
  for (const type of ['pointerdown', 'keydown', 'input', 'wheel'] as const) {
    window.addEventListener(type, note, { capture: true, passive: true });
  }
}

/** Marks a moment once per page, for the browser measurements (`performance.getEntriesByName`). */
function markOnce(name: 'keel:monaco-loaded' | 'keel:monaco-warm'): void {
  if (performance.getEntriesByName(name, 'mark').length === 0) performance.mark(name);
}

/** Loads the bundled Monaco once (its chunk, workers and tokenizers); later calls share the same promise. A failed load is retried on the next call. */
export function loadMonaco(): Promise<Monaco> {
  wantedAt = performance.now();
  return importMonaco();
}

function importMonaco(): Promise<Monaco> {
  pending ??= import('./monacoBundle.js').then(
    (bundle) => {
      markOnce('keel:monaco-loaded');
      return bundle.monaco;
    },
    (error: unknown) => {
      pending = undefined;
      throw error;
    },
  );
  return pending;
}

/**
 * Loads Monaco in the browser's next idle time, then, in the idle time after, warms the path of a first
 * diff: a hidden diff editor computes a small diff, which starts the editor worker (its script fetched,
 * compiled and booted) and runs Monaco's font measurement, editor creation and rendering once. For a
 * surface that will likely show a diff soon (a session with checkouts). Does nothing while a warm-up runs
 * or a few minutes after one; returns a cancel for the steps not yet started.
 */
export function prefetchMonaco(): () => void {
  return schedulePrefetch(0);
}

/**
 * The app's start-up prefetch: prefetchMonaco(), but only once the session list shows its first rows (or
 * after 3 s when there is no list) and the user has then not typed, clicked or scrolled for half a second,
 * so first paint, the list and a search typed at once are never queued behind Monaco's 3 MB chunk.
 * Returns a cancel.
 */
export function prefetchMonacoAfterStartup(): () => void {
  trackInput();
  let cancelPrefetch: (() => void) | undefined;
  let observer: PerformanceObserver | undefined;
  const start = () => {
    observer?.disconnect();
    clearTimeout(fallback);
    cancelPrefetch ??= schedulePrefetch(QUIET_MS);
  };
  const fallback = setTimeout(start, STARTUP_FALLBACK_MS);
  if (performance.getEntriesByName(LIST_SHOWN, 'mark').length > 0) start();
  else {
    observer = new PerformanceObserver((entries) => {
      if (entries.getEntriesByName(LIST_SHOWN).length > 0) start();
    });
    observer.observe({ type: 'mark' });
  }
  return () => {
    observer?.disconnect();
    clearTimeout(fallback);
    cancelPrefetch?.();
  };
}

/** Loads, then warms; each step after `quietMs` without input (counted from this call), in idle time. */
function schedulePrefetch(quietMs: number): () => void {
  if (warming || isWarm()) return () => undefined;
  let cancelled = false;
  let idle: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const requestedAt = performance.now();
  const quietFor = () => performance.now() - Math.max(lastInputAt, requestedAt);
  const whenQuiet = (work: () => void) => {
    const wait = quietMs - quietFor();
    if (wait > 0) {
      timer = setTimeout(() => whenQuiet(work), wait);
      return;
    }
    idle = requestIdleCallback(
      () => {
        if (cancelled) return;
        // Input while this waited for idle time: wait for quiet again.
        if (quietFor() < quietMs) whenQuiet(work);
        else work();
      },
      { timeout: IDLE_TIMEOUT_MS },
    );
  };
  whenQuiet(() => {
    importMonaco().then(
      (monaco) => whenQuiet(() => void warmDiffPath(monaco)),
      () => undefined,
    );
  });
  return () => {
    cancelled = true;
    clearTimeout(timer);
    if (idle !== undefined) cancelIdleCallback(idle);
  };
}

/** Notes that a diff was just computed: Monaco's worker is up, and a prefetch soon after has nothing to warm. */
export function noteDiffComputed(): void {
  warmedAt = performance.now();
}

/** True when a diff (real or the warm-up's) was computed recently enough that Monaco's worker still runs. */
function isWarm(): boolean {
  return warmedAt !== undefined && performance.now() - warmedAt < REWARM_AFTER_MS;
}

/** Runs the warm-up once at a time; a failure is silent (the first real diff then pays for it). */
function warmDiffPath(monaco: Monaco): Promise<void> {
  // A view that asked for Monaco lately is computing its own diff (which boots the worker): a hidden one
  // now would only compete with it.
  if (isWarm() || performance.now() - wantedAt < WANTED_SKIPS_WARM_MS) return Promise.resolve();
  warming ??= computeHiddenDiff(monaco)
    .then(
      () => {
        warmedAt = performance.now();
        markOnce('keel:monaco-warm');
      },
      () => undefined,
    )
    .finally(() => {
      warming = undefined;
    });
  return warming;
}

let workerKeeper: MonacoApi.editor.ITextModel | undefined;

async function computeHiddenDiff(monaco: Monaco): Promise<void> {
  // Monaco stops its worker the moment the last model is disposed: one empty model keeps it for the
  // first real diff (its own 5-minute idle timer still stops it).
  workerKeeper ??= monaco.editor.createModel('', 'plaintext');
  const host = document.createElement('div');
  host.setAttribute('aria-hidden', 'true');
  host.style.cssText =
    'position:fixed;left:-10000px;top:0;width:640px;height:120px;visibility:hidden;pointer-events:none';
  document.body.append(host);
  const dark = isDarkTheme();
  const editor = monaco.editor.createDiffEditor(host, diffOptions('', dark, true));
  // Long enough that the worker runs the algorithm large files get (Myers past 1,700 lines in all: its
  // first run in a fresh worker is several times slower) and that an unchanged region collapses (its bar
  // and the icon font it uses are warmed too).
  const lines = Array.from({ length: 1000 }, (_, index) => `line ${index} of the warm-up`);
  const original = monaco.editor.createModel(lines.join('\n'), 'plaintext');
  const modified = monaco.editor.createModel(lines.with(750, 'a changed line').join('\n'), 'plaintext');
  let timer: ReturnType<typeof setTimeout> | undefined;
  let updated: MonacoApi.IDisposable | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      updated = editor.onDidUpdateDiff(() => resolve());
      timer = setTimeout(() => reject(new Error('no diff from the editor worker')), WARM_TIMEOUT_MS);
      editor.setModel({ original, modified });
    });
    // One frame: the diff is rendered as a real one would be.
    await new Promise((resolve) => requestAnimationFrame(resolve));
  } finally {
    clearTimeout(timer);
    updated?.dispose();
    // The editor lets go of its models before they are disposed (the reverse order logs an error).
    editor.dispose();
    original.dispose();
    modified.dispose();
    host.remove();
  }
}
