import fs from 'node:fs';
import path from 'node:path';
import { migrate, openDatabase, type Db } from '../../store/database.js';
import type { Synchronous } from '../../store/database.js';
import { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE, EVENTS_WAL_AUTOCHECKPOINT } from '../../store/schema.js';
import { UNINDEXED_KINDS } from '../../store/schema.js';
import type { SessionIndex, SessionStatus } from '../../store/sessionIndex.js';
import { parseSessionEvent, SessionEvent } from '../../common/events.js';
import type { EventKind, EventOf, NewEvent } from '../../common/events.js';
import { decidedRequestOf } from '../../common/planEvents.js';
import type { ProjectionView } from '../../common/payload.js';
import { selectView } from '../projection/projectPayload.js';
import { assertValidSessionId, isValidSessionId, newSessionId } from './sessionId.js';
import { crashPoint, duringAppendCrash } from '../crash.js';
import { isoTimestamp } from '../../common/clock.js';
import { immediately } from './immediate.js';
import {
  asDiskFull,
  DamagedLogError,
  isDatabaseDamage,
  isSeqRefusal,
  SessionExistsError,
} from './logErrors.js';
import { SessionLockedError, SessionNotFoundError } from './logErrors.js';
import { IndexFollower } from './indexFollower.js';
import { bodyText, rowToEvent, toIndexUpdate, toSessionRow } from './logRows.js';
import { TraceEntry } from './logRows.js';
import { trackWriter, untrackWriter } from './writerExit.js';
import { assertLogPresent, assertNotBeingCreated } from './creatingMark.js';
import { claimSessionFolder, clearCreatingMark } from './creatingMark.js';
import { openFreshDatabase, sealFreshDatabase } from '../../store/freshDatabase.js';
import { openIndexWithNotice } from './indexNotice.js';
import type { ProjectionFold } from '../projection/fold.js';
import { foldSourceOf, LogProjection, type FoldOrigin, type LogCache } from './logFold.js';
import { LogTrace, packTrace } from './logTrace.js';
import { copyEventRows } from './logCopy.js';
import { logStatements, toUsageRecord, type LogStatements } from './logStatements.js';
import { fileIdentity, keptConnections, type FileIdentity } from './keptConnections.js';

export { DamagedLogError, SessionExistsError } from './logErrors.js';
export { SessionLockedError, SessionNotFoundError } from './logErrors.js';
export { TraceEntry } from './logRows.js';
export { LogCache, type FoldOrigin } from './logFold.js';
export type * from './logTypes.js';
export type * from './logTallies.js';
import type { AppendOptions, AppendResult, CreateSessionInit, CreateSessionOptions } from './logTypes.js';
import type { ImportEventsOptions, OpenSessionOptions, ReadOptions } from './logTypes.js';
import type { LogTallies, UsageRecord, UsageTotals } from './logTallies.js';
import { LogTailState } from './logTail.js';
import { artifactsDir, eventsFile, sessionDir, workspaceDir } from '../paths.js';

export type { NewEvent, ProjectionView };

/**
 * The log's index connection commits without its own fsync: counts, status and search text are
 * rebuilt from events.sqlite (FULL) by seq watermark if a power cut loses them, and a lost lease
 * belonged to a process that did not survive the cut either. New session rows are still FULL.
 */
const INDEX_OPTIONS = { synchronous: 'NORMAL' } as const;

/** A by-kind lookup of a kind the by-kind index leaves out scans the table (see events migration 003). */
const isUnindexedKind = (kind: string): boolean => UNINDEXED_KINDS.includes(kind);

/** A host's writer connections kept between its opens (keptConnections.ts): events.sqlite by file, index by home. */
const keptLogs = keptConnections<Db>(16);
const keptIndexes = keptConnections<SessionIndex>(4);

/** What a writer opened with a host's cache keeps open on close, and the files they were opened on. */
type KeepOnClose = {
  home: string;
  synchronous: Synchronous;
  events: FileIdentity | undefined;
  index: FileIdentity | undefined;
};

/**
 * The append-only event log of one session: `<home>/sessions/<id>/events.sqlite`. A log opened for
 * writing holds the session's writer lease in index.sqlite and keeps the index row in step with
 * every append; a read-only log never writes. Every method is synchronous.
 */
