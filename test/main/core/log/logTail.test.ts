import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { EVENTS_PAGE_SIZE, EVENTS_WAL_AUTOCHECKPOINT } from '../../../../main/store/schema.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-tail-');

/** Writes one event row the way no Keel writer would: past the lease, on a connection of its own. */
function appendBehindTheWriter(log: SessionLog, seq: number, content: string): void {
  const db = new Database(path.join(log.dir, 'events.sqlite'));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('INSERT INTO events (seq, kind, at, body) VALUES (?, ?, ?, ?)').run(
      seq,
      'user_message',
      new Date().toISOString(),
      JSON.stringify({ content }),
    );
  } finally {
    db.close();
  }
}

describe('the writer remembers the end of its log', () => {
  it('numbers the next event after a row written behind its back (the dense-seq trigger refuses, it reads again)', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    try {
      log.append({ kind: 'user_message', content: 'one' });
      log.append({ kind: 'user_message', content: 'two' });
      expect(log.lastSeq()).toBe(3);
      appendBehindTheWriter(log, 4, 'written past the lease');

      const stale = log.append({ kind: 'user_message', content: 'conflict?' }, { expectedLastSeq: 3 });
      expect(stale).toEqual({ ok: false, conflict: { expectedLastSeq: 3, actualLastSeq: 4 } });

      const next = log.append({ kind: 'user_message', content: 'three' });
      expect(next.ok && next.lastSeq).toBe(5);
      expect(log.read().map((event) => [event.seq, event.kind === 'user_message' && event.content])).toEqual([
        [1, false],
        [2, 'one'],
        [3, 'two'],
        [4, 'written past the lease'],
        [5, 'three'],
      ]);
    } finally {
      log.close();
    }
  });

  it('keeps the status the newest event gives as it appends', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    try {
      log.append({ kind: 'interrupted', content: 'partial', toolCalls: [] });
      expect(log.indexStatus()).toBe('interrupted');
      log.append({ kind: 'user_message', content: 'go on' });
      expect(log.indexStatus()).toBe('idle');
      log.append({ kind: 'error', message: 'provider said no' });
      expect(log.indexStatus()).toBe('error');
    } finally {
      log.close();
    }
  });
});

describe('a read-only log asks for its end each time', () => {
  it('sees every append of the writer, and asks for the seq alone (not the newest kind too)', () => {
    const home = tempHome();
    const writer = SessionLog.create(home, sessionInit());
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    const reader = SessionLog.open(home, writer.id);
    try {
      expect(reader.lastSeq()).toBe(1);
      writer.append({ kind: 'user_message', content: 'one' });
      expect(reader.lastSeq()).toBe(2);
      writer.append({ kind: 'user_message', content: 'two' });
      expect(reader.lastSeq()).toBe(3);
      const prepared = prepare.mock.calls.map(([sql]) => String(sql));
      expect(prepared.some((sql) => sql.includes('max(seq)'))).toBe(true);
      expect(prepared.some((sql) => sql.includes('SELECT kind FROM events'))).toBe(false);
    } finally {
      prepare.mockRestore();
      reader.close();
      writer.close();
    }
  });
});

describe('the events WAL wraps', () => {
  it('stays within its autocheckpoint while far more than that is appended: appends overwrite its blocks', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    const wal = path.join(log.dir, 'events.sqlite-wal');
    const frame = EVENTS_PAGE_SIZE + 24;
    let largest = 0;
    let written = 0;
    try {
      for (let i = 0; i < 400; i += 1) {
        const content = `output line ${i} `.repeat(70);
        written += content.length;
        log.append({ kind: 'tool_result', toolCallId: `call_${i}`, content });
        largest = Math.max(largest, fs.statSync(wal).size);
      }
    } finally {
      log.close();
    }
    // Over 400 KB went through a WAL that never held more than its autocheckpoint and one commit's frames,
    // far less than what went through it: each checkpoint let the next commit start it again from its beginning.
    expect(written).toBeGreaterThan(400_000);
    expect(largest).toBeLessThanOrEqual(32 + (EVENTS_WAL_AUTOCHECKPOINT + 16) * frame);
    expect(largest).toBeLessThan(written / 2);
  });
});
