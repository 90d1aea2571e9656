import { useEffect, useRef } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call } from '../../api/call.js';
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

const NO_CHECKOUTS: Uncommitted = { hasCheckouts: false, dirs: [], newTurnWarning: null };

/** Calls `reload` (debounced) whenever something may have changed the session's checkouts. */
function useReloadOnChange(sessionId: string, reload: () => void, kinds: ReadonlySet<string>): void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const schedule = () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, DEBOUNCE_MS);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (id === sessionId && kinds.has(event.kind)) schedule();
  });
  // A turn ended (auto dirs were committed) or started (checkouts were reset).
  useSubscription('session.status', ({ sessionId: id }) => {
    if (id === sessionId) schedule();
  });
}

/**
 * The session's uncommitted checkout changes, kept current: re-read after tool results, commits, turn
 * starts and ends, and an apply or discard anywhere in this window. Asks nothing when `enabled` is false
 * (a session without checkouts).
 */
export function useUncommitted(sessionId: string, enabled: boolean): QueryState<Uncommitted> {
  const revision = useChangesRevision(sessionId);
  const query = useQuery(
    () => (enabled ? call(keel().persistent.diff({ sessionId })) : Promise.resolve(NO_CHECKOUTS)),
    [sessionId, enabled, revision],
  );
  useReloadOnChange(sessionId, query.reload, CHANGING_KINDS);
  return query;
}

/** What each turn of the session committed, re-read when a commit lands or the checkouts change. */
export function useCommitHistory(sessionId: string): QueryState<CommitHistory> {
  const revision = useChangesRevision(sessionId);
  const query = useQuery(() => call(keel().persistent.history({ sessionId })), [sessionId, revision]);
  useReloadOnChange(sessionId, query.reload, COMMIT_KINDS);
  return query;
}
