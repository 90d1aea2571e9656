import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { lazyStatements, migrate, openDatabase, type Db, type Synchronous } from './database.js';
import { toIndexTime, toSessionValues, type NewSessionRow } from './indexRows.js';
import { INDEX_MIGRATIONS } from './schema.js';
import { isLeaseStale } from './leaseHolder.js';
import type { LeaseHolder } from './leaseHolder.js';
import { isDamage, setAsideDamaged } from './indexDamage.js';
import type { DamagedIndex } from './indexDamage.js';
import { SearchSnippets, toSearchQuery } from './searchSnippets.js';
import type { MessageText } from './searchSnippets.js';

export { isLeaseStale } from './leaseHolder.js';
export type { LeaseHolder } from './leaseHolder.js';
export type { DamagedIndex } from './indexDamage.js';
export { toSearchQuery, type MessageText } from './searchSnippets.js';
export { toIndexTime } from './indexRows.js';

/**
 * `<home>/index.sqlite`: one row per session (what the list shows), full-text search over message
 * text, and the writer lease of each session. The session log keeps it in step on every append;
 * listing and search read only this file, but for the snippets of a search page's rows: the hit's text is
 * read from its session's log (`messageText`), index.sqlite keeps no copy of message text.
 */

/** What a session is doing, as the list shows it. */
export const SessionStatus = z.enum(['idle', 'running', 'awaiting_approval', 'interrupted', 'error']);
export type SessionStatus = z.infer<typeof SessionStatus>;
/** A stored status, read leniently (made once: building a zod schema per row cost more than the read). */
const StoredStatus = SessionStatus.catch('idle');

/** Options of `SessionIndex.open`. */
export type OpenSessionIndexOptions = {
  /**
   * Default FULL (see `Synchronous`). The session log uses NORMAL: everything it writes here except
   * a new session's row can be rebuilt from the event logs, and `registerSession` is always FULL.
   */
  synchronous?: Synchronous;
  /** Tuning: up to how many matching messages search groups hits instead of walking sessions. */
  fewHits?: number;
  /** Where search reads a hit's text for its snippet (main/core/log passes the logs'); none: no snippets. */
  messageText?: MessageText;
};

/** One session as the list shows it. Times are ISO-8601 strings. */
export type SessionSummary = {
  id: string;
  title?: string;
  projectFolder: string;
  provider: string;
  model: string;
  /** `running` is reported as `interrupted` when the process that was running it is gone. */
  status: SessionStatus;
  parentId?: string;
  createdAt: string;
  updatedAt: string;
  eventCount: number;
  lastSeq: number;
  archived: boolean;
  /** With `search`: the newest matching message text, the matches in [brackets] (when its log has it). */
  snippet?: string;
};

/** Options of `SessionIndex.list`. */
export type ListSessionsOptions = {
  /** Page size (1..1000). */
  limit: number;
  /** Rows to skip, for paging. Default 0. */
  offset?: number;
  /** Words to find in message text (all of them, any word form). Blank = no search. */
  search?: string;
  /** Only sessions of this project folder (exact path). */
  projectFolder?: string;
  /** Include archived sessions. Default false. */
  includeArchived?: boolean;
};

/** The index's view of what an append changed; the session log computes it from the events. */
export type IndexUpdate = {
  lastSeq: number;
  updatedAt: string;
  status: SessionStatus;
  /** Used only while the session has no title yet. */
  title?: string;
  /** An explicit rename: replaces the title. */
  renamedTitle?: string;
  provider?: string;
  model?: string;
  /** Searchable text of the appended events. */
  messages: readonly { seq: number; text: string }[];
};

/** The index row's position in the log, for catching the index up after a crash. */
export type IndexPosition = { lastSeq: number; status: SessionStatus };

type SessionRow = {
  num: number;
  id: string;
  title: string | null;
  project_folder: string;
  provider: string;
  model: string;
  status: string;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
  event_count: number;
  last_seq: number;
  archived: number;
  lease_pid: number | null;
  lease_hostname: string | null;
  lease_acquired_at: string | null;
  /** With search: the rowid of the session's newest matching message. */
  hit?: number | null;
};

type LeaseRow = { pid: number; hostname: string; acquired_at: string };
type PageParams = { all: 0 | 1; limit: number; offset: number };
type SearchParams = PageParams & { project: string | null; query: string };

