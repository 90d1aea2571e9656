import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrate, type Db, type Migration } from './database.js';
import { asDiskFull } from './diskFull.js';
import { resolveNativeBinding } from './native.js';

/*
 * A database written whole before anyone can see it (an imported log, a fork): made from a template (the schema
 * migrated once per process, its bytes copied), filled in one transaction without a journal on disk or an fsync
 * per commit, switched to WAL, fsync'd once and only then renamed to its name, the folder's entry fsync'd. A crash
 * or a full disk before the rename leaves `<name>.building` beside an absent file: nothing half of it is ever
 * opened as the database. Against open + four migration transactions + a FULL commit + a checkpoint, each with
 * its fsync, this is one fsync of the file and one of its folder.
 */

/** The suffix of a database being written (never opened by anything but its writer). */
export const BUILDING_SUFFIX = '.building';

const templates = new Map<string, Buffer>();

/** The bytes of an empty database with this schema and page size (made once per process, in memory). */
function templateOf(migrations: readonly Migration[], pageSize: number): Buffer {
  const key = `${pageSize}:${migrations.map((m) => m.name).join(',')}`;
  let bytes = templates.get(key);
  if (bytes === undefined) {
    const db = connect(':memory:');
    try {
      db.pragma(`page_size = ${pageSize}`);
      migrate(db, migrations);
      bytes = db.serialize();
    } finally {
      db.close();
    }
    templates.set(key, bytes);
  }
  return bytes;
}

function connect(file: string): Db {
  const nativeBinding = resolveNativeBinding();
  return new Database(file, nativeBinding === undefined ? {} : { nativeBinding });
}

/**
 * Opens `<file>.building` (which must not exist) as an empty database of this schema, for one writer: its
 * journal in memory, no fsync. Pass it to `sealFreshDatabase` once written, or `discardFreshDatabase`.
 */
export function openFreshDatabase(
  file: string,
  options: { migrations: readonly Migration[]; pageSize: number },
): Db {
  const building = file + BUILDING_SUFFIX;
  try {
    fs.writeFileSync(building, templateOf(options.migrations, options.pageSize), { flag: 'wx' });
  } catch (error) {
    throw asDiskFull(error, building, { stage: 'create' });
  }
  const db = connect(building);
  try {
    // Nothing else opens this file; a crash leaves it unnamed, so neither a journal nor an fsync buys anything.
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw asDiskFull(error, building, { stage: 'create' });
  }
}

/**
 * Makes the written database `file`: WAL mode (kept in its header, as `openDatabase` makes every file), closed,
 * fsync'd, renamed over nothing (a file already there is an error), and the folder's entry fsync'd.
 */
export function sealFreshDatabase(db: Db, file: string): void {
  finishFreshDatabase(db, file);
  try {
    const fd = fs.openSync(file + BUILDING_SUFFIX, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    renameBuilt(file);
    syncFolder(path.dirname(file));
  } catch (error) {
    throw asDiskFull(error, file, { stage: 'create' });
  }
}

/**
 * The first half of `sealFreshDatabase`, for a writer of many databases (log/freshLogs.ts): switched to WAL and
 * closed, still `<file>.building`. `nameFreshDatabase` names it later, its fsync off the main thread.
 */
export function finishFreshDatabase(db: Db, file: string): void {
  try {
    db.pragma('journal_mode = WAL');
    db.close();
  } catch (error) {
    if (db.open) db.close();
    throw asDiskFull(error, file, { stage: 'create' });
  }
}

/**
 * The second half: `<file>.building` fsync'd in the thread pool (many at once, while the caller goes on), then
 * renamed to `file` and the folder's entry fsync'd, in that order: a crash before the rename leaves no `file`.
 */
export async function nameFreshDatabase(file: string): Promise<void> {
  try {
    const handle = await fs.promises.open(file + BUILDING_SUFFIX, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    renameBuilt(file);
    const folder = await fs.promises.open(path.dirname(file), 'r').catch(() => undefined);
    if (folder === undefined) return; // a platform that cannot open a folder (Windows): see syncFolder
    try {
      await folder.sync().catch((error: unknown) => {
        if (!isFolderSyncRefusal(error)) throw error;
      });
    } finally {
      await folder.close();
    }
  } catch (error) {
    throw asDiskFull(error, file, { stage: 'create' });
  }
}

function renameBuilt(file: string): void {
  if (fs.existsSync(file)) throw new Error(`${file} already exists`);
  fs.renameSync(file + BUILDING_SUFFIX, file);
}

/** Closes and removes a database that will not be sealed (its writer failed). */
export function discardFreshDatabase(db: Db, file: string): void {
  if (db.open) db.close();
  fs.rmSync(file + BUILDING_SUFFIX, { force: true });
}

/** fsyncs a folder, so the entries made in it (a rename, a new file or folder) survive a power cut. */
export function syncFolder(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    return; // a platform that cannot open a folder (Windows) syncs its entries with the files
  }
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    if (!isFolderSyncRefusal(error)) throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Some platforms refuse an fsync of a folder (EINVAL, EPERM, EISDIR): nothing more can be done there. */
function isFolderSyncRefusal(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EINVAL' || code === 'EPERM' || code === 'EISDIR';
}
