import type { Migration } from '../../database.js';

/**
 * events.sqlite 1: the append-only event log of one session. `seq` is the primary key and must be
 * exactly the last seq + 1 (dense); UPDATE and DELETE are rejected by triggers, and so is
 * INSERT OR REPLACE (it would need a seq that already exists). `kind`, `through` (compactions) and
 * `request_seq` (approval decisions) are columns so the projection and status are index lookups;
 * `body` is the event's other fields as JSON.
 */
export const migration: Migration = {
  version: 1,
  name: 'events',
  up(db) {
    db.exec(`
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind <> ''),
        at TEXT NOT NULL,
        through INTEGER,
        request_seq INTEGER,
        body TEXT NOT NULL CHECK (json_valid(body))
      ) STRICT;
      CREATE INDEX events_by_kind ON events (kind, seq);
      CREATE INDEX events_compactions ON events (through DESC, seq DESC) WHERE kind = 'compaction';
      CREATE INDEX events_decisions ON events (request_seq) WHERE request_seq IS NOT NULL;

      CREATE TRIGGER events_seq_dense BEFORE INSERT ON events
        WHEN NEW.seq IS NOT (SELECT coalesce(max(seq), 0) + 1 FROM events)
      BEGIN
        SELECT RAISE(ABORT, 'events are append-only: seq must be the last seq + 1');
      END;
      CREATE TRIGGER events_no_update BEFORE UPDATE ON events
      BEGIN
        SELECT RAISE(ABORT, 'events are append-only: an event cannot be updated');
      END;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events
      BEGIN
        SELECT RAISE(ABORT, 'events are append-only: an event cannot be deleted');
      END;
    `);
  },
};