export class SessionLog {
  /** `<home>/sessions/<id>/artifacts`: large tool outputs and files, addressed by handle. */
  readonly artifactsDir: string;
  /** `<home>/sessions/<id>/workspace`: the session's private workspace (`session/`, `persistent/<n>/`). */
  readonly workspaceDir: string;
  private readonly statements: LogStatements;
  private running = false;
  private readonly follower: IndexFollower;
  private closed = false;
  /** The projection and tallies this handle keeps current (logFold.ts). */
  private readonly folds: LogProjection;
  private readonly trace: LogTrace;
  /** The newest event and the unanswered approvals, kept by a writer from its own appends (logTail.ts). */
  private readonly tail: LogTailState;
  /** KEEL_CRASH_AT=during_append, read when the log opens (crash.ts). */
  private readonly crashInAppend = duringAppendCrash();

  private constructor(
    /** The session id (also its folder name). */
    readonly id: string,
    /** `<home>/sessions/<id>`: the session's dataDir. */
    readonly dir: string,
    private readonly db: Db,
    private readonly index: SessionIndex,
    /** True when this log holds the writer lease and may append. */
    readonly writable: boolean,
    private readonly ownsIndex = true,
    cache?: LogCache,
    private readonly keepOnClose?: KeepOnClose,
  ) {
    this.artifactsDir = artifactsDir(dir);
    this.workspaceDir = workspaceDir(dir);
    this.follower = new IndexFollower(
      this,
      index,
      () => this.statements.firstOfKind.get('user_message')?.seq,
    );
    this.statements = logStatements(db);
    this.tail = new LogTailState(this.statements, () => this.writable && !this.closed);
    this.trace = new LogTrace(db);
    const transaction = <T>(work: () => T): T => db.transaction(work)();
    this.folds = new LogProjection(foldSourceOf(this, this.statements.range, transaction), cache);
  }

  /**
   * Creates a session: its folder (events.sqlite, artifacts/, workspace/session/), its
   * session_created event (seq 1) and its index row; returns it open for writing with the lease
   * held. Throws SessionExistsError if the id is taken; on any failure nothing is left behind.
   */
  static create(home: string, init: CreateSessionInit, options: CreateSessionOptions = {}): SessionLog {
    if (options.id !== undefined && init.sessionId !== undefined && options.id !== init.sessionId) {
      throw new Error(`create: options.id "${options.id}" and init.sessionId "${init.sessionId}" differ`);
    }
    const id = options.id ?? init.sessionId ?? newSessionId();
    const { synchronous, files } = options;
    return SessionLog.build(home, id, { lease: true, synchronous, files }, (log) =>
      log.insertAll([
        SessionEvent.parse({
          ...init,
          kind: 'session_created',
          sessionId: id,
          seq: 1,
          at: new Date().toISOString(),
        }),
      ]),
    );
  }

