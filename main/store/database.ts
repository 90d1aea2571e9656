import Database from 'better-sqlite3';
import { asDiskFull } from './diskFull.js';
import { resolveNativeBinding } from './native.js';

/** A better-sqlite3 connection as opened by `openDatabase` (pragmas set, schema migrated). */
export type Db = Database.Database;

/**
 * How hard a commit waits for the disk. FULL (the default) fsyncs the WAL on every commit, so an
 * acknowledged append survives power loss. NORMAL fsyncs only at checkpoints: still never corrupt,
 * survives a process crash, but a power cut may lose the last commits (measured ~14x faster per
 * single-row commit). Choose NORMAL only for data that can be rebuilt.
 */
export type Synchronous = 'FULL' | 'NORMAL';

/** One schema step. `version` is its number (1, 2, 3, … with no gaps); `up` runs inside a transaction. */
export type Migration = {
  version: number;
  name: string;
  up: (db: Db) => void;
};

/** Options of `openDatabase`. */
export type OpenDatabaseOptions = {
  /** The database's migrations, in order; the file is brought to the newest on open. */
  migrations: readonly Migration[];
  /** Default FULL. See `Synchronous`. */
  synchronous?: Synchronous;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY. Default 5000. */
  busyTimeoutMs?: number;
  /** Throw instead of creating the file when it does not exist. */
  mustExist?: boolean;
  /**
   * Page size in bytes (a power of two, 512..65536) of a file created by this open; an existing file keeps
   * its own. Every commit writes whole pages to the WAL, so small rows appended one per commit cost about
   * a page each: a small page keeps bytes written per commit near the row's size.
   */
  pageSize?: number;
  /**
   * WAL frames (pages) after which a commit checkpoints them into the main file; SQLite's default is 1000.
   * Every checkpoint copies each page the WAL holds once more, so appends that touch the same last pages
   * commit after commit copy them back less often with a larger WAL.
   */
  walAutocheckpoint?: number;
};

/** Thrown when a database file has a newer schema than this build knows: upgrade Keel to open it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly file: string,
    readonly fileVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `${file} was written by a newer Keel (schema ${fileVersion}; this build knows up to ${knownVersion}). ` +
        'Upgrade Keel to open it.',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Switches to WAL. Two processes creating the same new database race here, and SQLite answers the loser
 * SQLITE_BUSY without consulting busy_timeout, so the switch is retried for a short while.
 */
function setWalMode(db: Database.Database): void {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * Opens (creating if needed) a SQLite file with WAL, busy_timeout, foreign_keys and the chosen
 * synchronous level set on this connection, then applies pending migrations. The synchronous level
 * is set on every open because better-sqlite3's SQLite re-opens WAL databases as NORMAL.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions): Db {
  const nativeBinding = resolveNativeBinding();
  const db = new Database(file, {
    fileMustExist: options.mustExist ?? false,
    ...(nativeBinding === undefined ? {} : { nativeBinding }),
  });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    // Only a file with no pages yet takes a page size (once in WAL mode it can no longer change).
    if (options.pageSize !== undefined && (db.pragma('page_count', { simple: true }) as number) === 0) {
      db.pragma(`page_size = ${validPageSize(options.pageSize)}`);
    }
    setWalMode(db);
    // After journal_mode: entering WAL applies the compiled-in WAL default (NORMAL).
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
    if (options.walAutocheckpoint !== undefined) {
      db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpoint))}`);
    }
    migrate(db, options.migrations);
    return db;
  } catch (error) {
    db.close();
    // SQLite names no file: a full disk is reported with the one that could not be written.
    throw asDiskFull(error, file, { stage: 'open' });
  }
}

/**
 * Statements prepared on first use, then kept for the connection: `lazyStatements({ get: () => db.prepare(...) })`
 * reads like an object of prepared statements. A connection opened for one turn uses a handful of its class's
 * statements; preparing them all on open cost more than the turn's own queries (~15 µs each, ~0.5 ms per open).
 */
export function lazyStatements<T extends Record<string, () => unknown>>(
  make: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const statements = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(make) as (keyof T & string)[]) {
    Object.defineProperty(statements, key, {
      enumerable: true,
      get() {
        const prepared = make[key]!() as ReturnType<T[typeof key]>;
        // Replaced by the statement itself: later reads are a plain property read.
        Object.defineProperty(statements, key, { value: prepared, enumerable: true });
        return prepared;
      },
      configurable: true,
    });
  }
  return statements;
}

/**
 * `make(db)` once per connection: what a connection's users prepare (its statements) outlives each of them, so a
 * host's kept connection (main/core/log/keptConnections.ts) hands the next one its statements ready. Keyed
 * weakly: a closed connection's go with it.
 */
export function perConnection<T>(make: (db: Db) => T): (db: Db) => T {
  const made = new WeakMap<Db, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) {
      value = make(db);
      made.set(db, value);
    }
    return value;
  };
}

/**
 * Opens an existing SQLite file read-only, as it is: no migration, no pragma, nothing written (a reader of
 * another process's live WAL file, e.g. search reading a hit's event from its log). Throws when it is missing.
 */
export function openReadOnly(file: string): Db {
  const nativeBinding = resolveNativeBinding();
  return new Database(file, {
    readonly: true,
    fileMustExist: true,
    ...(nativeBinding === undefined ? {} : { nativeBinding }),
  });
}

function validPageSize(size: number): number {
  if (!Number.isInteger(size) || size < 512 || size > 65536 || (size & (size - 1)) !== 0) {
    throw new Error(`page size ${size} is not a power of two from 512 to 65536`);
  }
  return size;
}

/** Returns the schema version stored in the file's `user_version` (0 for a new file). */
export function readSchemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Applies every migration newer than the file's `user_version`, each in its own IMMEDIATE
 * transaction together with the version bump, so a crash leaves the file at a whole step and two
 * processes opening the same file at once apply each step once.
 */
export function migrate(db: Db, migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `migration "${migration.name}" has version ${migration.version}, expected ${index + 1}`,
      );
    }
  });
  const known = migrations.length;
  const current = readSchemaVersion(db);
  if (current > known) throw new SchemaTooNewError(db.name, current, known);
  if (current === known) return;

  for (const migration of migrations) {
    db.transaction(() => {
      // Re-read inside the lock: another process may have applied this step meanwhile.
      if (readSchemaVersion(db) >= migration.version) return;
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
