import { useCallback, useEffect, useRef, useState } from 'react';
import { describeError } from './call.js';

/** The state of one query: exactly one of loading, error or data is meaningful at a time (data stays while reloading). */
export type QueryState<T> = {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  /** Runs the query again; the previous data stays visible until the new one arrives. */
  reload: () => void;
  /** Replaces the data with a value already known (e.g. what a write returned), cancelling a pending run. */
  set: (data: T) => void;
};

/** Runs `run` when `deps` change and on reload; an older answer never overwrites a newer one. */
export function useQuery<T>(run: () => Promise<T>, deps: readonly unknown[]): QueryState<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const runRef = useRef(run);
  runRef.current = run;

  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    runRef.current().then(
      (data) => {
        if (ticket === latest.current) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (ticket === latest.current) setState({ error: describeError(error), loading: false });
      },
    );
    // The caller's deps are the query's identity; `run` itself changes every render.
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const set = useCallback((data: T) => {
    latest.current++;
    setState({ data, loading: false });
  }, []);
  return { data: state.data, error: state.error, loading: state.loading, reload, set };
}

/**
 * `reload`, at most once every `ms`: for views that follow a session live, where every appended event would
 * otherwise ask again (the first call waits `ms`, later ones in that time join it). Cleared on unmount.
 */
export function useThrottledReload(reload: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      reload();
    }, ms);
  }, [reload, ms]);
}
