import path from 'node:path';
import { asDiskFull } from '../log/logErrors.js';
import { SessionLockedError, SessionLog, type LogCache } from '../log/sessionLog.js';

/** Thrown when another process holds the session (runs a turn in it, stages a file): try again later. */
export class HarnessSessionBusyError extends Error {
  constructor(
    readonly sessionId: string,
    readonly holderPid: number,
  ) {
    super(`session ${sessionId} is busy in another process (pid ${holderPid}); try again when its turn ends`);
    this.name = 'HarnessSessionBusyError';
  }
}

/** Per-process queues, one per session: a staged file waits for the running turn instead of failing. */
const queues = new Map<string, Promise<void>>();

/**
 * Runs `use` with the session's log open for writing. Callers in this process queue (one at a time per
 * session); another process holding the writer lease is a HarnessSessionBusyError. The log is closed, and
 * the lease released, when `use` settles. With a `cache` (a long-lived host's), the log's projection outlives it.
 */
export async function withWritableSession<T>(
  home: string,
  id: string,
  use: (log: SessionLog) => Promise<T>,
  options: { cache?: LogCache } = {},
): Promise<T> {
  const key = `${home}\0${id}`;
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  await previous;
  try {
    let log: SessionLog;
    try {
      log = SessionLog.open(home, id, { write: true, ...(options.cache ? { cache: options.cache } : {}) });
    } catch (error) {
      if (error instanceof SessionLockedError) throw new HarnessSessionBusyError(id, error.holderPid);
      throw error;
    }
    let result: T;
    try {
      result = await use(log);
    } catch (error) {
      // What failed is the news: a close that fails too (a full disk refusing the index) must not replace it.
      try {
        log.close();
      } catch {
        // The lease of a process that ends is taken over; the index row is caught up by the next open.
      }
      throw error;
    }
    try {
      log.close();
    } catch (error) {
      // Closing writes only the index (status, lease): the events are in the log already.
      throw asDiskFull(error, path.join(home, 'index.sqlite'), { sessionId: id, stage: 'append', kinds: [] });
    }
    return result;
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}
