import type { Db } from './database.js';
import { SEARCH_TOKENIZE } from './migrations/index/004_contentless_search.js';

/**
 * The text of a search hit: message `seq` of session `sessionId` (seq 0 is the title), as the session log
 * holds it, or undefined when it cannot be read (then the row has no snippet). `lastSeq` is how far the
 * index row says the log goes (a cache key: the text at a seq does not change while the log only grows).
 * index.sqlite keeps no copy of message text (index migration 004); main/core/log supplies this, reading the
 * hit's event from its log.
 */
export type MessageText = (sessionId: string, seq: number, lastSeq: number) => string | undefined;

/** A hit of one listed session: its newest matching message's rowid and that message's text. */
export type SnippetSource = { rowid: number; text: string };

/**
 * Snippets of search hits, made by FTS5 itself: the page's hit texts are put in a TEMP fts5 table with the
 * tokenizer of message_search and `snippet()` runs the same query there, so a snippet is what FTS5 made
 * when it kept the text (matches in [brackets], 12 tokens, '…' where cut). TEMP is this connection's own
 * memory or temp file: making snippets writes nothing to index.sqlite.
 */
export class SearchSnippets {
  private prepared:
    | {
        clear: { run(): unknown };
        insert: { run(rowid: number, text: string): unknown };
        snippets: { all(query: string): { rowid: number; snippet: string | null }[] };
      }
    | undefined;

  constructor(private readonly db: Db) {}

  /** The snippet of each hit that matches `query` in its text, by rowid. */
  make(query: string, hits: readonly SnippetSource[]): Map<number, string> {
    const found = new Map<number, string>();
    if (hits.length === 0) return found;
    const statements = this.statements();
    this.db.transaction(() => {
      statements.clear.run();
      for (const hit of hits) statements.insert.run(hit.rowid, hit.text);
      for (const row of statements.snippets.all(query)) {
        if (row.snippet !== null) found.set(row.rowid, row.snippet);
      }
      statements.clear.run();
    })();
    return found;
  }

  private statements() {
    if (this.prepared) return this.prepared;
    this.db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_snippets USING fts5 (text, ${SEARCH_TOKENIZE})`,
    );
    this.prepared = {
      clear: this.db.prepare('DELETE FROM temp.search_snippets'),
      insert: this.db.prepare<[number, string]>(
        'INSERT INTO temp.search_snippets (rowid, text) VALUES (CAST(? AS INTEGER), ?)',
      ),
      snippets: this.db.prepare<[string], { rowid: number; snippet: string | null }>(
        `SELECT rowid, snippet(search_snippets, 0, '[', ']', '…', 12) AS snippet
         FROM temp.search_snippets WHERE search_snippets MATCH ?`,
      ),
    };
    return this.prepared;
  }
}

/** Turns what a person typed into an FTS5 query: every word must occur (in any form: "limits" finds "limiting"). */
export function toSearchQuery(text: string): string | undefined {
  const words = text.split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) return undefined;
  // Quoting each word makes FTS5 operators and punctuation plain text, so no input is a syntax error.
  // No prefix queries: without a prefix index a short prefix expands to thousands of terms (seconds on 1M rows).
  return words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ');
}
