import fs from 'node:fs';
import Database from 'better-sqlite3';
import { resolveNativeBinding } from './native.js';

/*
 * Diagnostics for the benchmarks: where the bytes a database writes go. Reads the WAL file's frame headers
 * (the format is SQLite's, https://www.sqlite.org/fileformat2.html#walformat) and which b-tree owns each
 * page (the dbstat table). Never used on the app's paths.
 */

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Where a WAL was last read up to: its generation (salts) and how many frames of it were seen. */
export type WalCursor = { salt1: number; salt2: number; frames: number; pageSize: number };

/** Frames appended to a WAL since `cursor`, and the generation they ended in. */
export type WalDelta = {
  /** Page number of every new frame, in order. */
  pages: number[];
  /** Bytes those frames take in the WAL (header + page each), plus a new WAL header when it restarted. */
  bytes: number;
  /** The WAL restarted (after a checkpoint) since the cursor: the earlier generation was copied back. */
  restarted: boolean;
  cursor: WalCursor;
};

function readAt(fd: number, length: number, position: number): Buffer | undefined {
  const buffer = Buffer.alloc(length);
  const read = fs.readSync(fd, buffer, 0, length, position);
  return read === length ? buffer : undefined;
}

/**
 * The frames written to `walFile` since `cursor` (undefined: from the start). A frame belongs to the current
 * generation when its salts match the header's; frames of an earlier generation past the end are stale.
 * Frames of a generation that was checkpointed and restarted between two calls are not seen: call it
 * after every commit.
 */
export function readWalDelta(walFile: string, cursor: WalCursor | undefined): WalDelta {
  let fd: number;
  try {
    fd = fs.openSync(walFile, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return {
      pages: [],
      bytes: 0,
      restarted: cursor !== undefined,
      cursor: { salt1: 0, salt2: 0, frames: 0, pageSize: 0 },
    };
  }
  try {
    const header = readAt(fd, WAL_HEADER, 0);
    if (!header)
      return {
        pages: [],
        bytes: 0,
        restarted: false,
        cursor: cursor ?? { salt1: 0, salt2: 0, frames: 0, pageSize: 0 },
      };
    const pageSize = header.readUInt32BE(8);
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);
    const same = cursor !== undefined && cursor.salt1 === salt1 && cursor.salt2 === salt2;
    const restarted = cursor !== undefined && !same && cursor.pageSize !== 0;
    let frames = same ? cursor.frames : 0;
    const pages: number[] = [];
    for (;;) {
      const frame = readAt(fd, FRAME_HEADER, WAL_HEADER + frames * (pageSize + FRAME_HEADER));
      if (!frame || frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) break;
      pages.push(frame.readUInt32BE(0));
      frames += 1;
    }
    const bytes = pages.length * (pageSize + FRAME_HEADER) + (same ? 0 : WAL_HEADER);
    return { pages, bytes, restarted, cursor: { salt1, salt2, frames, pageSize } };
  } finally {
    fs.closeSync(fd);
  }
}

/** Which b-tree (table or index, by name) owns each page of the database, and the page's type. */
export function pageOwners(file: string): Map<number, { name: string; type: string }> {
  const nativeBinding = resolveNativeBinding();
  // Read-only and outside openDatabase on purpose: no pragmas, no migrations, nothing written.
  const db = new Database(file, {
    readonly: true,
    fileMustExist: true,
    ...(nativeBinding === undefined ? {} : { nativeBinding }),
  });
  try {
    const rows = db
      .prepare<[], { name: string; pageno: number; pagetype: string }>(
        'SELECT name, pageno, pagetype FROM dbstat',
      )
      .all();
    return new Map(rows.map((row) => [row.pageno, { name: row.name, type: row.pagetype }]));
  } finally {
    db.close();
  }
}
