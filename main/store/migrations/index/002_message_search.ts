import type { Migration } from '../../database.js';

/**
 * index.sqlite 2: full-text search over message text (user, assistant, interrupted partial text,
 * compaction summaries). The rowid is (sessions.num << 32) + seq, so grouping hits by session and
 * removing a session's rows are rowid arithmetic, with no join or extra column per hit.
 */
export const migration: Migration = {
  version: 2,
  name: 'message_search',
  up(db) {
    db.exec(`
      CREATE VIRTUAL TABLE message_search USING fts5 (
        text,
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
    `);
  },
};
