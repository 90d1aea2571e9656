import { describe, expect, it } from 'vitest';
import { EVENTS_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, schemaNames } from '../support.js';

describe('events migration 002 trace', () => {
  it('adds a trace table next to the events and sets user_version 2', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 2);
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    expect(schemaNames(db, 'table')).toEqual(['events', 'trace']);
    const columns = db
      .prepare<[], { name: string }>('PRAGMA table_info(trace)')
      .all()
      .map((c) => c.name);
    expect(columns).toEqual(['id', 'turn', 'stage', 'started_at', 'duration_ms', 'detail']);
    db.close();
  });

  it('stores detail as JSON or nothing', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 2);
    const insert = db.prepare(
      "INSERT INTO trace (turn, stage, started_at, detail) VALUES (1, 'model', 't', ?)",
    );
    insert.run('{"inputTokens":12}');
    insert.run(null);
    expect(() => insert.run('{oops')).toThrow(/CHECK/);
    db.close();
  });
});
