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
    try {
      return await use(log);
    } finally {
      log.close();
    }
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}
