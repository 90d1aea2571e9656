import type { SessionEvent } from '../common/events.js';
import { SessionLog } from '../core/harness/index.js';

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

/** Calls `use` with the log's events in seq order, one bounded page at a time. */
export function forEachEventPage(log: SessionLog, use: (events: readonly SessionEvent[]) => void): void {
  for (let fromSeq = 1; ;) {
    const page = log.read({ fromSeq, limit: PAGE });
    const last = page[page.length - 1];
    if (last === undefined) return;
    use(page);
    if (page.length < PAGE) return;
    fromSeq = last.seq + 1;
  }
}

/**
 * Opens a session for writing (takes the writer lease: SessionLockedError if another live process holds
 * it), runs `use`, and closes the log, releasing the lease, whatever happens.
 */
export async function withWritableSession<T>(
  home: string,
  id: string,
  use: (log: SessionLog) => Promise<T> | T,
): Promise<T> {
  const log = SessionLog.open(home, id, { write: true });
  try {
    return await use(log);
  } finally {
    log.close();
  }
}