  /**
   * Opens an existing session. With `write: true` it takes the writer lease (SessionLockedError if
   * another live process holds it; a dead holder's lease is taken over) and first catches the
   * index up with the log, in case a crash left it behind. Throws SessionNotFoundError if unknown.
   */
  static open(home: string, id: string, options: OpenSessionOptions = {}): SessionLog {
    if (!isValidSessionId(id)) throw new SessionNotFoundError(id);
    const dir = sessionDir(home, id);
    const file = eventsFile(dir);
    assertLogPresent(dir, id);

    let db: Db | undefined;
    let index: SessionIndex | undefined;
    let leased = false;
    const write = options.write === true;
    const synchronous = options.synchronous ?? 'FULL';
    const indexFile = path.join(home, 'index.sqlite');
    try {
      // A write open takes what a host's writer kept (keptConnections.ts); with a cache it keeps them on close.
      const keptLog = write ? keptLogs.take(`${synchronous}\0${file}`) : undefined;
      const keptIndex = write ? keptIndexes.take(indexFile) : undefined;
      if (keptLog) {
        db = keptLog.connection;
        migrate(db, EVENTS_MIGRATIONS); // reads user_version: another build may have migrated the file since
      }
      if (keptIndex) keptIndex.connection.migrate();
      db ??= openDatabase(file, {
        migrations: EVENTS_MIGRATIONS,
        mustExist: true,
        walAutocheckpoint: EVENTS_WAL_AUTOCHECKPOINT,
        ...(options.synchronous ? { synchronous: options.synchronous } : {}),
      });
      const shared = write ? undefined : options.sharedIndex;
      index = shared ?? keptIndex?.connection ?? openIndexWithNotice(home, INDEX_OPTIONS);
      const keepOnClose: KeepOnClose | undefined =
        write && options.cache
          ? {
              home,
              synchronous,
              events: keptLog?.identity ?? fileIdentity(file),
              index: keptIndex?.identity ?? fileIdentity(indexFile),
            }
          : undefined;
      const log = new SessionLog(id, dir, db, index, write, shared === undefined, options.cache, keepOnClose);
      // A registered session's first event was validated when written: a writer re-reads it without zod.
      const registered = write && index.position(id) !== undefined;
      const created = log.firstEvent(!registered);
      // A folder whose session_created never committed is a create that crashed: not a session.
      if (!created) throw new SessionNotFoundError(id);
      if (log.writable && !registered) {
        // A log whose creator is still registering it is not lost: re-registering it here would make the
        // creator's own registration fail (UNIQUE) and it would delete the folder this process now uses.
        assertNotBeingCreated(dir, id);
        // The lease row refers to the index row, so a session the index lost is re-registered first.
        index.restoreSession(toSessionRow(created, id));
      }
      if (log.writable) {
        const holder = index.acquireLease(id);
        if (holder) throw new SessionLockedError(id, holder.pid);
        leased = true;
        fs.mkdirSync(log.artifactsDir, { recursive: true });
        fs.mkdirSync(path.join(log.workspaceDir, 'session'), { recursive: true });
        log.follower.catchUp();
        trackWriter(log);
      }
      return log;
    } catch (error) {
      // Never leave a lease behind for a log that was not handed out.
      if (leased) index?.releaseLease(id);
      db?.close();
      if (index !== options.sharedIndex) index?.close();
      if ((error as { code?: string }).code === 'SQLITE_CANTOPEN') throw new SessionNotFoundError(id);
      if (isDatabaseDamage(error)) throw new DamagedLogError(id, file, (error as Error).message);
      // Past the log's own open (which names its file), what writes here is the index.
      throw asDiskFull(error, path.join(home, 'index.sqlite'), { sessionId: id, stage: 'open' });
    }
  }

  /**
   * Imports a whole log (events as validated by the caller, seq 1..n, session_created first) as a
   * new session in one transaction; returns its id (`options.id`, else a new one; session_created's
   * sessionId is set to it). On any failure the session folder and index row are removed again. With
   * `copyFrom` (a fork: the local events.sqlite whose rows 2..n are `events` after the first), rows are copied.
   */
  static importEvents(
    home: string,
    events: readonly SessionEvent[],
    options: ImportEventsOptions = {},
  ): string {
    const first = events[0];
    if (!first || first.kind !== 'session_created') {
      throw new Error('an imported log must start with its session_created event');
    }
    const id = options.id ?? newSessionId();
    const rewritten = events.map((event) => (event === first ? { ...first, sessionId: id } : event));
    // `files` writes the session folder's own files (persistent.json) before the row is registered. The log is
    // written whole under another name and named once complete (store/freshDatabase.ts).
    const { files, index, copyFrom } = options;
    const log = SessionLog.build(home, id, { lease: false, files, index, fresh: true }, (created) => {
      const written = copyFrom ? created.copyAll(rewritten, copyFrom) : created.insertAll(rewritten, options);
      if (options.snapshot !== false) created.folds.snapshotImport(written); // before the seal: it reads rows
      crashPoint('before_import_seal');
      return written;
    });
    log.close();
    return id;
  }

  /** Shared by create and import: claims the folder, writes the events, registers the index row. */
  private static build(
    home: string,
    id: string,
    options: Omit<CreateSessionOptions, 'id'> & { lease: boolean; fresh?: boolean; index?: SessionIndex },
    write: (log: SessionLog) => SessionEvent[],
  ): SessionLog {
    assertValidSessionId(id);
    const dir = sessionDir(home, id);
    const index = options.index ?? openIndexWithNotice(home, INDEX_OPTIONS);
    let claimed = false;
    let db: Db | undefined;
    const file = eventsFile(dir);
    let writing = file;
    try {
      if (index.position(id)) throw new SessionExistsError(id);
      claimed = claimSessionFolder(home, id) === dir;
      const schema = { migrations: EVENTS_MIGRATIONS, pageSize: EVENTS_PAGE_SIZE };
      db = options.fresh
        ? openFreshDatabase(file, schema)
        : openDatabase(file, {
            ...schema,
            walAutocheckpoint: EVENTS_WAL_AUTOCHECKPOINT,
            ...(options.synchronous ? { synchronous: options.synchronous } : {}),
          });
      const log = new SessionLog(id, dir, db, index, options.lease, options.index === undefined);
      // The log is written first and registered after (row, search text and lease in one index
      // transaction), so the index never claims events the log does not have; a crash in between
      // leaves an unindexed folder that a writer's `open` re-registers.
      const written = write(log);
      const status = log.deriveStatus();
      writing = dir; // the session's own files: a failed write of one names no path
      options.files?.(dir);
      writing = file;
      if (options.fresh) sealFreshDatabase(db, file);
      writing = path.join(home, 'index.sqlite');
      const created = written[0];
      if (created?.kind !== 'session_created')
        throw new Error(`session ${id}: session_created was not written`);
      // In an index the caller keeps (a history import's), the row is made durable by its close (checkpoint).
      index.registerSession(toSessionRow(created, id), toIndexUpdate(written, status), {
        lease: options.lease,
        durable: options.index === undefined,
      });
      clearCreatingMark(dir);
      if (options.lease) trackWriter(log);
      return log;
    } catch (error) {
      db?.close();
      if (options.index === undefined) index.close();
      if (claimed) fs.rmSync(dir, { recursive: true, force: true });
      throw asDiskFull(error, writing, { stage: 'create' });
    }
  }

