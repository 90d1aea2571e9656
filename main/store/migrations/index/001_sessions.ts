import type { Migration } from '../../database.js';

/**
 * index.sqlite 1: one row per session, kept in step by the session log on every append, so listing
 * never opens a per-session database. `num` is a compact key for the search rowids (002); it is
 * AUTOINCREMENT so a removed session's number is never reused. The list walks an index in its
 * order (archived rows are skipped as it goes), so the first page costs O(page), not O(sessions).
 */
export const migration: Migration = {
  version: 1,
  name: 'sessions',
  up(db) {
    db.exec(`
      CREATE TABLE sessions (
        num INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        title TEXT,
        project_folder TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'idle'
          CHECK (status IN ('idle', 'running', 'awaiting_approval', 'interrupted', 'error')),
        parent_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        event_count INTEGER NOT NULL DEFAULT 0,
        last_seq INTEGER NOT NULL DEFAULT 0,
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1))
      ) STRICT;
      CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, num DESC);
      CREATE INDEX sessions_by_project ON sessions (project_folder, updated_at DESC, num DESC);
      CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
    `);
  },
};
