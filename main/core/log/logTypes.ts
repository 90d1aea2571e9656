// The option and result types of SessionLog (sessionLog.ts re-exports them), kept apart so that file stays
// the log's behaviour.
import type { EventOf, SessionEvent } from '../../common/events.js';
import type { Synchronous } from '../../store/database.js';
import type { SessionIndex } from '../../store/sessionIndex.js';
import type { LogCache } from './logFold.js';
import type { TraceEntry } from './logRows.js';

/** What a new session pins at creation: everything in session_created but seq/at/kind. */
export type SessionInit = Omit<EventOf<'session_created'>, 'seq' | 'at' | 'kind'>;

/** Append outcome: conflicts are values, not exceptions (the caller decides whether to re-read). */
export type AppendResult =
  | { ok: true; events: SessionEvent[]; lastSeq: number }
  | { ok: false; conflict: { expectedLastSeq: number; actualLastSeq: number } };

/** Options of `log.append`. */
export type AppendOptions = {
  /** Write nothing and answer a conflict unless the log ends at this seq. */
  expectedLastSeq?: number;
  /** Trace records made before these events, stored with them in the same commit (logTrace.ts). */
  trace?: readonly TraceEntry[];
  /**
   * Keep each event's own `at` (an event given one): history imported from another tool keeps its original
   * times (issue 35). Otherwise every event is stamped with the append's time.
   */
  keepTimes?: boolean;
};

/** `init` of `create`: `sessionId` may be left out (then `options.id` or a new id is used). */
export type CreateSessionInit = Omit<SessionInit, 'sessionId'> & { sessionId?: string };

/** Options of `SessionLog.create`. */
export type CreateSessionOptions = {
  id?: string;
  synchronous?: Synchronous;
  /**
   * Writes the session folder's own files (persistent.json) after session_created and before the index row:
   * a create that fails on the way (a full disk) leaves no session, never one that lacks them.
   */
  files?: (dir: string) => void;
};

/** Options of `SessionLog.importEvents`. */
export type ImportEventsOptions = {
  /** The new session's id (else a new one). */
  id?: string;
  /** As `CreateSessionOptions.files`. */
  files?: (dir: string) => void;
  /** A fork's parent log: rows 2..n are copied from it (logCopy.ts), not inserted. */
  copyFrom?: string;
  /** Every event was validated by the caller (the export rules, `checkEvents`): not parsed again. */
  validated?: boolean;
  /**
   * false: no projection snapshot now (a history import of many sessions, most never opened): the first open
   * folds the events and a writer's close keeps the snapshot. Default true: a long import opens fast at once.
   */
  snapshot?: boolean;
  /**
   * An index connection the caller keeps open across many imports (not closed here). Rows registered in it are
   * durable once it closes (its checkpoint); a power cut before loses rows `openSessionIndex` makes again from the logs.
   */
  index?: SessionIndex;
};

/** Options of `SessionLog.open`. */
export type OpenSessionOptions = {
  write?: boolean;
  synchronous?: Synchronous;
  /** Read-only opens only: use this open index (not closed with the log), e.g. to read many logs at once. */
  sharedIndex?: SessionIndex;
  /**
   * A long-lived host's cache of projections (logFold.ts): the projection and tallies this log computes
   * outlive it, so the next open of the session extends them with the new events instead of rebuilding.
   */
  cache?: LogCache;
};

/** Options of `log.read`: an inclusive seq range and a row limit. */
export type ReadOptions = { fromSeq?: number; toSeq?: number; limit?: number; validate?: boolean };

/** The newest event of a log: its seq (0 when empty) and kind. */
export type LogTail = { seq: number; kind: string | undefined };