  /**
   * Appends events atomically (one transaction) with the next seqs and the current time, then
   * brings the index row up to date (counts, status, search text). With `expectedLastSeq`, nothing
   * is written and a conflict is returned unless the log ends at that seq. With `trace`, records made
   * before these events are stored with the first of them (packed, same commit: logTrace.ts). Throws if
   * this log is not open for writing or an event or record does not match its schema.
   */
  append(events: NewEvent | readonly NewEvent[], options: AppendOptions = {}): AppendResult {
    const batch: readonly NewEvent[] = Array.isArray(events) ? events : [events as NewEvent];
    try {
      return this.appendBatch(batch, options);
    } catch (error) {
      // A full disk rolled the transaction back: nothing of this batch is in the log, all before it is.
      const kinds = batch.map((event) => event.kind);
      throw asDiskFull(error, eventsFile(this.dir), {
        sessionId: this.id,
        stage: 'append',
        kinds,
      });
    }
  }

  private appendBatch(batch: readonly NewEvent[], options: AppendOptions): AppendResult {
    this.assertWritable();
    // Validated before the transaction: a bad record refuses the append, as a bad event does.
    const trace = options.trace?.length ? packTrace(options.trace.map((t) => TraceEntry.parse(t))) : null;
    const known = this.tail.known;
    let result: AppendResult;
    try {
      result = immediately(this.db, () => this.appendRows(batch, options, trace));
    } catch (error) {
      // The writer's remembered tail is only trusted while appends go through: after a refused or
      // rolled-back one it is read again, and a stale tail (the dense-seq trigger refused it) is retried once.
      this.tail.forget();
      if (known && isSeqRefusal(error)) return this.appendBatch(batch, options);
      throw error;
    }
    if (result.ok && result.events.length > 0) {
      const { events } = result;
      this.tail.appended(events);
      // The common case first: one event a running turn holds back from the index (indexFollower.ts).
      const held = this.running && events.length === 1 && this.follower.holds(events[0] as SessionEvent);
      if (!held) this.follower.appended(events, this.running, this.deriveStatus());
    }
    return result;
  }

  /** appendBatch's transaction: numbers the events after the tail, validates and inserts them. */
  private appendRows(batch: readonly NewEvent[], options: AppendOptions, trace: string | null): AppendResult {
    const last = this.tail.seq();
    if (options.expectedLastSeq !== undefined && options.expectedLastSeq !== last) {
      return { ok: false, conflict: { expectedLastSeq: options.expectedLastSeq, actualLastSeq: last } };
    }
    const at = isoTimestamp();
    const appended: SessionEvent[] = [];
    for (let i = 0; i < batch.length; i += 1) {
      const event = batch[i] as NewEvent;
      if (event.kind === 'session_created' && last + i !== 0) {
        throw new Error('session_created is only ever the first event of a log');
      }
      const seq = last + 1 + i;
      // seq and at first, as zod's copy and a stored event read back have them (bodyText relies on it), and set
      // again after the caller's fields, so a caller's own never wins. A throw rolls the whole batch back.
      const value: Record<string, unknown> = { seq, at, ...event };
      value['seq'] = seq;
      value['at'] = options.keepTimes === true ? ((event as { at?: string }).at ?? at) : at;
      const stored = parseSessionEvent(value);
      this.insertEvent(stored, i === 0 ? trace : null);
      appended.push(stored);
    }
    this.crashInAppend?.(appended);
    return { ok: true, events: appended, lastSeq: last + appended.length };
  }

