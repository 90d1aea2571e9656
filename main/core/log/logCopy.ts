// Copying another local log's event rows into a new log in SQLite, without decoding them (fork.ts, issue 18).
import type { Db } from '../../store/database.js';

/**
 * Inside one transaction of `db` (a log being created): runs `first` (which writes the new log's own first
 * event) then copies the rows `fromSeq..toSeq` of the log in `sourceFile` as they are, and returns how many.
 * Nothing of it is committed unless all of it is (every row of the range is there). The rows are not decoded or re-validated: the source is a
 * local log, whose every row was validated by zod when it was appended or imported, and this log's own
 * checks still run on each copied row (the dense-seq trigger, `json_valid(body)`, STRICT types).
 * better-sqlite3's SQLite does not take `file:...?mode=ro` names, so the source is attached by its path; the
 * one statement that touches it is a SELECT, and it is detached before returning.
 */
export function copyEventRows(
  db: Db,
  sourceFile: string,
  range: { fromSeq: number; toSeq: number },
  first: () => void,
): number {
  // ATTACH cannot run inside a transaction, so it brackets the one that writes.
  db.prepare('ATTACH DATABASE ? AS source').run(sourceFile);
  try {
    return db.transaction(() => {
      first();
      const copied = db
        .prepare<[number, number]>(
          `INSERT INTO main.events (seq, kind, at, through, request_seq, body)
           SELECT seq, kind, at, through, request_seq, body FROM source.events
           WHERE seq >= ? AND seq <= ? ORDER BY seq`,
        )
        .run(range.fromSeq, range.toSeq).changes;
      // Thrown inside the transaction: a source without every row of the range leaves nothing written.
      const expected = range.toSeq - range.fromSeq + 1;
      if (copied !== expected)
        throw new Error(`${sourceFile} has ${copied} of the events ${range.fromSeq}..${range.toSeq}`);
      return copied;
    })();
  } finally {
    db.prepare('DETACH DATABASE source').run();
  }
}
