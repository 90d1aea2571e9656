import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../main/store/database.js';
import {
  BUILDING_SUFFIX,
  discardFreshDatabase,
  openFreshDatabase,
  sealFreshDatabase,
} from '../../../main/store/freshDatabase.js';
import { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE } from '../../../main/store/schema.js';

// Issue 35: a log written whole before it is named (an imported session, a fork).

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-fresh-db-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const schema = { migrations: EVENTS_MIGRATIONS, pageSize: EVENTS_PAGE_SIZE };
const row = (db: ReturnType<typeof openFreshDatabase>, seq: number) =>
  db
    .prepare('INSERT INTO events (seq, kind, at, body) VALUES (?, ?, ?, ?)')
    .run(seq, 'user_message', '2025-01-01T00:00:00.000Z', '{"content":"hi"}');

describe('fresh database', () => {
  it('is the migrated schema, invisible under its name until sealed, then a WAL file openDatabase takes as it is', () => {
    const file = path.join(dir, 'events.sqlite');
    const db = openFreshDatabase(file, schema);
    db.transaction(() => {
      for (let seq = 1; seq <= 50; seq++) row(db, seq);
    })();
    // Written, not named: nothing opens it as the log.
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(file + BUILDING_SUFFIX)).toBe(true);
    sealFreshDatabase(db, file);
    expect(fs.readdirSync(dir)).toEqual(['events.sqlite']);
    const opened = openDatabase(file, { migrations: EVENTS_MIGRATIONS, mustExist: true });
    try {
      expect(opened.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(opened.pragma('page_size', { simple: true })).toBe(EVENTS_PAGE_SIZE);
      expect(opened.pragma('user_version', { simple: true })).toBe(EVENTS_MIGRATIONS.length);
      expect(opened.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(opened.prepare('SELECT count(*) FROM events').pluck().get()).toBe(50);
      // The append-only triggers came with the template.
      expect(() => opened.prepare('DELETE FROM events').run()).toThrow();
    } finally {
      opened.close();
    }
  });

  it('never replaces a file of that name, and a discarded one leaves nothing', () => {
    const file = path.join(dir, 'events.sqlite');
    fs.writeFileSync(file, 'someone else');
    const db = openFreshDatabase(file, schema);
    row(db, 1);
    expect(() => sealFreshDatabase(db, file)).toThrow(/already exists/);
    expect(fs.readFileSync(file, 'utf8')).toBe('someone else');
    const again = path.join(dir, 'other.sqlite');
    const other = openFreshDatabase(again, schema);
    discardFreshDatabase(other, again);
    expect(fs.existsSync(again + BUILDING_SUFFIX)).toBe(false);
    expect(fs.existsSync(again)).toBe(false);
  });
});
