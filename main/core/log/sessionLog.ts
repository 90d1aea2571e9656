import type { EventOf, NewEvent, SessionEvent } from './events.js';
import type { ProjectionView } from '../projection/types.js';

/** What a new session pins at creation: everything in session_created but seq/at/kind. */
export type SessionInit = Omit<EventOf<'session_created'>, 'seq' | 'at' | 'kind'>;

/** Append outcome: conflicts are values, not exceptions (the caller decides whether to re-read). */
export type AppendResult =
  | { ok: true; events: SessionEvent[]; lastSeq: number }
  | { ok: false; conflict: { expectedLastSeq: number; actualLastSeq: number } };

/** Thrown when another live process holds the session's writer lease. */
export class SessionLockedError extends Error {
  constructor(
    readonly sessionId: string,
    readonly holderPid: number,
  ) {
    super(`session ${sessionId} is open for writing in another process (pid ${holderPid})`);
    this.name = 'SessionLockedError';
  }
}

/** Thrown when a session id is not in the home. */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`no session ${sessionId}`);
    this.name = 'SessionNotFoundError';
  }
}

/*
 * API contract of the per-session log (implemented in sessionLog.ts; see main/core/log/README.md):
 *
 *   SessionLog.create(home, init, { id?, synchronous? }): SessionLog           takes the lease, appends session_created, indexes it
 *   SessionLog.open(home, id, { write?: boolean, synchronous? }): SessionLog   write=true takes the lease (SessionLockedError)
 *   SessionLog.importEvents(home, events, { id? }): string                     one transaction; nothing written on failure; returns id
 *   log.id, log.dir (sessions/<id>), log.artifactsDir
 *   log.append(events: NewEvent | NewEvent[], { expectedLastSeq? }): AppendResult   atomic; updates index.sqlite (status, counts, FTS)
 *   log.lastSeq(): number
 *   log.read({ fromSeq?, toSeq?, limit? }): SessionEvent[]                    validated with zod
 *   log.projectionView({ withoutCompaction?: number }): ProjectionView         O(events after the compaction in effect)
 *   log.close(): void                                                          releases the lease
 */
export type { NewEvent, ProjectionView };
