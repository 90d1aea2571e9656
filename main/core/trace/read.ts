import { SessionLog, SessionNotFoundError } from '../log/sessionLog.js';
import { summarizeSession } from './summary.js';
import type { SessionTraceSource, SummarizeOptions } from './types.js';
import type { SessionTraceSummary } from '../../common/traceSchema.js';

/** Reads one session's events and trace records without taking its writer lease (a running session can be read). */
export function readTraceSource(home: string, sessionId: string): SessionTraceSource {
  const log = SessionLog.open(home, sessionId, { write: false });
  try {
    return { events: log.read(), trace: log.readTrace() };
  } finally {
    log.close();
  }
}

/**
 * The trace summary of a session in `home`, its subagents (child sessions of the same home) nested up to
 * `maxDepth` levels; a child that is gone is marked `missing: 'not_found'`. Throws SessionNotFoundError for
 * an unknown `sessionId`.
 */
export function readTraceSummary(
  home: string,
  sessionId: string,
  options: Omit<SummarizeOptions, 'loadChild'> = {},
): SessionTraceSummary {
  return summarizeSession(readTraceSource(home, sessionId), {
    ...options,
    loadChild: (childId) => {
      try {
        return readTraceSource(home, childId);
      } catch (error) {
        if (error instanceof SessionNotFoundError) return undefined;
        throw error;
      }
    },
  });
}
