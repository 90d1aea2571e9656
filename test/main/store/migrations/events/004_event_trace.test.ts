import { describe, expect, it } from 'vitest';
import { EVENTS_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo } from '../support.js';

const columns = (db: ReturnType<typeof migratedTo>, table: string) =>
  db
    .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
    .all()
    .map((c) => c.name);

describe('events migration 004 event trace', () => {
  it('gives events a trace column and trace rows their place after a seq, at user_version 4', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 4);
    expect(db.pragma('user_version', { simple: true })).toBe(4);
    expect(columns(db, 'events')).toEqual(['seq', 'kind', 'at', 'through', 'request_seq', 'body', 'trace']);
    expect(columns(db, 'trace')).toEqual([
      'id',
      'turn',
      'stage',
      'started_at',
      'duration_ms',
      'detail',
      'after_seq',
    ]);
    db.close();
  });

  it('keeps the rows of an existing log as they were, and the log append-only', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 3);
    db.prepare("INSERT INTO events (seq, kind, at, body) VALUES (1, 'session_created', 't1', '{}')").run();
    db.prepare("INSERT INTO trace (turn, stage, started_at) VALUES (1, 'stream', 't1')").run();
    EVENTS_MIGRATIONS[3]!.up(db);
    expect(db.prepare('SELECT seq, kind, body, trace FROM events').all()).toEqual([
      { seq: 1, kind: 'session_created', body: '{}', trace: null },
    ]);
    expect(db.prepare('SELECT stage, after_seq FROM trace').all()).toEqual([
      { stage: 'stream', after_seq: null },
    ]);
    expect(() => db.prepare("UPDATE events SET trace = '[0]' WHERE seq = 1").run()).toThrow(/append-only/);
    db.close();
  });
});
