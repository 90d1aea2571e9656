// The option and result types of SessionLog (sessionLog.ts re-exports them), kept apart so that file stays
// the log's behaviour.
import type { EventOf, SessionEvent } from '../../common/events.js';
import type { Synchronous } from '../../store/database.js';
import type { SessionIndex } from '../../store/sessionIndex.js';

/** What a new session pins at creation: everything in session_created but seq/at/kind. */
export type SessionInit = Omit<EventOf<'session_created'>, 'seq' | 'at' | 'kind'>;

/** Append outcome: conflicts are values, not exceptions (the caller decides whether to re-read). */
export type AppendResult =
  | { ok: true; events: SessionEvent[]; lastSeq: number }
  | { ok: false; conflict: { expectedLastSeq: number; actualLastSeq: number } };

/** `init` of `create`: `sessionId` may be left out (then `options.id` or a new id is used). */
export type CreateSessionInit = Omit<SessionInit, 'sessionId'> & { sessionId?: string };

/** Options of `SessionLog.create`. */
export type CreateSessionOptions = { id?: string; synchronous?: Synchronous };

/** Options of `SessionLog.open`. */
export type OpenSessionOptions = {
  write?: boolean;
  synchronous?: Synchronous;
  /** Read-only opens only: use this open index (not closed with the log), e.g. to read many logs at once. */
  sharedIndex?: SessionIndex;
};

/** Token counts summed over a session's assistant messages. */
export type UsageTotals = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of outputTokens, those spent reasoning (only where the provider reported them). */
  reasoningTokens: number;
};

/** Options of `log.read`: an inclusive seq range and a row limit. */
export type ReadOptions = { fromSeq?: number; toSeq?: number; limit?: number; validate?: boolean };
