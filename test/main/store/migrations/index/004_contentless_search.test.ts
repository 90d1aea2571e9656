import { describe, expect, it } from 'vitest';
import { INDEX_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, schemaNames } from '../support.js';

const hits = (db: ReturnType<typeof migratedTo>, query: string) =>
  db
    .prepare<[string], { num: number; seq: number }>(
      'SELECT rowid >> 32 AS num, rowid & 0xffffffff AS seq FROM message_search WHERE message_search MATCH ? ORDER BY rowid',
    )
    .all(query);

describe('index migration 004 contentless search', () => {
  it('keeps the terms of every indexed message and no copy of its text, at user_version 4', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 3);
    const add = db.prepare('INSERT INTO message_search (rowid, text) VALUES ((? << 32) + ?, ?)');
    add.run(1, 0, 'Rate limits');
    add.run(1, 2, 'add rate limiting to the API');
    add.run(7, 3, 'Café résumé');
    INDEX_MIGRATIONS[3]!.up(db);
    db.pragma('user_version = 4');
    expect(schemaNames(db, 'table')).toContain('message_search');
    expect(schemaNames(db, 'table')).not.toContain('message_search_content');
    expect(schemaNames(db, 'table')).not.toContain('message_search_terms');
    expect(hits(db, 'limit')).toEqual([
      { num: 1, seq: 0 },
      { num: 1, seq: 2 },
    ]);
    expect(hits(db, 'resume cafe')).toEqual([{ num: 7, seq: 3 }]);
    expect(
      db.prepare('SELECT text FROM message_search WHERE rowid = (1 << 32) + 2').pluck().get(),
    ).toBeNull();
    db.close();
  });

  it('still replaces a row (a rename of the title) and deletes a rowid range (a rewind, a removed session)', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 4);
    expect(db.pragma('user_version', { simple: true })).toBe(4);
    const put = db.prepare('INSERT OR REPLACE INTO message_search (rowid, text) VALUES ((? << 32) + ?, ?)');
    put.run(1, 0, 'old title');
    put.run(1, 0, 'new name');
    put.run(1, 2, 'alpha');
    put.run(1, 3, 'beta');
    put.run(2, 2, 'alpha');
    expect(hits(db, 'old')).toEqual([]);
    expect(hits(db, 'new')).toEqual([{ num: 1, seq: 0 }]);
    db.prepare('DELETE FROM message_search WHERE rowid > (1 << 32) + 2 AND rowid < (2 << 32)').run();
    expect(hits(db, 'beta')).toEqual([]);
    expect(hits(db, 'alpha')).toEqual([
      { num: 1, seq: 2 },
      { num: 2, seq: 2 },
    ]);
    db.close();
  });
});
