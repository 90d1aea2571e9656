import { useCallback, useEffect, useRef, useState, type JSX } from 'react';
import type { SessionSummary } from '../../../../main/ipc/contract.js';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';
import { sessionTitle } from '../browser/SessionRow.js';
import './approvals.css';

/** Sessions read per count: the newest this many (a waiting session is recent activity, so it is among them). */
const SCANNED = 1000;
/** The first count waits this long after start so it does not compete with the first list page. */
const FIRST_DELAY_MS = 800;
const DEBOUNCE_MS = 150;

/** The sessions that wait for an approval, newest first; re-read when any session changes status. */
export function useAwaitingSessions(): SessionSummary[] {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const ticket = useRef(0);

  const refresh = useCallback(() => {
    const mine = ++ticket.current;
    call(keel().sessions.list({ limit: SCANNED })).then(
      (page) => {
        if (mine === ticket.current) {
          setSessions(page.sessions.filter((session) => session.status === 'awaiting_approval'));
        }
      },
      // A failed count keeps the previous one; the next change tries again.
      () => undefined,
    );
  }, []);

  const schedule = useCallback(
    (delay: number) => {
      clearTimeout(timer.current);
      timer.current = setTimeout(refresh, delay);
    },
    [refresh],
  );

  useEffect(() => {
    schedule(FIRST_DELAY_MS);
    return () => clearTimeout(timer.current);
  }, [schedule]);
  useSubscription('sessions.changed', () => schedule(DEBOUNCE_MS));
  useSubscription('session.status', ({ sessionId, status }) => {
    // A session that stopped waiting leaves the count at once; the list read confirms it.
    if (status !== 'awaiting_approval') {
      setSessions((previous) => previous.filter((session) => session.id !== sessionId));
    }
    schedule(DEBOUNCE_MS);
  });
  return sessions;
}

/** The window title: "(2) Keel — 2 awaiting approval" while sessions wait, else "Keel". */
export function windowTitle(waiting: number): string {
  return waiting > 0 ? `(${waiting}) Keel — ${waiting} awaiting approval` : 'Keel';
}

/**
 * The count of sessions waiting for an approval, for the sidebar header (nothing when none): it keeps the
 * window title in step and opens the newest waiting session when clicked.
 */
export function PendingApprovalsBadge({
  onOpen,
}: {
  onOpen: (sessionId: string) => void;
}): JSX.Element | null {
  const waiting = useAwaitingSessions();
  useEffect(() => {
    document.title = windowTitle(waiting.length);
  }, [waiting.length]);
  const first = waiting[0];
  if (!first) return null;
  const names = waiting.map(sessionTitle).join(', ');
  return (
    <button
      type="button"
      className="pending-approvals-badge"
      onClick={() => onOpen(first.id)}
      aria-label={`${waiting.length} ${waiting.length === 1 ? 'session awaits' : 'sessions await'} approval: open ${sessionTitle(first)}`}
      title={`Awaiting approval: ${names}`}
    >
      <span aria-hidden="true">⚠</span>
      {waiting.length}
    </button>
  );
}
