import { describe, expect, it } from 'vitest';
import { EVENTS_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, queryPlan, schemaNames } from '../support.js';

function logWithTwoEvents() {
  const db = migratedTo(EVENTS_MIGRATIONS, 1);
  const insert = db.prepare('INSERT INTO events (seq, kind, at, body) VALUES (?, ?, ?, ?)');
  insert.run(1, 'session_created', 't1', '{}');
  insert.run(2, 'user_message', 't2', '{"content":"hi"}');
  return db;
}

describe('events migration 001 events', () => {
  it('creates the events table, its indexes and the append-only triggers, and sets user_version 1', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 1);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(schemaNames(db, 'table')).toEqual(['events']);
    expect(schemaNames(db, 'index')).toEqual(['events_by_kind', 'events_compactions', 'events_decisions']);
    expect(schemaNames(db, 'trigger')).toEqual(['events_no_delete', 'events_no_update', 'events_seq_dense']);
    db.close();
  });

  it('rejects UPDATE and DELETE from raw SQL, so history cannot change', () => {
    const db = logWithTwoEvents();
    expect(() => db.exec(`UPDATE events SET body = '{"content":"rewritten"}' WHERE seq = 2`)).toThrow(
      /append-only/,
    );
    expect(() => db.exec('UPDATE events SET seq = 9 WHERE seq = 2')).toThrow(/append-only/);
    expect(() => db.exec('DELETE FROM events WHERE seq = 2')).toThrow(/append-only/);
    expect(() => db.exec('DELETE FROM events')).toThrow(/append-only/);
    expect(() =>
      db.exec(`INSERT OR REPLACE INTO events (seq, kind, at, body) VALUES (1, 'user_message', 't', '{}')`),
    ).toThrow(/append-only/);
    expect(() =>
      db.exec(
        `INSERT INTO events (seq, kind, at, body) VALUES (2, 'user_message', 't', '{}')
         ON CONFLICT (seq) DO UPDATE SET body = excluded.body`,
      ),
    ).toThrow(/append-only/);
    expect(db.prepare('SELECT seq, body FROM events ORDER BY seq').all()).toEqual([
      { seq: 1, body: '{}' },
      { seq: 2, body: '{"content":"hi"}' },
    ]);
    db.close();
  });

  it('accepts only the next seq, so the log stays dense', () => {
    const db = logWithTwoEvents();
    const insert = db.prepare(
      "INSERT INTO events (seq, kind, at, body) VALUES (?, 'user_message', 't', '{}')",
    );
    expect(() => insert.run(4)).toThrow(/append-only/);
    expect(() => insert.run(null)).toThrow(/append-only/);
    insert.run(3);
    expect(db.prepare('SELECT max(seq) FROM events').pluck().get()).toBe(3);
    db.close();
  });

  it('requires the body to be JSON', () => {
    const db = logWithTwoEvents();
    expect(() =>
      db.exec("INSERT INTO events (seq, kind, at, body) VALUES (3, 'x', 't', 'not json')"),
    ).toThrow(/CHECK/);
    db.close();
  });

  it('finds the compaction in effect and the first user message by index, not by scanning the log', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 1);
    expect(
      queryPlan(
        db,
        "SELECT seq FROM events INDEXED BY events_compactions WHERE kind = 'compaction' AND seq <> 0 ORDER BY through DESC, seq DESC LIMIT 1",
      ),
    ).toContain('events_compactions');
    expect(
      queryPlan(db, "SELECT seq FROM events WHERE kind = 'user_message' ORDER BY seq LIMIT 1"),
    ).toContain('events_by_kind');
    expect(queryPlan(db, 'SELECT seq FROM events WHERE request_seq = 5')).toContain('events_decisions');
    db.close();
  });
});
