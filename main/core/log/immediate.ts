import type Database from 'better-sqlite3';
import { perConnection, type Db } from '../../store/database.js';

/*
 * One append's write transaction: BEGIN IMMEDIATE, the work, COMMIT, with the three statements prepared once per
 * connection. better-sqlite3's transaction wrapper asks the connection whether a transaction is open (a call
 * into its C++) and applies the function through `arguments` on every call: ~6-9 µs of a ~300 µs durable append
 * on cold caches, measured side by side (#19). What a failure does is the wrapper's: anything thrown before the
 * commit went through rolls the transaction back, the commit's own failure included (a full disk, a busy lock).
 * Inside a transaction already open on the connection (none of Keel's), BEGIN fails and the wrapper runs the
 * work in a savepoint instead, as it always did.
 */

type Statements = { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement };

const statementsOf = perConnection((db): Statements => ({
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  rollback: db.prepare('ROLLBACK'),
}));

/** Runs `work` in a write transaction of its own (BEGIN IMMEDIATE) on `db`, or in a savepoint of an open one. */
export function immediately<T>(db: Db, work: () => T): T {
  const { begin, commit, rollback } = statementsOf(db);
  try {
    begin.run();
  } catch (error) {
    if (db.inTransaction) return db.transaction(work).immediate();
    throw error;
  }
  try {
    const result = work();
    commit.run();
    return result;
  } catch (error) {
    if (db.inTransaction) rollback.run();
    throw error;
  }
}
