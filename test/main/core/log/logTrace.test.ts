import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { packTrace, unpackTrace } from '../../../../main/core/log/logTrace.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import type { TraceEntry } from '../../../../main/core/log/sessionLog.js';
import { migrate } from '../../../../main/store/database.js';
import { EVENTS_MIGRATIONS } from '../../../../main/store/schema.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-log-trace-');

/** A model request's records, as the turn engine makes them. */
const request = (turn: number, at: string): TraceEntry[] => [
  { turn, stage: 'projection', startedAt: at, durationMs: 1, detail: { messages: 40 } },
  { turn, stage: 'environment', startedAt: at, durationMs: 0 },
  { turn, stage: 'time_to_first_token', startedAt: at, durationMs: 640 },
  { turn, stage: 'stream', startedAt: '2026-12-01T10:00:00.640Z', durationMs: 1900 },
  {
    turn,
    stage: 'usage',
    startedAt: at,
    durationMs: 2540,
    detail: { inputTokens: 1200, outputTokens: 80, costUsd: null },
  },
];

const rowsOf = (log: SessionLog, sql: string): unknown[] => {
  const db = new Database(path.join(log.dir, 'events.sqlite'), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
};

describe('packed trace', () => {
  it('round-trips every shape of record: ISO or free-form times, no duration, null or absent detail, turns, unknown stages', () => {
    const entries: TraceEntry[] = [
      ...request(3, '2026-12-01T10:00:00.000Z'),
      { turn: 3, stage: 'tool:run_command', startedAt: '2026-12-01T09:59:59.500Z', durationMs: 12.25 },
      { turn: 3, stage: 'retry', startedAt: 'not a time' },
      { turn: 4, stage: 'request', startedAt: '2026-12-01T10:00:05.000Z', detail: null },
      { turn: 4, stage: 'usage', startedAt: '2026-12-01T10:00:05+00:00', durationMs: 0, detail: [1, 'x'] },
    ];
    expect(unpackTrace(packTrace(entries))).toEqual(entries);
    expect(packTrace([])).toBe('[0]');
    expect(unpackTrace('[0]')).toEqual([]);
  });

  it('takes far fewer bytes than the records as rows: a request is about 130 bytes', () => {
    const packed = packTrace(request(1, '2026-12-01T10:00:00.000Z'));
    expect(packed.length).toBeLessThan(150);
  });

  it('rejects what is not a packed trace', () => {
    expect(() => unpackTrace('{}')).toThrow(/packed trace/);
    expect(() => unpackTrace('[0, ["stream", 0, null]]')).toThrow(/packed trace/);
    expect(() => unpackTrace('[0, 1, [99, 0, null]]')).toThrow();
  });
});

describe('trace carried by an append', () => {
  it("stores a request's records in its event's row, in the same commit, and reads every record back in write order", () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    log.appendTrace({ turn: 1, stage: 'instructions', startedAt: '2026-12-01T09:59:00.000Z' });
    const first = request(1, '2026-12-01T10:00:00.000Z');
    const appended = log.append(
      { kind: 'assistant_message', content: 'reading', toolCalls: [] },
      { trace: first },
    );
    expect(appended.ok).toBe(true);
    log.appendTrace({ turn: 1, stage: 'tool:read_file', startedAt: '2026-12-01T10:00:03.000Z' });
    const second = request(2, '2026-12-01T10:01:00.000Z');
    // A batch carries its records on its first event.
    log.append(
      [
        { kind: 'user_message', content: 'next' },
        { kind: 'assistant_message', content: 'done', toolCalls: [] },
      ],
      { trace: second },
    );
    expect(log.readTrace().map((t) => t.stage)).toEqual([
      'instructions',
      ...first.map((t) => t.stage),
      'tool:read_file',
      ...second.map((t) => t.stage),
    ]);
    expect(log.readTrace({ turn: 2 })).toEqual(second);
    expect(rowsOf(log, 'SELECT seq FROM events WHERE trace IS NOT NULL')).toEqual([{ seq: 2 }, { seq: 3 }]);
    expect(rowsOf(log, 'SELECT stage FROM trace ORDER BY id')).toEqual([
      { stage: 'instructions' },
      { stage: 'tool:read_file' },
    ]);
    log.close();
  });

  it('refuses the append, writing nothing, when a record is not valid', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    expect(() =>
      log.append(
        { kind: 'user_message', content: 'hi' },
        { trace: [{ turn: -1, stage: 'x', startedAt: 't' }] },
      ),
    ).toThrow();
    expect(log.lastSeq()).toBe(1);
    expect(log.readTrace()).toEqual([]);
    log.close();
  });

  it('reads a log written before events migration 004: its trace rows first, then what was written since', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const file = path.join(log.dir, 'events.sqlite');
    log.close();
    // Take the file back to schema 3 with trace rows as the old writer stored them.
    const db = new Database(file);
    db.exec('ALTER TABLE events DROP COLUMN trace; ALTER TABLE trace DROP COLUMN after_seq');
    db.pragma('user_version = 3');
    const insert = db.prepare(
      'INSERT INTO trace (turn, stage, started_at, duration_ms, detail) VALUES (?, ?, ?, ?, ?)',
    );
    insert.run(1, 'projection', 't1', 2, '{"messages":3}');
    insert.run(1, 'stream', 't2', null, null);
    migrate(db, EVENTS_MIGRATIONS);
    expect(db.pragma('user_version', { simple: true })).toBe(4);
    db.close();

    const reopened = SessionLog.open(home, log.id, { write: true });
    const later = request(2, '2026-12-01T10:00:00.000Z');
    reopened.append({ kind: 'user_message', content: 'again' }, { trace: later });
    expect(reopened.readTrace()).toEqual([
      { turn: 1, stage: 'projection', startedAt: 't1', durationMs: 2, detail: { messages: 3 } },
      { turn: 1, stage: 'stream', startedAt: 't2' },
      ...later,
    ]);
    reopened.close();
    expect(fs.existsSync(file)).toBe(true);
  });
});
