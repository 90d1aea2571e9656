import type { Migration } from '../../database.js';

/** The tokenizer of message search (also of the snippet table search makes its snippets in). */
export const SEARCH_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'";

/**
 * index.sqlite 4: message search keeps no copy of the text. The FTS5 table of 002 stored every indexed
 * message whole (its `_content` table) beside the terms: a second copy of what the session logs hold, written
 * at every turn's end, about a third of index.sqlite's bytes per step. Now it is contentless
 * (`content=''`, with `contentless_delete=1` so a rewind and a removed session still delete their rows, and
 * a rename replaces the title's): it finds rowids, and a hit's text, for its snippet, is read from the log
 * (SessionIndex's `messageText`). The terms of the old table are carried over by re-indexing its text.
 */
export const migration: Migration = {
  version: 4,
  name: 'contentless_search',
  up(db) {
    db.exec(`
      CREATE VIRTUAL TABLE message_search_terms USING fts5 (
        text, ${SEARCH_TOKENIZE}, content = '', contentless_delete = 1
      );
      INSERT INTO message_search_terms (rowid, text) SELECT rowid, text FROM message_search;
      DROP TABLE message_search;
      ALTER TABLE message_search_terms RENAME TO message_search;
    `);
  },
};
