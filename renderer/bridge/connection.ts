/*
 * Issue #37: how the page's link to `keel serve` is doing, for the banner that says what to do about it
 * (renderer/src/components/ServeConnectionBanner.tsx). Written by the WebSocket bridge; no DOM, no React.
 */

/** The link as the page sees it. */
export type ServeConnection =
  /** Connected (`restored`: after a drop, so what the page shows may be stale). */
  | { kind: 'open'; restored: boolean }
  /** Dropped; reconnecting (the server answered, or was not asked yet). */
  | { kind: 'lost' }
  /** Nothing answers at the page's address: keel serve is not running there. */
  | { kind: 'unreachable'; address: string }
  /** keel serve answers but refuses this page's token (a new one was made). */
  | { kind: 'refused'; address: string };

let current: ServeConnection = { kind: 'open', restored: false };
const listeners = new Set<(state: ServeConnection) => void>();

/** The link now. */
export function serveConnection(): ServeConnection {
  return current;
}

/** Calls `listener` at each change; returns the unsubscribe. */
export function onServeConnection(listener: (state: ServeConnection) => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** Records a change (the bridge's); listeners hear only real changes. */
export function setServeConnection(next: ServeConnection): void {
  if (JSON.stringify(next) === JSON.stringify(current)) return;
  current = next;
  for (const listener of listeners) listener(next);
}
