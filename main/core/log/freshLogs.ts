import fs from 'node:fs';
import type { SessionEvent } from '../../common/events.js';
import { decidedRequestOf } from '../../common/planEvents.js';
import type { Db } from '../../store/database.js';
import {
  discardFreshDatabase,
  finishFreshDatabase,
  nameFreshDatabase,
  openFreshDatabase,
} from '../../store/freshDatabase.js';
import { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE } from '../../store/schema.js';
import type { IndexUpdate, SessionIndex } from '../../store/sessionIndex.js';
import type { NewSessionRow } from '../../store/indexRows.js';
import { crashPoint } from '../crash.js';
import { eventsFile, sessionDir } from '../paths.js';
import { claimSessionFolder, clearCreatingMark } from './creatingMark.js';
import { asDiskFull, SessionExistsError } from './logErrors.js';
import { bodyText, toIndexUpdate, toSessionRow } from './logRows.js';
import { logStatements } from './logStatements.js';
import { LogTailState } from './logTail.js';
import { assertValidSessionId } from './sessionId.js';

/*
 * Many new logs written whole and named a few at a time: a history import of a thousand sessions (issue 35).
 * `SessionLog.importEvents` makes one log and waits for its fsync before the next; here each log is written from
 * the template as it does (store/freshDatabase.ts: journal in memory, no fsync), closed and left as
 * `events.sqlite.building`, and `seal()` fsyncs the batch in the thread pool, all at once and while the caller
 * reads its next files, then names each log, fsyncs its folder and registers the rows in one index transaction.
 * The same promises: a crash before a log's rename leaves no session (its folder, with the creator's mark and no
 * events.sqlite, is taken back by the next create: creatingMark.ts); a crash between the rename and the row leaves
 * a log whose row `openSessionIndex` makes again. The events must be checked already (`checkEvents`), as with
 * `importEvents(..., { validated: true, snapshot: false })`: the first open folds them.
 */

/** A log written, not named yet. */
type Written = { id: string; dir: string; file: string; row: NewSessionRow; update: IndexUpdate };

/** What became of one log of a batch: named and registered, or not (its folder removed) and why. */
export type SealedLog = { id: string; error?: Error };

/** Rows per INSERT statement: one call into SQLite for many rows (the per-call cost was a tenth of an import). */
const ROWS_PER_INSERT = 32;

export class FreshLogBatch {
  private readonly written: Written[] = [];
  /** Ids of the logs a seal is naming now. */
  private readonly sealing = new Set<string>();

  constructor(
    private readonly home: string,
    /** The caller's index connection, kept across batches (its close makes the rows durable: its checkpoint). */
    private readonly index: SessionIndex,
  ) {}

  /** Logs written and not sealed yet. */
  get size(): number {
    return this.written.length;
  }

  /** True when the batch holds the log of this session (written or being named, not registered yet). */
  has(id: string): boolean {
    return this.sealing.has(id) || this.written.some((log) => log.id === id);
  }

  /**
   * Writes the log of a new session, `events` numbered from 1 and checked, under its building name, and runs
   * `files` in its folder. Throws SessionExistsError if the id is taken; on any failure nothing of it is left.
   */
  write(id: string, events: readonly SessionEvent[], files?: (dir: string) => void): void {
    assertValidSessionId(id);
    const created = events[0];
    if (created?.kind !== 'session_created')
      throw new Error('a log must start with its session_created event');
    const dir = sessionDir(this.home, id);
    const file = eventsFile(dir);
    let writing = file;
    let claimed = false;
    let db: Db | undefined;
    try {
      if (this.has(id) || this.index.position(id)) throw new SessionExistsError(id);
      claimed = claimSessionFolder(this.home, id) === dir;
      db = openFreshDatabase(file, { migrations: EVENTS_MIGRATIONS, pageSize: EVENTS_PAGE_SIZE });
      insertRows(db, events);
      // The status a log's writer derives for the list (logTail.ts), read from the rows just written.
      const status = new LogTailState(logStatements(db), () => false).status(false);
      writing = dir;
      files?.(dir);
      writing = file;
      finishFreshDatabase(db, file);
      const update = toIndexUpdate(events, status);
      this.written.push({ id, dir, file, row: toSessionRow(created, id), update });
    } catch (error) {
      if (db) discardFreshDatabase(db, file);
      if (claimed) fs.rmSync(dir, { recursive: true, force: true });
      throw asDiskFull(error, writing, { stage: 'create' });
    }
  }

  /**
   * Names every log written since the last seal (fsync'd first, in parallel) and registers their rows in one
   * index transaction. A log that could not be named or registered is removed whole and reported with its error.
   */
  async seal(): Promise<SealedLog[]> {
    const logs = this.written.splice(0);
    if (logs.length === 0) return [];
    for (const log of logs) this.sealing.add(log.id);
    crashPoint('before_import_seal');
    const named = await Promise.all(
      logs.map((log) =>
        nameFreshDatabase(log.file).then(
          () => undefined,
          (error: unknown) => asError(error),
        ),
      ),
    );
    const errors = new Map<string, Error>();
    logs.forEach((log, i) => {
      const error = named[i];
      if (error) errors.set(log.id, error);
    });
    const ready = logs.filter((log) => !errors.has(log.id));
    try {
      this.index.inOneTransaction(() => {
        for (const log of ready) {
          try {
            this.index.registerSession(log.row, log.update, { lease: false, durable: false });
          } catch (error) {
            // Its savepoint is rolled back; the others' rows still commit.
            errors.set(log.id, asError(error));
          }
        }
      });
    } catch (error) {
      const failure = asError(asDiskFull(error, 'index.sqlite', { stage: 'create' }));
      for (const log of ready) errors.set(log.id, failure);
    } finally {
      for (const log of logs) this.sealing.delete(log.id);
    }
    return logs.map((log) => {
      const error = errors.get(log.id);
      if (error) fs.rmSync(log.dir, { recursive: true, force: true });
      else clearCreatingMark(log.dir);
      return error ? { id: log.id, error } : { id: log.id };
    });
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The events' rows in one transaction, ROWS_PER_INSERT to a statement and the rest one by one (a statement of
 * each remainder's size would be prepared for one use; preparing costs about what it saves). The triggers keep
 * seq dense.
 */
function insertRows(db: Db, events: readonly SessionEvent[]): void {
  const sql = (rows: number) =>
    `INSERT INTO events (seq, kind, at, through, request_seq, body, trace) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?, ?, NULL)').join(', ')}`;
  const many = db.prepare(sql(ROWS_PER_INSERT));
  const one = db.prepare(sql(1));
  const values: unknown[] = [];
  const add = (e: SessionEvent) =>
    values.push(
      e.seq,
      e.kind,
      e.at,
      e.kind === 'compaction' ? e.through : null,
      decidedRequestOf(e),
      bodyText(e),
    );
  db.transaction(() => {
    let i = 0;
    for (; i + ROWS_PER_INSERT <= events.length; i += ROWS_PER_INSERT) {
      values.length = 0;
      for (let k = i; k < i + ROWS_PER_INSERT; k++) add(events[k] as SessionEvent);
      many.run(values);
    }
    for (; i < events.length; i++) {
      values.length = 0;
      add(events[i] as SessionEvent);
      one.run(values);
    }
  })();
}