const MAX_PAGE = 1000;

/**
 * Page size of a new index.sqlite. A turn's catch-up rewrites the session row, its two list-order index
 * entries and a few FTS pages; each written page is a WAL frame, so 1 KiB pages write about a quarter of
 * what 4 KiB pages did for the same rows. (An existing file keeps its page size.)
 */
const INDEX_PAGE_SIZE = 1024;

/**
 * Up to this many matching messages, search groups all hits (fast when hits are few); beyond it,
 * search walks sessions newest first (fast when many sessions match). Measured on 1M messages:
 * grouping costs ~0.5 µs per hit, walking ~12 µs per session walked.
 */
const FEW_HITS = 20_000;

const SESSION_COLUMNS = `
  s.num, s.id, s.title, s.project_folder, s.provider, s.model, s.status, s.parent_id,
  s.created_at, s.updated_at, s.event_count, s.last_seq, s.archived,
  l.pid AS lease_pid, l.hostname AS lease_hostname, l.acquired_at AS lease_acquired_at`;

function rowToSessionSummary(row: SessionRow): SessionSummary {
  const stored = StoredStatus.parse(row.status);
  const lease: LeaseHolder | undefined =
    row.lease_pid === null || row.lease_hostname === null || row.lease_acquired_at === null
      ? undefined
      : { pid: row.lease_pid, hostname: row.lease_hostname, acquiredAt: row.lease_acquired_at };
  const status = stored === 'running' && (!lease || isLeaseStale(lease)) ? 'interrupted' : stored;
  return {
    id: row.id,
    ...(row.title === null ? {} : { title: row.title }),
    projectFolder: row.project_folder,
    provider: row.provider,
    model: row.model,
    status,
    ...(row.parent_id === null ? {} : { parentId: row.parent_id }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    eventCount: row.event_count,
    lastSeq: row.last_seq,
    archived: row.archived === 1,
  };
}

/** The session index of one home. Statements are prepared once per connection, on first use. */
export class SessionIndex {
  private readonly statements;
  private readonly hostname = os.hostname();

  private constructor(
    /** The home folder this index belongs to. */
    readonly home: string,
    private readonly db: Db,
    private readonly fewHits: number,
    private readonly synchronous: Synchronous,
  ) {
    this.snippets = new SearchSnippets(db);
    this.statements = lazyStatements({
      listAll: () =>
        db.prepare<[PageParams], SessionRow>(`
        SELECT ${SESSION_COLUMNS} FROM sessions s LEFT JOIN writer_leases l ON l.session_id = s.id
        WHERE (@all = 1 OR s.archived = 0)
        ORDER BY s.updated_at DESC, s.num DESC LIMIT @limit OFFSET @offset`),
      listProject: () =>
        db.prepare<[PageParams & { project: string }], SessionRow>(`
        SELECT ${SESSION_COLUMNS} FROM sessions s LEFT JOIN writer_leases l ON l.session_id = s.id
        WHERE s.project_folder = @project AND (@all = 1 OR s.archived = 0)
        ORDER BY s.updated_at DESC, s.num DESC LIMIT @limit OFFSET @offset`),
      // Search has two plans with the same result order; `list` picks one by how many messages match.
      countHits: () =>
        db
          .prepare<[string], number>(
            `SELECT count(*) FROM (SELECT 1 FROM message_search WHERE message_search MATCH ? LIMIT ${fewHits + 1})`,
          )
          .pluck(),
      // Few hits: group them by session through rowid arithmetic (rowid >> 32 = sessions.num), cut the
      // page; each row carries its newest hit, whose snippet `list` makes. Cost O(hits) + O(page).
      searchFewHits: () =>
        db.prepare<[SearchParams], SessionRow>(`
        WITH hits AS (
          SELECT rowid >> 32 AS num, max(rowid) AS hit FROM message_search
          WHERE message_search MATCH @query GROUP BY 1
        ),
        page AS MATERIALIZED (
          SELECT ${SESSION_COLUMNS}, hits.hit
          FROM hits JOIN sessions s ON s.num = hits.num
          LEFT JOIN writer_leases l ON l.session_id = s.id
          WHERE (@project IS NULL OR s.project_folder = @project) AND (@all = 1 OR s.archived = 0)
          ORDER BY s.updated_at DESC, s.num DESC LIMIT @limit OFFSET @offset
        )
        SELECT * FROM page ORDER BY page.updated_at DESC, page.num DESC`),
      // Many hits: walk sessions newest first and probe each one's rowid range for a match (a seek
      // in the term's doclist), stopping when the page is full. Cost O(sessions walked).
      searchManyHits: () =>
        db.prepare<[SearchParams], SessionRow>(`
        WITH page AS MATERIALIZED (
          SELECT ${SESSION_COLUMNS}
          FROM sessions s LEFT JOIN writer_leases l ON l.session_id = s.id
          WHERE (@project IS NULL OR s.project_folder = @project) AND (@all = 1 OR s.archived = 0)
            AND EXISTS (
              SELECT 1 FROM message_search WHERE message_search MATCH @query
              AND rowid >= (s.num << 32) AND rowid < ((s.num + 1) << 32)
            )
          ORDER BY s.updated_at DESC, s.num DESC LIMIT @limit OFFSET @offset
        )
        SELECT page.*, (
          SELECT rowid FROM message_search
          WHERE message_search MATCH @query AND rowid >= (page.num << 32) AND rowid < ((page.num + 1) << 32)
          ORDER BY rowid DESC LIMIT 1
        ) AS hit
        FROM page ORDER BY page.updated_at DESC, page.num DESC`),
      get: () =>
        db.prepare<[string], SessionRow>(`
        SELECT ${SESSION_COLUMNS} FROM sessions s LEFT JOIN writer_leases l ON l.session_id = s.id
        WHERE s.id = ?`),
      position: () =>
        db.prepare<[string], { last_seq: number; status: string }>(
          'SELECT last_seq, status FROM sessions WHERE id = ?',
        ),
      insert: () =>
        db.prepare(`
        INSERT INTO sessions (id, title, project_folder, provider, model, parent_id, created_at, updated_at)
        VALUES (@id, @title, @projectFolder, @provider, @model, @parentId, @createdAt, @createdAt)`),
      insertIfMissing: () =>
        db.prepare(`
        INSERT INTO sessions (id, title, project_folder, provider, model, parent_id, created_at, updated_at)
        VALUES (@id, @title, @projectFolder, @provider, @model, @parentId, @createdAt, @createdAt)
        ON CONFLICT (id) DO NOTHING`),
      num: () => db.prepare<[string], number>('SELECT num FROM sessions WHERE id = ?').pluck(),
      count: () => db.prepare<[], number>('SELECT count(*) FROM sessions').pluck(),
      ids: () => db.prepare<[], string>('SELECT id FROM sessions').pluck(),
      update: () =>
        db.prepare(`
        UPDATE sessions SET
          last_seq = @lastSeq, event_count = @lastSeq, updated_at = @updatedAt, status = @status,
          title = coalesce(@renamedTitle, title, @title), provider = coalesce(@provider, provider),
          model = coalesce(@model, model)
        WHERE id = @id`),
      setStatus: () => db.prepare('UPDATE sessions SET status = ? WHERE id = ?'),
      setStatusTouched: () =>
        db.prepare<[string, string, string]>(
          'UPDATE sessions SET status = ?, updated_at = max(updated_at, ?) WHERE id = ?',
        ),
      setArchived: () => db.prepare('UPDATE sessions SET archived = ? WHERE id = ?'),
      truncate: () =>
        db.prepare<[{ id: string; lastSeq: number; status: SessionStatus }]>(
          'UPDATE sessions SET last_seq = @lastSeq, event_count = @lastSeq, status = @status WHERE id = @id',
        ),
      insertMessage: () =>
        db.prepare<[{ num: number; seq: number; text: string }]>(
          'INSERT OR REPLACE INTO message_search (rowid, text) VALUES ((@num << 32) + CAST(@seq AS INTEGER), @text)',
        ),
      deleteMessagesAfter: () =>
        db.prepare<[{ num: number; seq: number }]>(
          'DELETE FROM message_search WHERE rowid > (@num << 32) + CAST(@seq AS INTEGER) AND rowid < ((@num + 1) << 32)',
        ),
      deleteSession: () => db.prepare('DELETE FROM sessions WHERE id = ?'),
      leases: () =>
        db.prepare<[], LeaseRow & { session_id: string }>(
          'SELECT session_id, pid, hostname, acquired_at FROM writer_leases',
        ),
      lease: () =>
        db.prepare<[string], LeaseRow>(
          'SELECT pid, hostname, acquired_at FROM writer_leases WHERE session_id = ?',
        ),
      putLease: () =>
        db.prepare(`
        INSERT INTO writer_leases (session_id, pid, hostname, acquired_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (session_id) DO UPDATE SET
          pid = excluded.pid, hostname = excluded.hostname, acquired_at = excluded.acquired_at`),
      releaseLease: () =>
        db.prepare('DELETE FROM writer_leases WHERE session_id = ? AND pid = ? AND hostname = ?'),
    });
  }

  /**
   * Opens (creating if needed) `<home>/index.sqlite`, migrated to the newest schema. A damaged file (not a
   * database, or malformed where the open and the session table's first read look) is moved aside with its
   * WAL and a new empty one made: the index is derived from the session logs, which the caller re-registers
   * (`setAside` says where the damaged one went). Never deletes it.
   */
  static open(home: string, options: OpenSessionIndexOptions = {}): SessionIndex {
    fs.mkdirSync(home, { recursive: true });
    const file = path.join(home, 'index.sqlite');
    const open = (): Db => {
      const db = openDatabase(file, {
        migrations: INDEX_MIGRATIONS,
        pageSize: INDEX_PAGE_SIZE,
        ...(options.synchronous ? { synchronous: options.synchronous } : {}),
      });
      try {
        db.prepare('SELECT count(*) FROM sessions').pluck().get();
      } catch (error) {
        db.close();
        throw error;
      }
      return db;
    };
    let db: Db;
    let setAside: DamagedIndex | undefined;
    try {
      db = open();
    } catch (error) {
      if (!isDamage(error)) throw error;
      setAside = setAsideDamaged(file, (error as Error).message);
      db = open();
    }
    const index = new SessionIndex(home, db, options.fewHits ?? FEW_HITS, options.synchronous ?? 'FULL');
    index.messageText = options.messageText;
    index.setAside = setAside;
    return index;
  }

  /** Where a damaged index.sqlite was moved by this open, and why; undefined when the file was sound. */
  setAside: DamagedIndex | undefined;
  private messageText: MessageText | undefined;
  private readonly snippets: SearchSnippets;

  /** How many sessions have a row. */
  count(): number {
    return this.statements.count.get()!;
  }

  /** The id of every session with a row. */
  ids(): Set<string> {
    return new Set(this.statements.ids.all());
  }

  /** Returns one page of sessions, most recently updated first; with `search`, only sessions whose messages match. */
  list(options: ListSessionsOptions): SessionSummary[] {
    const limit = Math.min(Math.max(Math.floor(options.limit), 1), MAX_PAGE);
    const offset = Math.max(Math.floor(options.offset ?? 0), 0);
    const query = options.search === undefined ? undefined : toSearchQuery(options.search);
    const page: PageParams = { all: options.includeArchived ? 1 : 0, limit, offset };
    if (query !== undefined) {
      const search =
        this.statements.countHits.get(query)! > this.fewHits ? 'searchManyHits' : 'searchFewHits';
      const rows = this.statements[search].all({ ...page, project: options.projectFolder ?? null, query });
      return this.withSnippets(query, rows);
    }
    const rows =
      options.projectFolder !== undefined
        ? this.statements.listProject.all({ ...page, project: options.projectFolder })
        : this.statements.listAll.all(page);
    return rows.map(rowToSessionSummary);
  }

  /** The rows with the snippet of their newest hit, its text read from the log (the title: seq 0, the row's). */
  private withSnippets(query: string, rows: readonly SessionRow[]): SessionSummary[] {
    const texts = rows.flatMap((row) => {
      if (row.hit === undefined || row.hit === null) return [];
      const seq = row.hit - row.num * 2 ** 32;
      const text = seq === 0 ? (row.title ?? undefined) : this.messageText?.(row.id, seq, row.last_seq);
      return text === undefined ? [] : [{ rowid: row.hit, text }];
    });
    const snippets = this.snippets.make(query, texts);
    return rows.map((row) => {
      const snippet = row.hit === undefined || row.hit === null ? undefined : snippets.get(row.hit);
      return { ...rowToSessionSummary(row), ...(snippet === undefined ? {} : { snippet }) };
    });
  }

  /** Returns the session's row, or undefined when the home has no such session. */
  get(id: string): SessionSummary | undefined {
    const row = this.statements.get.get(id);
    return row ? rowToSessionSummary(row) : undefined;
  }

  /** Archives or unarchives a session (archived sessions are left out of `list` by default); false if unknown. */
  setArchived(id: string, archived: boolean): boolean {
    return this.statements.setArchived.run(archived ? 1 : 0, id).changes > 0;
  }

  /**
   * Brings a connection kept open between a host's opens (main/core/log/keptConnections.ts) to the newest schema,
   * as `open` does: another build may have migrated the file since (a newer one throws SchemaTooNewError).
   */
  migrate(): void {
    migrate(this.db, INDEX_MIGRATIONS);
  }

  /**
   * Makes every commit so far durable, also those made with `durable: false`: a checkpoint fsyncs the WAL first
   * (synchronous NORMAL), whether or not it can then copy every frame back while others read.
   */
  makeDurable(): void {
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }

  /** Runs `fn` in one write transaction (registerSession calls inside it commit together: a batch of imports). */
  inOneTransaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** Closes the connection. Idempotent. */
  close(): void {
    if (this.db.open) this.db.close();
  }

  // The methods below are the session log's: it is the only writer of index rows.

  /**
   * Registers a new session in one transaction: its row, the index update of its first events and,
   * with `lease`, this process's writer lease. Throws (and registers nothing) if the id exists.
   */
  registerSession(
    row: NewSessionRow,
    update: IndexUpdate,
    options: { lease?: boolean; durable?: boolean } = {},
  ): void {
    const register = this.db.transaction(() => {
      this.statements.insert.run(toSessionValues(row));
      this.recordAppend(
        row.id,
        row.title !== undefined && update.renamedTitle === undefined
          ? { ...update, renamedTitle: row.title }
          : update,
      );
      if (options.lease)
        this.statements.putLease.run(row.id, process.pid, this.hostname, new Date().toISOString());
    });
    if (this.synchronous === 'FULL' || options.durable === false) {
      register.immediate();
      return;
    }
    // Durable unless the caller says otherwise: a session whose row a power cut lost would be missing from the
    // list until an `openSessionIndex` re-registers it from its log. (`durable: false`: a history import of many
    // sessions, whose rows the connection's close checkpoints, durably, at the end of the run.)
    this.db.pragma('synchronous = FULL');
    try {
      register.immediate();
    } finally {
      this.db.pragma(`synchronous = ${this.synchronous}`);
    }
  }

  /** Adds the row of a session the index lost (its log exists); leaves an existing row as it is. */
  restoreSession(row: NewSessionRow): void {
    // Nearly always present: a read first spares every writer's open a write transaction (and its fsync).
    if (this.statements.num.get(row.id) !== undefined) return;
    this.statements.insertIfMissing.run(toSessionValues(row));
  }

  /**
   * Rebuilds the rows of sessions the index lacks, from their logs (`updates`: what their events tell, in
   * seq order), in one transaction; a session that has a row by then (its writer restored it) is left
   * alone. Returns how many rows were made.
   */
  restoreSessions(entries: readonly { row: NewSessionRow; updates: readonly IndexUpdate[] }[]): number {
    const restore = this.db.transaction(() => {
      let made = 0;
      for (const { row, updates } of entries) {
        if (this.statements.insertIfMissing.run(toSessionValues(row)).changes === 0) continue;
        made += 1;
        for (const [n, update] of updates.entries()) {
          const titled = n === 0 && row.title !== undefined && update.renamedTitle === undefined;
          this.recordAppend(row.id, titled ? { ...update, renamedTitle: row.title } : update);
        }
      }
      return made;
    });
    return restore.immediate();
  }

  /** Where the index row stands in the log, or undefined if the session has no row. */
  position(id: string): IndexPosition | undefined {
    const row = this.statements.position.get(id);
    return row && { lastSeq: row.last_seq, status: StoredStatus.parse(row.status) };
  }

  /** Applies an append to the session's row and search text, in one transaction. */
  recordAppend(id: string, update: IndexUpdate): void {
    this.db.transaction(() => {
      const num = this.statements.num.get(id);
      if (num === undefined) throw new Error(`session ${id} has no row in index.sqlite`);
      this.statements.update.run({
        id,
        lastSeq: update.lastSeq,
        updatedAt: toIndexTime(update.updatedAt),
        status: update.status,
        title: update.title ?? null,
        renamedTitle: update.renamedTitle ?? null,
        provider: update.provider ?? null,
        model: update.model ?? null,
      });
      for (const message of update.messages) {
        this.statements.insertMessage.run({ num, seq: message.seq, text: message.text });
      }
      // The title is searchable too, at seq 0 (no event has it), replaced by each rename.
      if (update.renamedTitle !== undefined) {
        this.statements.insertMessage.run({ num, seq: 0, text: update.renamedTitle });
      }
    })();
  }

  /**
   * Applies an update made from the log by someone other than its writer (a reader catching up a dead
   * writer's row), only if the row is still at `fromLastSeq`: a writer that moved it meanwhile knows better.
   * Returns whether it was applied.
   */
  recordCatchUp(id: string, fromLastSeq: number, update: IndexUpdate): boolean {
    return this.db
      .transaction((): boolean => {
        if (this.statements.position.get(id)?.last_seq !== fromLastSeq) return false;
        this.recordAppend(id, update);
        return true;
      })
      .immediate();
  }

  /** Sessions whose writer lease is held by a process known to be gone (it was killed mid-session). */
  abandonedLeases(): string[] {
    return this.statements.leases
      .all()
      .filter((row) => isLeaseStale({ pid: row.pid, hostname: row.hostname, acquiredAt: row.acquired_at }))
      .map((row) => row.session_id);
  }

  /** Forgets everything after `lastSeq` (the log lost commits the index had seen: power loss under NORMAL). */
  truncateTo(id: string, lastSeq: number, status: SessionStatus): void {
    this.db.transaction(() => {
      const num = this.statements.num.get(id);
      if (num === undefined) return;
      this.statements.deleteMessagesAfter.run({ num, seq: lastSeq });
      this.statements.truncate.run({ id, lastSeq, status });
    })();
  }

  /** Sets the status without an append (a turn started or ended). */
  setStatus(id: string, status: SessionStatus, touchedAt?: string): void {
    // A turn that starts is activity: `touchedAt` moves the session up the list before its events are indexed.
    if (touchedAt !== undefined) this.statements.setStatusTouched.run(status, toIndexTime(touchedAt), id);
    else this.statements.setStatus.run(status, id);
  }

  /** Removes a session's row, search text and lease (its folder is the caller's). */
  removeSession(id: string): void {
    this.db.transaction(() => {
      const num = this.statements.num.get(id);
      if (num === undefined) return;
      this.statements.deleteMessagesAfter.run({ num, seq: -1 });
      this.statements.deleteSession.run(id);
    })();
  }

  /**
   * Takes the session's writer lease for this process, replacing a lease whose holder is gone.
   * Returns undefined when taken, else the live holder (possibly this very process).
   */
  acquireLease(id: string): LeaseHolder | undefined {
    return this.db
      .transaction((): LeaseHolder | undefined => {
        const row = this.statements.lease.get(id);
        if (row) {
          const holder = { pid: row.pid, hostname: row.hostname, acquiredAt: row.acquired_at };
          const self = holder.pid === process.pid && holder.hostname === this.hostname;
          if (self || !isLeaseStale(holder)) return holder;
        }
        this.statements.putLease.run(id, process.pid, this.hostname, new Date().toISOString());
        return undefined;
      })
      .immediate();
  }

  /** Returns the session's lease holder, live or not, or undefined when nobody holds it. */
  leaseHolder(id: string): LeaseHolder | undefined {
    const row = this.statements.lease.get(id);
    return row && { pid: row.pid, hostname: row.hostname, acquiredAt: row.acquired_at };
  }

  /** Releases the lease if this process holds it. Safe to call after `close` (does nothing then). */
  releaseLease(id: string): void {
    if (!this.db.open) return;
    this.statements.releaseLease.run(id, process.pid, this.hostname);
  }
}
