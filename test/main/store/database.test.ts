import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { lazyStatements, migrate, openDatabase, perConnection } from '../../../main/store/database.js';
import { readSchemaVersion, SchemaTooNewError } from '../../../main/store/database.js';
import type { Migration } from '../../../main/store/database.js';
import { spawnTypescript, waitForExit } from './support/childProcess.js';
import { useTempHomes } from './support/tempHomes.js';

const tempDir = useTempHomes();

const FULL = 2;
const NORMAL = 1;

const twoTables: Migration[] = [
  { version: 1, name: 'a', up: (db) => void db.exec('CREATE TABLE a (x INTEGER)') },
  { version: 2, name: 'b', up: (db) => void db.exec('CREATE TABLE b (y INTEGER)') },
];

function tableNames(db: Database.Database): string[] {
  return db
    .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
}

describe('openDatabase', () => {
  it('sets synchronous=FULL again when re-opening a WAL database (SQLite alone would say NORMAL)', () => {
    const file = path.join(tempDir(), 'x.sqlite');
    openDatabase(file, { migrations: twoTables }).close();

    // The trap: this SQLite build re-opens WAL databases as NORMAL.
    const raw = new Database(file);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('synchronous', { simple: true })).toBe(NORMAL);
    raw.close();

    const reopened = openDatabase(file, { migrations: twoTables });
    expect(reopened.pragma('synchronous', { simple: true })).toBe(FULL);
    reopened.close();
  });

  it('gives a new file the page size asked for, and leaves an existing file its own', () => {
    const file = path.join(tempDir(), 'small.sqlite');
    const db = openDatabase(file, { migrations: twoTables, pageSize: 512 });
    expect(db.pragma('page_size', { simple: true })).toBe(512);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const reopened = openDatabase(file, { migrations: twoTables, pageSize: 4096 });
    expect(reopened.pragma('page_size', { simple: true })).toBe(512);
    reopened.close();
    expect(() =>
      openDatabase(path.join(tempDir(), 'odd.sqlite'), { migrations: twoTables, pageSize: 1000 }),
    ).toThrow(/power of two/);
  });

  it('sets the WAL autocheckpoint when asked to', () => {
    const db = openDatabase(path.join(tempDir(), 'ckpt.sqlite'), {
      migrations: twoTables,
      walAutocheckpoint: 4000,
    });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(4000);
    db.close();
  });

  it('uses NORMAL when asked to', () => {
    const db = openDatabase(path.join(tempDir(), 'x.sqlite'), { migrations: [], synchronous: 'NORMAL' });
    expect(db.pragma('synchronous', { simple: true })).toBe(NORMAL);
    db.close();
  });

  it('turns on WAL, foreign keys and a busy timeout', () => {
    const db = openDatabase(path.join(tempDir(), 'x.sqlite'), { migrations: [], busyTimeoutMs: 1234 });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    db.close();
  });

  it('refuses to create the file when it must exist', () => {
    expect(() =>
      openDatabase(path.join(tempDir(), 'missing.sqlite'), { migrations: [], mustExist: true }),
    ).toThrow();
  });
});

describe('lazyStatements', () => {
  it('prepares a statement on its first use, once, and not before', () => {
    const db = openDatabase(path.join(tempDir(), 'lazy.sqlite'), { migrations: twoTables });
    let prepared = 0;
    const statements = lazyStatements({
      count: () => (prepared++, db.prepare<[], number>('SELECT count(*) FROM c').pluck()),
      insert: () => (prepared++, db.prepare('INSERT INTO c (z) VALUES (?)')),
    });
    // Table c does not exist yet: an eager prepare would have thrown here.
    expect(prepared).toBe(0);
    db.exec('CREATE TABLE c (z INTEGER)');
    statements.insert.run(1);
    statements.insert.run(2);
    expect(prepared).toBe(1);
    expect(statements.count.get()).toBe(2);
    expect(statements.count).toBe(statements.count);
    expect(prepared).toBe(2);
    expect(Object.keys(statements)).toEqual(['count', 'insert']);
    db.close();
  });
});

describe('migrate', () => {
  it('applies every migration in order and records the version in user_version', () => {
    const db = openDatabase(path.join(tempDir(), 'x.sqlite'), { migrations: twoTables });
    expect(readSchemaVersion(db)).toBe(2);
    expect(tableNames(db)).toEqual(['a', 'b']);
    db.close();
  });

  it('applies only the migrations newer than the file', () => {
    const file = path.join(tempDir(), 'x.sqlite');
    openDatabase(file, { migrations: twoTables.slice(0, 1) }).close();
    let ranFirstAgain = false;
    const again: Migration[] = [{ ...twoTables[0]!, up: () => void (ranFirstAgain = true) }, twoTables[1]!];
    const db = openDatabase(file, { migrations: again });
    expect(ranFirstAgain).toBe(false);
    expect(tableNames(db)).toEqual(['a', 'b']);
    db.close();
  });

  it('leaves the file at the last whole step when a migration fails', () => {
    const file = path.join(tempDir(), 'x.sqlite');
    const failing: Migration[] = [
      twoTables[0]!,
      {
        version: 2,
        name: 'half',
        up: (db) => {
          db.exec('CREATE TABLE half (z INTEGER)');
          throw new Error('boom');
        },
      },
    ];
    expect(() => openDatabase(file, { migrations: failing })).toThrow('boom');
    const db = new Database(file);
    expect(readSchemaVersion(db)).toBe(1);
    expect(tableNames(db)).toEqual(['a']);
    db.close();
  });

  it('refuses a file written by a newer schema, saying what to do', () => {
    const file = path.join(tempDir(), 'x.sqlite');
    openDatabase(file, { migrations: twoTables }).close();
    expect(() => openDatabase(file, { migrations: twoTables.slice(0, 1) })).toThrow(SchemaTooNewError);
    expect(() => openDatabase(file, { migrations: twoTables.slice(0, 1) })).toThrow(/Upgrade Keel/);
  });

  it('rejects a migration list with a gap', () => {
    const db = new Database(':memory:');
    expect(() => migrate(db, [twoTables[1]!])).toThrow(/expected 1/);
    db.close();
  });
});

describe('openDatabase across processes', () => {
  it('lets two processes create the same new databases at once (the WAL switch is retried, not an error)', async () => {
    const dir = tempDir();
    const files = Array.from({ length: 150 }, (_, i) => path.join(dir, `race-${i}.sqlite`));
    const script = path.join(import.meta.dirname, 'support', 'openRace.ts');
    const children = [spawnTypescript(script, files), spawnTypescript(script, files)];
    const codes = await Promise.all(children.map((child) => waitForExit(child)));
    expect(codes).toEqual([0, 0]);
    for (const file of files) {
      const db = new Database(file);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      db.close();
    }
  });
});

describe('perConnection', () => {
  it('makes its value once per connection, and another for another connection', () => {
    const file = path.join(tempDir(), 'p.sqlite');
    const a = openDatabase(file, { migrations: twoTables });
    const b = openDatabase(file, { migrations: twoTables });
    let made = 0;
    const statementOf = perConnection((db) => {
      made += 1;
      return db.prepare('SELECT count(*) FROM a');
    });
    const first = statementOf(a);
    expect(statementOf(a)).toBe(first);
    expect(statementOf(b)).not.toBe(first);
    expect(made).toBe(2);
    a.close();
    b.close();
  });
});
