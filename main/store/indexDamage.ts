import fs from 'node:fs';

/** A damaged index.sqlite that `SessionIndex.open` moved aside. */
export type DamagedIndex = { movedTo: string; reason: string };

/** SQLite's answers for a file that is not a database or whose pages are malformed. */
export function isDamage(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * Renames the damaged file and its -wal/-shm to `<file>.damaged-<time>` (a WAL left beside a new file would
 * be replayed into it). Another process may have moved it first: then there is nothing left to move.
 */
export function setAsideDamaged(file: string, reason: string): DamagedIndex {
  const movedTo = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      fs.renameSync(`${file}${suffix}`, `${movedTo}${suffix}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return { movedTo, reason };
}
