import type { SessionEvent } from '../core/log/events.js';
import { SessionLog } from '../core/log/sessionLog.js';

/** Page size for reading a whole log: bounded memory per query, few round trips. */
const PAGE = 1000;

/**
 * Opens a session's log for reading (no writer lease, so a running session can be inspected), runs
 * `use`, and closes the log whatever happens. Throws SessionNotFoundError for an unknown id.
 */
export function withSessionLog<T>(home: string, id: string, use: (log: SessionLog) => T): T {
  const log = SessionLog.open(home, id, { write: false });
  try {
    return use(log);
  } finally {
    log.close();
  }
}

/** Every event of an open log, in seq order, read page by page. */
export function readAllEvents(log: SessionLog): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (;;) {
    const page = log.read({ fromSeq: events.length + 1, limit: PAGE });
    events.push(...page);
    if (page.length < PAGE) return events;
  }
}
