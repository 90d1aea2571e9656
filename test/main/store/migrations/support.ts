import Database from 'better-sqlite3';
import type { Migration } from '../../../../main/store/database.js';
import { migrate } from '../../../../main/store/database.js';

/** A fresh in-memory database migrated up to and including `version`. */
export function migratedTo(migrations: readonly Migration[], version: number): Database.Database {
  const db = new Database(':memory:');
  migrate(db, migrations.slice(0, version));
  return db;
}

/** Names of the schema objects of a type (table, index, trigger) in the database. */
export function schemaNames(db: Database.Database, type: 'table' | 'index' | 'trigger'): string[] {
  return db
    .prepare<[string], string>(
      "SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .pluck()
    .all(type);
}

/** The query plan of `sql` as one string, for asserting which index a query uses. */
export function queryPlan(db: Database.Database, sql: string, ...params: unknown[]): string {
  return db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...params)
    .map((row) => row.detail)
    .join(' | ');
}
