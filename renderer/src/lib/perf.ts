/**
 * Named performance marks the browser tests read (`performance.getEntriesByName`). Marks cost
 * microseconds and are kept only once per name, so they are safe to leave in production code.
 */
export type PerfMark =
  'keel:shell-rendered' | 'keel:list-requested' | 'keel:list-received' | 'keel:list-rows-rendered';

/** Records `name` the first time it happens in this page. */
export function markOnce(name: PerfMark): void {
  if (performance.getEntriesByName(name, 'mark').length === 0) performance.mark(name);
}
