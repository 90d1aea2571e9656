import { describe, expect, it } from 'vitest';
import { EVENTS_MIGRATIONS, SPARSE_KINDS_TERM } from '../../../../../main/store/schema.js';
import { migratedTo, queryPlan, schemaNames } from '../support.js';

describe('events migration 003 lean indexes', () => {
  it('keeps a by-kind index without the kinds of nearly every event, and no trace index, at user_version 3', () => {
    const migrated = migratedTo(EVENTS_MIGRATIONS, 3);
    expect(migrated.pragma('user_version', { simple: true })).toBe(3);
    expect(schemaNames(migrated, 'index')).toEqual([
      'events_by_kind',
      'events_compactions',
      'events_decisions',
    ]);
    const sql = migrated
      .prepare<[], string>("SELECT sql FROM sqlite_schema WHERE name = 'events_by_kind'")
      .pluck()
      .get();
    expect(sql).toContain("WHERE kind NOT IN ('assistant_message', 'tool_call_started', 'tool_result')");
    migrated.close();
  });

  it('rebuilds the index of an existing log without the left-out kinds', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 2);
    const insert = db.prepare('INSERT INTO events (seq, kind, at, body) VALUES (?, ?, ?, ?)');
    insert.run(1, 'session_created', 't1', '{}');
    insert.run(2, 'user_message', 't2', '{"content":"hi"}');
    insert.run(3, 'tool_result', 't3', '{"toolCallId":"c","content":"out"}');
    EVENTS_MIGRATIONS[2]!.up(db);
    const indexed = db
      .prepare<[], string>(
        `SELECT kind FROM events INDEXED BY events_by_kind WHERE ${SPARSE_KINDS_TERM} ORDER BY seq`,
      )
      .pluck()
      .all();
    expect(indexed).toEqual(['session_created', 'user_message']);
    db.close();
  });

  it('serves a query by kind that repeats its WHERE term from the index, and one for a left-out kind by scanning', () => {
    const db = migratedTo(EVENTS_MIGRATIONS, 3);
    expect(
      queryPlan(
        db,
        `SELECT seq FROM events WHERE kind = ? AND ${SPARSE_KINDS_TERM} ORDER BY seq LIMIT 1`,
        'user_message',
      ),
    ).toContain('events_by_kind');
    expect(
      queryPlan(
        db,
        `SELECT r.seq FROM events r WHERE r.kind = 'approval_request' AND r.${SPARSE_KINDS_TERM}`,
      ),
    ).toContain('events_by_kind');
    expect(
      queryPlan(db, 'SELECT seq FROM events WHERE kind = ? ORDER BY seq DESC LIMIT 1', 'assistant_message'),
    ).not.toContain('events_by_kind');
    db.close();
  });
});
