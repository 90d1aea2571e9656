import type { Db } from '../../store/database.js';
import { TraceEntry } from './logRows.js';

/** The prepared `INSERT INTO trace` of a log's connection. */
type InsertTrace = {
  run(
    turn: number,
    stage: string,
    startedAt: string,
    durationMs: number | null,
    detail: string | null,
  ): unknown;
};

/**
 * Writes trace records (validated) in one transaction. Trace is observability, not state: its commit skips
 * the fsync and becomes durable with the next event.
 */
export function insertTrace(db: Db, insert: InsertTrace, entries: readonly TraceEntry[]): void {
  const parsed = entries.map((entry) => TraceEntry.parse(entry));
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  db.pragma('synchronous = NORMAL');
  try {
    db.transaction(() => {
      for (const entry of parsed) {
        insert.run(
          entry.turn,
          entry.stage,
          entry.startedAt,
          entry.durationMs ?? null,
          entry.detail === undefined ? null : JSON.stringify(entry.detail),
        );
      }
    })();
  } finally {
    db.pragma(`synchronous = ${synchronous}`);
  }
}
