import type { Migration } from '../../database.js';

/**
 * events.sqlite 2: the session's trace — per turn, the stages it went through, when, how long and
 * with what detail (tokens, cache hits, provider timings). Observability only: the projection never
 * reads it, and it may be empty.
 */
export const migration: Migration = {
  version: 2,
  name: 'trace',
  up(db) {
    db.exec(`
      CREATE TABLE trace (
        id INTEGER PRIMARY KEY,
        turn INTEGER NOT NULL,
        stage TEXT NOT NULL,
        started_at TEXT NOT NULL,
        duration_ms REAL,
        detail TEXT CHECK (detail IS NULL OR json_valid(detail))
      ) STRICT;
      CREATE INDEX trace_by_turn ON trace (turn, id);
    `);
  },
};
