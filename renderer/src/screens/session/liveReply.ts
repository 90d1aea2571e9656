import { useSyncExternalStore } from 'react';

/** The assistant reply being streamed right now (not yet an event); `reasoning` is its thinking so far. */
export type LiveReply = {
  turnId: string;
  text: string;
  reasoning: string;
  toolCalls: { id: string; name: string }[];
};

/**
 * Holds the streaming reply outside React state, so a delta re-renders only the live bubble (through
 * useSyncExternalStore, synchronously) instead of the whole session view: this is what keeps a
 * delta's way to the DOM under a frame.
 */
export class LiveReplyStore {
  private value: LiveReply | undefined;
  private readonly listeners = new Set<() => void>();

  /** The current reply, or undefined when nothing streams. */
  readonly get = (): LiveReply | undefined => this.value;

  /** Calls `listener` after every change; returns the function that stops it. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Replaces the reply and notifies the bubble. */
  set(next: LiveReply | undefined): void {
    if (next === this.value) return;
    this.value = next;
    for (const listener of this.listeners) listener();
  }
}

/** The streaming reply of `store`, re-rendering the caller on every delta. */
export function useLiveReply(store: LiveReplyStore): LiveReply | undefined {
  return useSyncExternalStore(store.subscribe, store.get);
}

/**
 * The reply so far from main's snapshot (sessions.open, all text up to when it answered) and the deltas this page
 * received since it subscribed (which may start before or after the snapshot ends): the snapshot, then what of
 * the deltas it does not already end with. A page opened mid-turn so shows the reply whole (issue 37).
 */
export function joinStreamed(snapshot: string, streamed: string): string {
  // One already holds the other from its start (seeded before, or deltas lagging the snapshot).
  if (snapshot.startsWith(streamed)) return snapshot;
  if (streamed.startsWith(snapshot)) return streamed;
  for (let overlap = Math.min(snapshot.length, streamed.length); overlap > 0; overlap--) {
    if (snapshot.endsWith(streamed.slice(0, overlap))) return snapshot + streamed.slice(overlap);
  }
  return snapshot + streamed;
}

/** Puts main's snapshot of the streaming reply into `store`, joined with the deltas already received. */
export function seedLiveReply(
  store: LiveReplyStore,
  snapshot: { turnId: string; text: string; reasoning: string },
): void {
  const current = store.get();
  const streamed = current?.turnId === snapshot.turnId ? current : undefined;
  store.set({
    turnId: snapshot.turnId,
    text: joinStreamed(snapshot.text, streamed?.text ?? ''),
    reasoning: joinStreamed(snapshot.reasoning, streamed?.reasoning ?? ''),
    toolCalls: streamed?.toolCalls ?? [],
  });
}
