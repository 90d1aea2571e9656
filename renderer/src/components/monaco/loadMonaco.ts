import type * as MonacoApi from 'monaco-editor/editor/editor.api';

/** The Monaco API type, for code that receives it from loadMonaco(). */
export type Monaco = typeof MonacoApi;

let pending: Promise<Monaco> | undefined;

/** Loads the bundled Monaco once (its chunk, workers and tokenizers); later calls share the same promise. A failed load is retried on the next call. */
export function loadMonaco(): Promise<Monaco> {
  pending ??= import('./monacoBundle.js').then(
    (bundle) => bundle.monaco,
    (error: unknown) => {
      pending = undefined;
      throw error;
    },
  );
  return pending;
}

/** Starts loading Monaco when the browser is idle (a surface that will likely show a diff is on screen); returns a cancel. */
export function prefetchMonaco(): () => void {
  if (pending) return () => undefined;
  const idle = requestIdleCallback(() => void loadMonaco().catch(() => undefined), { timeout: 2000 });
  return () => cancelIdleCallback(idle);
}
