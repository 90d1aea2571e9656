import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { immediately } from '../../../../main/core/log/immediate.js';
import { openDatabase, type Db, type Migration } from '../../../../main/store/database.js';
import { makeTempDir, removeTempDir } from '../../../support/cli.js';

/*
 * The append's own transaction (immediate.ts) must do what better-sqlite3's wrapper did: commit what the work
 * wrote, roll everything back when the work or the commit itself fails, and nest in a savepoint inside a
 * transaction already open. A real SQLite file in WAL mode, as the log's.
 */

const schema: Migration[] = [
  {
    version: 1,
    name: 'rows',
    up: (db) =>
      void db.exec(`
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE rows (x INTEGER NOT NULL, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
      `),
  },
];

let dir: string;
let db: Db;

beforeEach(() => {
  dir = makeTempDir('keel-immediate-');
  db = openDatabase(path.join(dir, 'x.sqlite'), { migrations: schema });
});

afterEach(() => {
  db.close();
  removeTempDir(dir);
});

const count = () => db.prepare<[], number>('SELECT count(*) FROM rows').pluck().get();
const insert = (x: number, parent: number | null = null) =>
  db.prepare('INSERT INTO rows (x, parent) VALUES (?, ?)').run(x, parent);

describe('immediately', () => {
  it('commits what the work wrote and answers its result, as a write transaction of its own', () => {
    const answer = immediately(db, () => {
      expect(db.inTransaction).toBe(true);
      insert(1);
      insert(2);
      return 'done';
    });
    expect(answer).toBe('done');
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(2);
  });

  it('rolls the whole transaction back when the work throws, and when the commit itself fails', () => {
    expect(() =>
      immediately(db, () => {
        insert(1);
        throw new Error('refused half way');
      }),
    ).toThrow('refused half way');
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(0);
    // A deferred foreign key is checked at COMMIT: the commit fails and leaves the transaction open, to be undone.
    expect(() => immediately(db, () => insert(3, 42))).toThrow(/FOREIGN KEY/);
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(0);
    // The connection is usable at once.
    immediately(db, () => insert(4));
    expect(count()).toBe(1);
  });

  it('inside an open transaction, runs in a savepoint: its failure undoes only itself, the outer one decides', () => {
    db.transaction(() => {
      insert(1);
      expect(() =>
        immediately(db, () => {
          insert(2);
          throw new Error('inner');
        }),
      ).toThrow('inner');
      expect(db.inTransaction).toBe(true);
      immediately(db, () => insert(3));
    })();
    expect(db.prepare<[], number>('SELECT x FROM rows ORDER BY x').pluck().all()).toEqual([1, 3]);
  });
});
