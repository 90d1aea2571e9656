import { useSyncExternalStore } from 'react';

/*
 * Discarding changes appends no event, so nothing is pushed: the view that discarded (or applied) tells the
 * others of the same session here — the new-turn warning and the Changes button re-read at once.
 */

const revisions = new Map<string, number>();
const listeners = new Set<() => void>();

/** Tells every view of `sessionId` that its checkouts changed (applied, discarded). */
export function notifyChangesChanged(sessionId: string): void {
  revisions.set(sessionId, (revisions.get(sessionId) ?? 0) + 1);
  for (const listener of listeners) listener();
}

/** A number that grows each time notifyChangesChanged(sessionId) is called. */
export function useChangesRevision(sessionId: string): number {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => revisions.get(sessionId) ?? 0,
  );
}
