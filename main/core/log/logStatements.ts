import type Database from 'better-sqlite3';
import { lazyStatements, perConnection, type Db } from '../../store/database.js';
import { SPARSE_KINDS_TERM } from '../../store/schema.js';
import type { EventRow } from './logRows.js';
import { Usage } from '../../common/events.js';
import type { UsageRecord, UsageTotals } from './logTallies.js';

/**
 * The statements of a session log's connection (SessionLog), each prepared on its first use: an open for one
 * turn uses a few of them.
 */
type S<P extends unknown[], R = unknown> = Database.Statement<P, R>;

/** Written out: the declaration cannot name the inferred type (better-sqlite3's inner namespace). */
export type LogStatements = {
  readonly lastSeq: S<[], number>;
  readonly lastKind: S<[], string>;
  readonly insert: S<[number, string, string, number | null, number | null, string, string | null]>;
  readonly range: S<[number, number, number], EventRow>;
  readonly compactionInEffect: S<[number], EventRow>;
  readonly firstOfKind: S<[string], EventRow>;
  readonly lastOfKind: S<[string], EventRow>;
  readonly lastSeqOfKind: S<[string, number], number>;
  readonly lastSeqOfUnindexedKind: S<[string, number], number>;
  readonly countOfKind: S<[string], number>;
  readonly countOfUnindexedKind: S<[string], number>;
  readonly usageTotals: S<[], UsageTotals>;
  readonly usageRows: S<[], UsageRow>;
  readonly ofKinds: S<[string], EventRow>;
  readonly ofAnyKinds: S<[string], EventRow>;
  readonly unansweredRequests: S<[], number>;
};

/** One recorded request's usage (an assistant message, or a compaction's summary requests), its JSON undecoded. */
export type UsageRow = { seq: number; kind: string; at: string; model: string | null; usage: string };

/** A usage row decoded (and checked: the row's JSON is the log's, but a usage is money). */
export function toUsageRecord(row: UsageRow): UsageRecord {
  return {
    seq: row.seq,
    kind: row.kind === 'compaction' ? 'compaction' : 'assistant_message',
    at: row.at,
    model: row.model ?? undefined,
    usage: Usage.parse(JSON.parse(row.usage)),
  };
}

/**
 * Per connection (perConnection): each turn's SessionLog on a kept connection finds the statements the last one
 * prepared (~0.2 ms a turn). One log uses a connection at a time (a kept one is taken out of the pool while
 * open), so they are never shared between two.
 */
export const logStatements = perConnection(prepareLogStatements);

function prepareLogStatements(db: Db): LogStatements {
  // Queries by kind repeat the by-kind index's WHERE term word for word, or SQLite would not use it.
  return lazyStatements({
    lastSeq: () => db.prepare<[], number>('SELECT coalesce(max(seq), 0) FROM events').pluck(),
    lastKind: () => db.prepare<[], string>('SELECT kind FROM events ORDER BY seq DESC LIMIT 1').pluck(),
    insert: () =>
      db.prepare<[number, string, string, number | null, number | null, string, string | null]>(
        'INSERT INTO events (seq, kind, at, through, request_seq, body, trace) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
    range: () =>
      db.prepare<[number, number, number], EventRow>(
        'SELECT seq, kind, at, body FROM events WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
      ),
    // The partial index events_compactions is in answer order: the first row it yields is the answer.
    compactionInEffect: () =>
      db.prepare<[number], EventRow>(`
      SELECT seq, kind, at, body FROM events INDEXED BY events_compactions
      WHERE kind = 'compaction' AND seq <> ?
      ORDER BY through DESC, seq DESC LIMIT 1`),
    firstOfKind: () =>
      db.prepare<[string], EventRow>(
        `SELECT seq, kind, at, body FROM events WHERE kind = ? AND ${SPARSE_KINDS_TERM} ORDER BY seq LIMIT 1`,
      ),
    lastOfKind: () =>
      db.prepare<[string], EventRow>(
        `SELECT seq, kind, at, body FROM events WHERE kind = ? AND ${SPARSE_KINDS_TERM} ORDER BY seq DESC LIMIT 1`,
      ),
    lastSeqOfKind: () =>
      db
        .prepare<[string, number], number>(
          `SELECT seq FROM events WHERE kind = ? AND ${SPARSE_KINDS_TERM} AND seq < ? ORDER BY seq DESC LIMIT 1`,
        )
        .pluck(),
    lastSeqOfUnindexedKind: () =>
      db
        .prepare<[string, number], number>(
          'SELECT seq FROM events WHERE kind = ? AND seq < ? ORDER BY seq DESC LIMIT 1',
        )
        .pluck(),
    countOfKind: () =>
      db
        .prepare<[string], number>(`SELECT count(*) FROM events WHERE kind = ? AND ${SPARSE_KINDS_TERM}`)
        .pluck(),
    countOfUnindexedKind: () =>
      db.prepare<[string], number>('SELECT count(*) FROM events WHERE kind = ?').pluck(),
    usageTotals: () =>
      db.prepare<[], UsageTotals>(`
      SELECT coalesce(sum(json_extract(body, '$.usage.inputTokens')), 0) AS inputTokens,
             coalesce(sum(json_extract(body, '$.usage.outputTokens')), 0) AS outputTokens,
             coalesce(sum(json_extract(body, '$.usage.cacheReadTokens')), 0) AS cacheReadTokens,
             coalesce(sum(json_extract(body, '$.usage.cacheWriteTokens')), 0) AS cacheWriteTokens,
             coalesce(sum(json_extract(body, '$.usage.reasoningTokens')), 0) AS reasoningTokens
      FROM events WHERE kind = 'assistant_message'`),
    // Reads two fields of each row, not the whole body: the spend of a long session at a turn's start.
    usageRows: () =>
      db.prepare<[], UsageRow>(`
      SELECT seq, kind, at, json_extract(body, '$.model') AS model, json_extract(body, '$.usage') AS usage
      FROM events WHERE kind IN ('assistant_message', 'compaction') AND json_extract(body, '$.usage') IS NOT NULL
      ORDER BY seq`),
    ofKinds: () =>
      db.prepare<[string], EventRow>(
        `SELECT seq, kind, at, body FROM events
       WHERE kind IN (SELECT value FROM json_each(?)) AND ${SPARSE_KINDS_TERM} ORDER BY seq`,
      ),
    ofAnyKinds: () =>
      db.prepare<[string], EventRow>(
        'SELECT seq, kind, at, body FROM events WHERE kind IN (SELECT value FROM json_each(?)) ORDER BY seq',
      ),
    // A request is answered by a granted/denied event naming it (index events_decisions).
    unansweredRequests: () =>
      db
        .prepare<[], number>(
          `SELECT r.seq FROM events r WHERE r.kind = 'approval_request' AND r.${SPARSE_KINDS_TERM}
         AND NOT EXISTS (SELECT 1 FROM events d WHERE d.request_seq = r.seq)`,
        )
        .pluck(),
  });
}
