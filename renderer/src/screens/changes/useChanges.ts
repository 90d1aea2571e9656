import { useCallback, useEffect, useRef, useSyncExternalStore } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery, type QueryState } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { useChangesRevision } from './changesBus.js';

/** The uncommitted changes of a session's checkouts (persistent.diff). */
export type Uncommitted = ChannelOutput<'persistent.diff'>;
/** What each turn committed (persistent.history). */
export type CommitHistory = ChannelOutput<'persistent.history'>;

/** Events after which the checkouts may differ: a tool wrote, or a commit landed. */
const CHANGING_KINDS = new Set(['tool_result', 'persistent_commit']);
const COMMIT_KINDS = new Set(['persistent_commit']);
const DEBOUNCE_MS = 250;
/**
 * A read this recent is reused when another view of the session mounts (opening Changes from the header):
 * mounted views keep it current through the events that change checkouts, and a diff of a big file
 * should not wait for git to be asked again.
 */
const FRESH_MS = 5_000;
const RETRY_DELAYS_MS = [200, 600];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a checkout read, retrying twice on failure: reading a checkout's status runs git, and two reads of
 * the same checkout at once can collide on its index lock (the second fails; a moment later it succeeds).
 */
export async function readCheckout<T>(read: () => Promise<T>): Promise<T> {
  for (const delay of RETRY_DELAYS_MS) {
    try {
      return await read();
    } catch {
      await sleep(delay);
    }
  }
  return read();
}

type Entry = {
  data?: Uncommitted;
  /** When data was last read, and at which changes revision (an apply or discard in this window). */
  readAt?: number;
  revision?: number;
  error?: string;
  inFlight: boolean;
  again: boolean;
  timer?: ReturnType<typeof setTimeout>;
  listeners: Set<() => void>;
};

// One read per session at a time, shared by every view of it (the header count, the warning, the list).
const entries = new Map<string, Entry>();

function entryOf(sessionId: string): Entry {
  let entry = entries.get(sessionId);
  if (!entry) {
    entry = { inFlight: false, again: false, listeners: new Set() };
    entries.set(sessionId, entry);
  }
  return entry;
}

function refresh(sessionId: string, revision?: number): void {
  const entry = entryOf(sessionId);
  if (entry.inFlight) {
    entry.again = true;
    return;
  }
  entry.inFlight = true;
  readCheckout(() => call(keel().persistent.diff({ sessionId })))
    .then(
      (data) => {
        // The same answer keeps the same object, so views that key work on it (a file's diff) do not redo it.
        if (entry.data === undefined || JSON.stringify(entry.data) !== JSON.stringify(data))
          entry.data = data;
        entry.error = undefined;
        entry.readAt = Date.now();
        if (revision !== undefined) entry.revision = revision;
      },
      (error: unknown) => {
        entry.error = describeError(error);
      },
    )
    .finally(() => {
      entry.inFlight = false;
      for (const listener of entry.listeners) listener();
      if (entry.again) {
        entry.again = false;
        refresh(sessionId);
      }
    });
}

function schedule(sessionId: string, delay = DEBOUNCE_MS, revision?: number): void {
  const entry = entryOf(sessionId);
  clearTimeout(entry.timer);
  entry.timer = setTimeout(() => refresh(sessionId, revision), delay);
}

/** True when the entry holds an answer read at this revision within FRESH_MS and no read is due. */
function isFresh(entry: Entry, revision: number): boolean {
  return (
    entry.data !== undefined &&
    entry.error === undefined &&
    entry.revision === revision &&
    entry.readAt !== undefined &&
    Date.now() - entry.readAt < FRESH_MS
  );
}

/** Schedules `reload` (debounced) whenever something may have changed the session's checkouts. */
function useReloadOnChange(sessionId: string, reload: () => void, kinds: ReadonlySet<string>): void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const later = () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, DEBOUNCE_MS);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (id === sessionId && kinds.has(event.kind)) later();
  });
  // A turn ended (auto dirs were committed) or started (checkouts were reset).
  useSubscription('session.status', ({ sessionId: id }) => {
    if (id === sessionId) later();
  });
}

/** The shared read of a session's uncommitted changes: its latest answer (or error) and a way to re-read. */
export type UncommittedState = {
  data: Uncommitted | undefined;
  error: string | undefined;
  reload: () => void;
};

const NO_CHECKOUTS: UncommittedState = {
  data: { hasCheckouts: false, dirs: [], newTurnWarning: null },
  error: undefined,
  reload: () => undefined,
};

/**
 * The session's uncommitted checkout changes, kept current and shared by every caller: re-read after tool
 * results, commits, turn starts and ends, and an apply or discard anywhere in this window (one read at a
 * time per session). Asks nothing when `enabled` is false (a session without checkouts).
 */
export function useUncommitted(sessionId: string, enabled: boolean): UncommittedState {
  const revision = useChangesRevision(sessionId);
  const subscribe = useCallback(
    (listener: () => void) => {
      const entry = entryOf(sessionId);
      entry.listeners.add(listener);
      return () => entry.listeners.delete(listener);
    },
    [sessionId],
  );
  const snapshot = useSyncExternalStore(subscribe, () => {
    const entry = entryOf(sessionId);
    return entry.error !== undefined ? entry.error : entry.data;
  });
  useEffect(() => {
    if (enabled && !isFresh(entryOf(sessionId), revision)) schedule(sessionId, 0, revision);
  }, [sessionId, enabled, revision]);
  const reload = useCallback(() => schedule(sessionId, 0), [sessionId]);
  useReloadOnChange(sessionId, () => enabled && schedule(sessionId), CHANGING_KINDS);
  if (!enabled) return NO_CHECKOUTS;
  return typeof snapshot === 'string'
    ? { data: entryOf(sessionId).data, error: snapshot, reload }
    : { data: snapshot, error: undefined, reload };
}

/** What each turn of the session committed, re-read when a commit lands or the checkouts change. */
export function useCommitHistory(sessionId: string): QueryState<CommitHistory> {
  const revision = useChangesRevision(sessionId);
  const query = useQuery(() => call(keel().persistent.history({ sessionId })), [sessionId, revision]);
  useReloadOnChange(sessionId, query.reload, COMMIT_KINDS);
  return query;
}
