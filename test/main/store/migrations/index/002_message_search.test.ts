import { describe, expect, it } from 'vitest';
import { INDEX_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, schemaNames } from '../support.js';

describe('index migration 002 message_search', () => {
  it('creates an FTS5 table and sets user_version 2', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 2);
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    expect(schemaNames(db, 'table')).toContain('message_search');
    expect(db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'message_search'").pluck().get()).toMatch(
      /fts5/i,
    );
    db.close();
  });

  it('matches word forms and accents, and groups hits by session through the rowid', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 2);
    const add = db.prepare('INSERT INTO message_search (rowid, text) VALUES ((? << 32) + ?, ?)');
    add.run(1, 2, 'add rate limiting to the API');
    add.run(1, 5, 'the limiter is in place');
    add.run(1, 6, 'nothing to see');
    add.run(7, 3, 'Café résumé');
    const hits = db
      .prepare<[string], { num: number; seq: number }>(
        'SELECT rowid >> 32 AS num, rowid & 0xffffffff AS seq FROM message_search WHERE message_search MATCH ? ORDER BY rowid',
      )
      .all('limit');
    expect(hits).toEqual([
      { num: 1, seq: 2 },
      { num: 1, seq: 5 },
    ]);
    expect(
      db
        .prepare("SELECT count(*) FROM message_search WHERE message_search MATCH 'resume cafe'")
        .pluck()
        .get(),
    ).toBe(1);
    db.close();
  });
});
