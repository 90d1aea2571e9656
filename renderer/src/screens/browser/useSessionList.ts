import { useCallback, useEffect, useRef, useState } from 'react';
import type { SessionSummary } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';
import { markOnce } from '../../lib/perf.js';

const PAGE = 200;
const MAX_REFRESH = 1000;
/** How often a listed session's appended events re-query the list at most (its index lag changes). */
const LAG_REFRESH_MS = 1000;
/** While a listed session's index is behind, the list is re-queried this often (its turn may run elsewhere). */
const LAG_POLL_MS = 5000;

/** The loaded part of the session list and how to get more of it. */
export type SessionListState = {
  sessions: SessionSummary[];
  hasMore: boolean;
  /** True until the first page of the current query arrived. */
  loading: boolean;
  loadingMore: boolean;
  error: string | undefined;
  loadMore: () => void;
  refresh: () => void;
};

type Query = { search: string; includeArchived: boolean };

/**
 * Pages through sessions.list for one query (newest first, FTS search when `search` is not blank),
 * keeps it current from `sessions.changed` and `session.status` pushes, and never lets an answer to
 * an older query overwrite a newer one.
 */
export function useSessionList(query: Query): SessionListState {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const ticket = useRef(0);
  const loaded = useRef(0);
  const busyMore = useRef(false);
  const queryRef = useRef(query);
  queryRef.current = query;

  const fetchPage = useCallback(async (offset: number, limit: number) => {
    const { search, includeArchived } = queryRef.current;
    const trimmed = search.trim();
    return call(
      keel().sessions.list({
        limit,
        offset,
        includeArchived,
        ...(trimmed ? { search: trimmed } : {}),
      }),
    );
  }, []);

  const reloadFirst = useCallback(
    (limit: number, showLoading: boolean) => {
      const mine = ++ticket.current;
      if (showLoading) setLoading(true);
      markOnce('keel:list-requested');
      fetchPage(0, limit).then(
        (page) => {
          if (mine !== ticket.current) return;
          markOnce('keel:list-received');
          loaded.current = page.sessions.length;
          setSessions(page.sessions);
          setHasMore(page.hasMore);
          setError(undefined);
          setLoading(false);
        },
        (failure: unknown) => {
          if (mine !== ticket.current) return;
          setError(describeError(failure));
          setLoading(false);
        },
      );
    },
    [fetchPage],
  );

  useEffect(() => {
    reloadFirst(PAGE, true);
  }, [query.search, query.includeArchived, reloadFirst]);

  const loadMore = useCallback(() => {
    if (busyMore.current) return;
    busyMore.current = true;
    setLoadingMore(true);
    const mine = ticket.current;
    fetchPage(loaded.current, PAGE)
      .then(
        (page) => {
          if (mine !== ticket.current) return;
          setSessions((previous) => {
            const known = new Set(previous.map((session) => session.id));
            const next = [...previous, ...page.sessions.filter((session) => !known.has(session.id))];
            loaded.current = next.length;
            return next;
          });
          setHasMore(page.hasMore);
        },
        (failure: unknown) => {
          if (mine === ticket.current) setError(describeError(failure));
        },
      )
      .finally(() => {
        busyMore.current = false;
        setLoadingMore(false);
      });
  }, [fetchPage]);

  const refresh = useCallback(() => {
    reloadFirst(Math.min(Math.max(loaded.current, PAGE), MAX_REFRESH), false);
  }, [reloadFirst]);

  // Bursts of changes (a turn appends many events) collapse into one re-query.
  const refreshTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useSubscription('sessions.changed', () => {
    clearTimeout(refreshTimer.current);
    refreshTimer.current = setTimeout(refresh, 250);
  });
  useEffect(() => () => clearTimeout(refreshTimer.current), []);

  // A listed session's running turn appends events the index covers only at its end: the list is re-queried
  // at most once a second meanwhile, so its "updating…" mark appears and counts how far the index is behind.
  const listed = useRef<SessionSummary[]>(sessions);
  listed.current = sessions;
  const lagTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useSubscription('event.appended', ({ sessionId }) => {
    if (lagTimer.current !== undefined) return;
    if (!listed.current.some((session) => session.id === sessionId && session.status === 'running')) return;
    lagTimer.current = setTimeout(() => {
      lagTimer.current = undefined;
      refresh();
    }, LAG_REFRESH_MS);
  });
  useEffect(() => () => clearTimeout(lagTimer.current), []);
  // A turn of another process (the CLI) pushes nothing here: a mark that is shown is checked again until it clears.
  const anyBehind = sessions.some((session) => session.indexBehind !== undefined);
  useEffect(() => {
    if (!anyBehind) return undefined;
    const poll = setInterval(refresh, LAG_POLL_MS);
    return () => clearInterval(poll);
  }, [anyBehind, refresh]);

  useSubscription('session.status', ({ sessionId, status }) => {
    setSessions((previous) =>
      previous.some((session) => session.id === sessionId && session.status !== status)
        ? previous.map((session) => (session.id === sessionId ? { ...session, status } : session))
        : previous,
    );
  });

  return { sessions, hasMore, loading, loadingMore, error, loadMore, refresh };
}