  /** The seq of the newest event (0 for an empty log). */
  lastSeq(): number {
    return this.tail.seq();
  }

  /**
   * Events with `fromSeq <= seq <= toSeq` in seq order, at most `limit`, each validated with zod unless
   * `validate: false` (events were validated on append; the turn engine's hot path skips the re-check).
   */
  read(options: ReadOptions = {}): SessionEvent[] {
    const { fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER, limit = -1 } = options;
    return this.statements.range
      .all(fromSeq, toSeq, limit)
      .map((row) => rowToEvent(this.id, row, options.validate));
  }

  /** Every event of these kinds in seq order (an index lookup per kind, not a scan, unless a kind is unindexed). */
  readKinds(kinds: readonly EventKind[], options: { validate?: boolean } = {}): SessionEvent[] {
    const statement = kinds.some(isUnindexedKind) ? this.statements.ofAnyKinds : this.statements.ofKinds;
    return statement.all(JSON.stringify(kinds)).map((row) => rowToEvent(this.id, row, options.validate));
  }

  /** Seq of the newest event of a kind (of those before seq `before`, when given), or undefined when there is none. */
  lastSeqOfKind(kind: EventKind, options: { before?: number } = {}): number | undefined {
    const statement = isUnindexedKind(kind)
      ? this.statements.lastSeqOfUnindexedKind
      : this.statements.lastSeqOfKind;
    return statement.get(kind, options.before ?? Number.MAX_SAFE_INTEGER);
  }

  /** Token usage summed over every assistant message (computed in SQLite, no events are decoded). */
  usageTotals(): UsageTotals {
    return { ...(this.statements.usageTotals.get() as UsageTotals) };
  }
  /** Every recorded usage in seq order (assistant messages, compaction summaries; rewound ones too). */
  usageRecords = (): UsageRecord[] => this.statements.usageRows.all().map(toUsageRecord);

  /** How many events of a kind the log holds. */
  countOfKind(kind: EventKind): number {
    const statement = isUnindexedKind(kind)
      ? this.statements.countOfUnindexedKind
      : this.statements.countOfKind;
    return statement.get(kind) ?? 0;
  }

  /**
   * The projection's inputs by index lookups in one snapshot: the compaction in effect (largest `through`, ties to
   * the later seq, not `withoutCompaction`), first user message, newest instructions_loaded and custom_listed, tail.
   */
  projectionView(options: { withoutCompaction?: number; validate?: boolean } = {}): ProjectionView {
    const { validate } = options;
    // A rewound session is read whole: which compaction and tail are in effect depends on what was set aside.
    if (this.lastSeqOfKind('rewound') !== undefined) return selectView(this.read({ validate }), options);
    return this.db.transaction((): ProjectionView => {
      const compactionRow = this.statements.compactionInEffect.get(options.withoutCompaction ?? 0);
      const compaction =
        compactionRow && (rowToEvent(this.id, compactionRow, validate) as EventOf<'compaction'>);
      const firstUserRow = this.statements.firstOfKind.get('user_message');
      const firstUserMessage =
        firstUserRow && (rowToEvent(this.id, firstUserRow, validate) as EventOf<'user_message'>);
      const [instructions, custom] = (['instructions_loaded', 'custom_listed'] as const).map((kind) => {
        const row = this.statements.lastOfKind.get(kind);
        return row && rowToEvent(this.id, row, validate);
      }) as [EventOf<'instructions_loaded'> | undefined, EventOf<'custom_listed'> | undefined];
      const tail = this.read({ fromSeq: (compaction?.through ?? 0) + 1, validate });
      return {
        ...(compaction ? { compaction } : {}),
        ...(firstUserMessage ? { firstUserMessage } : {}),
        ...(instructions ? { instructions } : {}),
        ...(custom ? { custom } : {}),
        tail,
      };
    })();
  }

  /** The projection at the newest seq (= projectView of projectionView()), kept current (logFold.ts); shared. */
  projection(): ProjectionFold {
    return this.folds.current().projection as ProjectionFold;
  }

  /** User-message count and usage totals over every event, kept current like `projection`. */
  tallies(): LogTallies {
    return this.folds.tallies();
  }

  /** Whether a user message carries this host message id (kept like `tallies`). */
  hasMessageId(id: string): boolean {
    return this.folds.hasMessageId(id);
  }

