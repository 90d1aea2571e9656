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
