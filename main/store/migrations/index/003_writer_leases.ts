import type { Migration } from '../../database.js';

/**
 * index.sqlite 3: the writer lease of each session — at most one row per session, naming the
 * process (pid on hostname) that may append to it. Removing the session removes its lease.
 */
export const migration: Migration = {
  version: 3,
  name: 'writer_leases',
  up(db) {
    db.exec(`
      CREATE TABLE writer_leases (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL,
        acquired_at TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