  /** Where the last `projection`/`tallies` call started from (for tests and the bench). */
  get projectionOrigin(): FoldOrigin | undefined {
    return this.folds.origin;
  }

  /**
   * Marks a turn as running (status `running` in the index) or finished. Events still win:
   * a pending approval, an interruption or an error shows as such. `close` clears it. The turn's
   * events held back from the index (indexFollower.ts) are indexed when it ends, with its status.
   */
  setRunning(running: boolean): void {
    this.assertWritable();
    this.running = running;
    this.follower.flush(this.deriveStatus(), running ? new Date().toISOString() : undefined);
  }

  /** Events appended by this writer that its index row does not have yet (held during a turn). */
  indexPending(): number {
    return this.follower.pendingCount;
  }

  /**
   * Appends trace records in a transaction of their own (records made before an event rather go with it:
   * `append`'s `trace`). Trace is observability only; the projection never reads it.
   */
  appendTrace(entries: TraceEntry | readonly TraceEntry[]): void {
    this.assertWritable();
    this.trace.append(Array.isArray(entries) ? entries : [entries as TraceEntry], this.lastSeq());
  }

  /** Trace records in the order written (those carried by events and those written alone), all or one turn's. */
  readTrace(options: { turn?: number } = {}): TraceEntry[] {
    return this.trace.read(options);
  }

  /** Releases the lease (if held) and closes both connections. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    untrackWriter(this);
    let kept: KeepOnClose | undefined;
    try {
      this.folds.close(this.writable);
      if (this.writable) {
        this.running = false;
        this.follower.tryFlush();
        this.index.releaseLease(this.id);
      }
      // An index that refused a write is not kept: the next open starts from a fresh connection (and its checks).
      if (!this.follower.isBehind) kept = this.keepOnClose;
    } finally {
      this.closeConnections(kept);
    }
  }

  /** Closes both connections, or keeps them for the host's next open (after a close that went through). */
  private closeConnections(kept: KeepOnClose | undefined): void {
    const file = eventsFile(this.dir);
    if (kept?.events !== undefined && !this.db.inTransaction) {
      keptLogs.keep(`${kept.synchronous}\0${file}`, file, kept.events, this.db);
    } else {
      this.db.close();
    }
    if (!this.ownsIndex) return;
    if (kept?.index !== undefined) {
      const indexFile = path.join(kept.home, 'index.sqlite');
      keptIndexes.keep(indexFile, indexFile, kept.index, this.index);
    } else {
      this.index.close();
    }
  }

  /** The status the list shows for this log (what a rebuilt index row gets). */
  indexStatus(): SessionStatus {
    return this.deriveStatus();
  }

  private assertWritable(): void {
    if (this.closed) throw new Error(`session ${this.id}: the log is closed`);
    if (!this.writable)
      throw new Error(`session ${this.id} was opened read-only; open it with { write: true }`);
  }

  private firstEvent(validate = true): EventOf<'session_created'> | undefined {
    const row = this.statements.range.get(1, 1, 1);
    if (!row) return undefined;
    const event = rowToEvent(this.id, row, validate);
    if (event.kind !== 'session_created') {
      throw new Error(`session ${this.id}: the first event is ${event.kind}, not session_created`);
    }
    return event;
  }

  private insertEvent(e: SessionEvent, trace: string | null = null): void {
    const through = e.kind === 'compaction' ? e.through : null;
    const request = decidedRequestOf(e); // a plan's decision too: the awaiting-approval status reads it
    this.statements.insert.run(e.seq, e.kind, e.at, through, request, bodyText(e), trace);
  }

  /** Writes already-numbered events (create, import) in one transaction; the triggers keep seq dense. */
  private insertAll(events: readonly SessionEvent[], { validated = false } = {}): SessionEvent[] {
    this.tail.forget();
    return this.db.transaction(() => {
      const parsed = validated ? [...events] : events.map((event) => SessionEvent.parse(event));
      for (const event of parsed) this.insertEvent(event);
      return parsed;
    })();
  }

  /** importEvents' `copyFrom`: session_created validated and written, then rows 2..n copied (logCopy.ts). */
  private copyAll(events: readonly SessionEvent[], file: string): SessionEvent[] {
    this.tail.forget();
    const first = SessionEvent.parse(events[0]);
    copyEventRows(this.db, file, { fromSeq: 2, toSeq: events.length }, () => this.insertEvent(first));
    return [first, ...events.slice(1)];
  }

  private deriveStatus(): SessionStatus {
    return this.tail.status(this.running);
  }
}
