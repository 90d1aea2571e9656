import { lazyStatements, type Db } from '../../store/database.js';
import { TraceEntry } from './logRows.js';

/*
 * A log's trace records (observability only: the projection never reads them), stored two ways (events
 * migration 004): packed in the `trace` column of the event appended right after them (sessionLog's append
 * takes them with its events: one transaction, no page of their own), or as rows of the `trace` table when
 * no event follows (a turn's last records, a compaction's, a fork's). Read back merged in write order.
 */

/**
 * Stage names packed as their index. Append only: a stored index must keep naming the same stage. Any other
 * stage is packed as its name.
 */
const STAGES: readonly string[] = [
  'projection',
  'environment',
  'time_to_first_token',
  'stream',
  'usage',
  'request',
  'retry',
  'instructions',
];

/**
 * Packs trace records as one JSON array, `[base, item, item, …]`: `base` is a time in epoch ms and each item
 * is either a turn number (the turn of the records after it; the first item is one) or a record
 * `[stage, start, duration, detail?]` with `stage` an index into STAGES or the stage's name, `start` the ms
 * after `base` (or the startedAt string itself when it is not an ISO time that round-trips), `duration` the
 * ms or null when absent, and `detail` only when the record has one. Five records of a model request take
 * about 130 bytes instead of about 330 as rows.
 */
export function packTrace(entries: readonly TraceEntry[]): string {
  const times = entries.map((entry) => isoMs(entry.startedAt));
  const base = times.find((ms) => ms !== undefined) ?? 0;
  const items: unknown[] = [base];
  let turn: number | undefined;
  entries.forEach((entry, i) => {
    if (entry.turn !== turn) items.push((turn = entry.turn));
    const code = STAGES.indexOf(entry.stage);
    const ms = times[i];
    const record: unknown[] = [
      code === -1 ? entry.stage : code,
      ms === undefined ? entry.startedAt : ms - base,
      entry.durationMs ?? null,
    ];
    if (entry.detail !== undefined) record.push(entry.detail);
    items.push(record);
  });
  return JSON.stringify(items);
}

/** The records of `packTrace`'s output, in order; throws when `text` is not one. */
export function unpackTrace(text: string): TraceEntry[] {
  const items = JSON.parse(text) as unknown;
  if (!Array.isArray(items) || typeof items[0] !== 'number') throw new Error('not a packed trace');
  const base = items[0];
  const entries: TraceEntry[] = [];
  let turn: number | undefined;
  for (const item of items.slice(1)) {
    if (typeof item === 'number') {
      turn = item;
      continue;
    }
    if (!Array.isArray(item) || turn === undefined) throw new Error('not a packed trace record');
    const [stage, start, duration, ...rest] = item as [unknown, unknown, unknown, ...unknown[]];
    entries.push(
      TraceEntry.parse({
        turn,
        stage: typeof stage === 'number' ? STAGES[stage] : stage,
        startedAt: typeof start === 'number' ? new Date(base + start).toISOString() : start,
        ...(duration === null ? {} : { durationMs: duration }),
        ...(rest.length === 0 ? {} : { detail: rest[0] }),
      }),
    );
  }
  return entries;
}

/** Epoch ms of an ISO-8601 UTC time that `toISOString` writes back identically, else undefined. */
function isoMs(at: string): number | undefined {
  const ms = Date.parse(at);
  return Number.isFinite(ms) && new Date(ms).toISOString() === at ? ms : undefined;
}

/** A `trace` row, or an event's packed trace (`packed` set, the rest null), with its place in write order. */
type StoredTrace = {
  turn: number | null;
  stage: string | null;
  started_at: string | null;
  duration_ms: number | null;
  detail: string | null;
  packed: string | null;
};

/** The trace of one log's connection: the `trace` table's writes and the merged read. */
export class LogTrace {
  // Prepared on first use (most opens of a log write no trace row and read none).
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = lazyStatements({
      insert: () =>
        db.prepare<[number, string, string, number | null, string | null, number]>(
          'INSERT INTO trace (turn, stage, started_at, duration_ms, detail, after_seq) VALUES (?, ?, ?, ?, ?, ?)',
        ),
      // Write order: rows from before migration 004 (no after_seq) first; then by seq, an event's own trace
      // before the rows written after it (after_seq = its seq), rows in id order.
      all: () =>
        db.prepare<[], StoredTrace>(`
      SELECT turn, stage, started_at, duration_ms, detail, NULL AS packed, coalesce(after_seq, -1) AS at_seq,
             1 AS after, id FROM trace
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, trace, seq, 0, 0 FROM events WHERE trace IS NOT NULL
      ORDER BY at_seq, after, id`),
    });
  }

  /**
   * Writes records with no event to carry them (validated), as rows after `afterSeq`, in one transaction.
   * Observability, not state: the commit skips the fsync and becomes durable with the next event.
   */
  append(entries: readonly TraceEntry[], afterSeq: number): void {
    const parsed = entries.map((entry) => TraceEntry.parse(entry));
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      this.db.transaction(() => {
        for (const entry of parsed) {
          this.statements.insert.run(
            entry.turn,
            entry.stage,
            entry.startedAt,
            entry.durationMs ?? null,
            entry.detail === undefined ? null : JSON.stringify(entry.detail),
            afterSeq,
          );
        }
      })();
    } finally {
      this.db.pragma(`synchronous = ${synchronous}`);
    }
  }

  /** Every record in write order, or those of one turn (a scan: the trace has no index by turn). */
  read(options: { turn?: number } = {}): TraceEntry[] {
    const entries: TraceEntry[] = [];
    for (const row of this.statements.all.iterate()) {
      if (row.packed !== null) entries.push(...unpackTrace(row.packed));
      else entries.push(rowToTraceEntry(row));
    }
    return options.turn === undefined ? entries : entries.filter((entry) => entry.turn === options.turn);
  }
}

function rowToTraceEntry(row: StoredTrace): TraceEntry {
  return {
    turn: row.turn as number,
    stage: row.stage as string,
    startedAt: row.started_at as string,
    ...(row.duration_ms === null ? {} : { durationMs: row.duration_ms }),
    ...(row.detail === null ? {} : { detail: JSON.parse(row.detail) as unknown }),
  };
}
