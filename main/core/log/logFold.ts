import type { SessionEvent } from '../../common/events.js';
import type { ProjectionView } from '../../common/payload.js';
import { ProjectionFold } from '../projection/fold.js';
import { rowToEvent, type EventRow } from './logRows.js';
import type { LogTallies, UsageTotals } from './logTallies.js';
import { readSnapshot, rowDigest, writeSnapshot } from './projectionSnapshot.js';

/*
 * A log's projection and tallies kept current across reads: from the log handle itself, a long-lived host's
 * LogCache, the snapshot file beside the log, or rebuilt from events, in that order; then extended with the
 * events after the seq they cover. Whatever the source, it is first checked against the log by the digests of
 * the row at its seq and of row 1.
 */

/** Where a log's projection came from when it was last brought up to date, and why a snapshot was not used. */
export type FoldOrigin = {
  source: 'handle' | 'cache' | 'snapshot' | 'rebuilt';
  /** Set when the snapshot file was looked at and not used. */
  snapshotProblem?: string;
};

/** A log's projection and tallies as of `seq`. */
export type LogFoldEntry = {
  seq: number;
  /** rowDigest of the row at `seq` and of row 1 (session_created): what the entry is checked against. */
  digest: string;
  firstDigest: string;
  /** Undefined after an event it could not follow (a rewind, a compaction taking effect): rebuilt when asked. */
  projection: ProjectionFold | undefined;
  /** Each computed (in SQLite) the first time it is asked for, then kept current. */
  tallies: LogTallies | undefined;
  /** The host message ids of the user messages (a retried message is recognised without a scan). */
  messageIds: Set<string> | undefined;
  /** Seq of the snapshot file on disk (0: none that matches). */
  snapshotSeq: number;
};

/** What the fold reads from its log (SessionLog's statements), all inside `transaction`. */
export type FoldSource = {
  id: string;
  dir: string;
  row(seq: number): EventRow | undefined;
  rowsAfter(seq: number): EventRow[];
  /** The projection view at the newest seq (index lookups; a rewound log read whole). */
  view(): ProjectionView;
  /** The tallies computed in SQLite from every row. */
  tallies(): LogTallies;
  /** The message ids of every user message (decodes them all). */
  messageIds(): Set<string>;
  transaction<T>(work: () => T): T;
};

/**
 * When a writer writes the snapshot: once the projection has `minMessages` (shorter ones project from events in
 * ms), and again once `minLag` events and a quarter of the projection's messages came after the one on disk
 * (the bytes written stay a small multiple of the payload; a cold open extends it by at most that many events).
 * Tests lower them to snapshot short logs.
 */
export const SNAPSHOT_POLICY = { minMessages: 1_000, minLag: 500, lagPerMessage: 0.25 };

/**
 * Projections of sessions a long-lived host (a harness, the app) keeps between turns: a log opened with the
 * cache takes its session's entry out, extends it, and puts it back when it closes. At most `entries`
 * sessions and about `bytes` of projected text are kept; the least recently used go first.
 */
export class LogCache {
  private readonly entries = new Map<string, LogFoldEntry>();

  constructor(
    private readonly limits: { entries: number; bytes: number } = { entries: 16, bytes: 256 << 20 },
  ) {}

  /** Takes a session's entry out (undefined when none); the log that took it puts it back. */
  take(dir: string): LogFoldEntry | undefined {
    const entry = this.entries.get(dir);
    this.entries.delete(dir);
    return entry;
  }

  put(dir: string, entry: LogFoldEntry): void {
    this.entries.delete(dir);
    this.entries.set(dir, entry);
    let bytes = 0;
    for (const kept of this.entries.values()) bytes += kept.projection?.bytes ?? 0;
    for (const [key, kept] of this.entries) {
      if (this.entries.size <= this.limits.entries && bytes <= this.limits.bytes) break;
      this.entries.delete(key);
      bytes -= kept.projection?.bytes ?? 0;
    }
  }

  /** Whether a session's entry is held. */
  has(dir: string): boolean {
    return this.entries.has(dir);
  }

  /** Sessions held (for tests). */
  get size(): number {
    return this.entries.size;
  }
}

/**
 * Brings `held` (the log handle's own entry), else the cache's, else the snapshot's, else a rebuilt one, up to
 * the log's newest seq, with its projection. Reads inside one transaction, so every part is of one seq.
 */
export function currentFold(
  source: FoldSource,
  held: LogFoldEntry | undefined,
  cache: LogCache | undefined,
  want: 'projection' | 'tallies' | 'messageIds' = 'projection',
): { entry: LogFoldEntry; origin: FoldOrigin } {
  return source.transaction(() => {
    const first = source.row(1);
    if (first === undefined) throw new Error(`session ${source.id} has no events`);
    const firstDigest = rowDigest(first);
    const matches = (seq: number, digest: string, firstOf: string): boolean => {
      const row = source.row(seq);
      return firstOf === firstDigest && row !== undefined && rowDigest(row) === digest;
    };
    let entry: LogFoldEntry | undefined;
    const origin: FoldOrigin = { source: 'rebuilt' };
    if (held !== undefined) {
      entry = held;
      origin.source = 'handle';
    } else {
      const cached = cache?.take(source.dir);
      if (cached !== undefined && matches(cached.seq, cached.digest, cached.firstDigest)) {
        entry = cached;
        origin.source = 'cache';
      } else {
        const snapshot = readSnapshot(source.dir);
        if ('problem' in snapshot) origin.snapshotProblem = snapshot.problem;
        else if (
          snapshot.sessionId !== source.id ||
          !matches(snapshot.seq, snapshot.digest, snapshot.firstDigest)
        )
          origin.snapshotProblem = `it does not match the log at seq ${snapshot.seq}`;
        else {
          entry = { tallies: undefined, messageIds: undefined, ...snapshot, snapshotSeq: snapshot.seq };
          origin.source = 'snapshot';
        }
      }
    }
    entry ??= rebuild(source, firstDigest);
    extend(source, entry);
    if (want === 'projection') entry.projection ??= ProjectionFold.fromView(source.view());
    if (want === 'tallies') entry.tallies ??= source.tallies();
    if (want === 'messageIds') entry.messageIds ??= source.messageIds();
    return { entry, origin };
  });
}

/** The entry of a log computed from its events (the projection from the view; the tallies when asked). */
function rebuild(source: FoldSource, firstDigest: string): LogFoldEntry {
  const projection = ProjectionFold.fromView(source.view());
  const row = source.row(projection.lastSeq);
  if (row === undefined) throw new Error(`session ${source.id}: no event ${projection.lastSeq}`);
  return {
    seq: projection.lastSeq,
    digest: rowDigest(row),
    firstDigest,
    projection,
    tallies: undefined,
    messageIds: undefined,
    snapshotSeq: 0,
  };
}

/** Folds the events after `entry.seq` into it. */
function extend(source: FoldSource, entry: LogFoldEntry): void {
  const rows = source.rowsAfter(entry.seq);
  const last = rows.at(-1);
  if (last === undefined) return;
  for (const row of rows) {
    // Every event was validated when it was appended.
    const event = rowToEvent(source.id, row, false);
    tally(entry, event);
    if (entry.projection !== undefined && !entry.projection.apply(event)) entry.projection = undefined;
  }
  entry.seq = last.seq;
  entry.digest = rowDigest(last);
}

/** The tallies and message ids of events folded one at a time (the same sums SQLite computes). */
export function tally(entry: Pick<LogFoldEntry, 'tallies' | 'messageIds'>, event: SessionEvent): void {
  const { tallies } = entry;
  if (event.kind === 'user_message' && event.messageId !== undefined) entry.messageIds?.add(event.messageId);
  if (tallies === undefined) return;
  if (event.kind === 'user_message') tallies.userMessages++;
  if (event.kind === 'assistant_message' && event.usage) {
    const { usage } = event;
    tallies.usage.inputTokens += usage.inputTokens;
    tallies.usage.outputTokens += usage.outputTokens;
    tallies.usage.cacheReadTokens += usage.cacheReadTokens ?? 0;
    tallies.usage.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    tallies.usage.reasoningTokens += usage.reasoningTokens ?? 0;
  }
}

/** Writes the entry as the session's snapshot when it is long enough and the one on disk lags (see above). */
export function persistFold(dir: string, sessionId: string, entry: LogFoldEntry): boolean {
  const projection = entry.projection;
  if (projection === undefined || projection.lastSeq !== entry.seq) return false;
  const size = projection.size;
  const lag = entry.seq - entry.snapshotSeq;
  if (lag <= 0 || size < SNAPSHOT_POLICY.minMessages) return false;
  if (lag < Math.max(SNAPSHOT_POLICY.minLag, size * SNAPSHOT_POLICY.lagPerMessage)) return false;
  writeSnapshot(dir, {
    sessionId,
    seq: entry.seq,
    digest: entry.digest,
    firstDigest: entry.firstDigest,
    projection,
    ...(entry.tallies ? { tallies: entry.tallies } : {}),
    ...(entry.messageIds ? { messageIds: entry.messageIds } : {}),
  });
  entry.snapshotSeq = entry.seq;
  return true;
}

/** The reads of a SessionLog a fold makes: its range statement (seq from, seq to, limit) and lookups. */
export function foldSourceOf(
  log: {
    id: string;
    dir: string;
    projectionView(options: { validate: false }): ProjectionView;
    countOfKind(kind: 'user_message'): number;
    usageTotals(): UsageTotals;
    readKinds(kinds: readonly ['user_message'], options: { validate: false }): SessionEvent[];
  },
  range: {
    get(from: number, to: number, limit: number): unknown;
    all(from: number, to: number, limit: number): unknown[];
  },
  transaction: <T>(work: () => T) => T,
): FoldSource {
  return {
    id: log.id,
    dir: log.dir,
    row: (seq) => range.get(seq, seq, 1) as EventRow | undefined,
    rowsAfter: (seq) => range.all(seq + 1, Number.MAX_SAFE_INTEGER, -1) as EventRow[],
    view: () => log.projectionView({ validate: false }),
    tallies: () => ({ userMessages: log.countOfKind('user_message'), usage: log.usageTotals() }),
    messageIds: () => {
      const ids = new Set<string>();
      for (const event of log.readKinds(['user_message'], { validate: false })) {
        if (event.kind === 'user_message' && event.messageId !== undefined) ids.add(event.messageId);
      }
      return ids;
    },
    transaction,
  };
}

/** One log handle's projection and tallies: current on demand, kept in the host's cache and the snapshot on close. */
export class LogProjection {
  private entry: LogFoldEntry | undefined;
  private last: FoldOrigin | undefined;

  constructor(
    private readonly source: FoldSource,
    private readonly cache: LogCache | undefined,
  ) {}

  /** Where the last `current` started from. */
  get origin(): FoldOrigin | undefined {
    return this.last;
  }

  /** The entry at the log's newest seq, with the part asked for. */
  current(want: 'projection' | 'tallies' | 'messageIds' = 'projection'): LogFoldEntry {
    try {
      const { entry, origin } = currentFold(this.source, this.entry, this.cache, want);
      this.entry = entry;
      this.last = origin;
      return entry;
    } catch (error) {
      this.entry = undefined; // possibly half extended: the next call starts over
      throw error;
    }
  }

  /**
   * The tallies at the newest seq: from the entry when this handle or the cache has one, else summed in SQLite
   * (a short-lived reader that wants the pin or the totals does not pay for building a projection).
   */
  tallies(): LogTallies {
    if (!this.kept()) return this.source.transaction(() => this.source.tallies());
    return this.current('tallies').tallies as LogTallies;
  }

  /** Whether a user message has this host message id (kept like the tallies; else every one is decoded). */
  hasMessageId(id: string): boolean {
    if (!this.kept()) return this.source.messageIds().has(id);
    return (this.current('messageIds').messageIds as Set<string>).has(id);
  }

  /** Whether this handle or the host's cache holds an entry to extend. */
  private kept(): boolean {
    return this.entry !== undefined || this.cache?.has(this.source.dir) === true;
  }

  /**
   * On the log's close: a writer brings its projection up to date and writes the snapshot when the one on disk
   * lags; the entry goes back to the host's cache. A snapshot that cannot be written only costs time later.
   */
  close(writable: boolean): void {
    const held = this.entry;
    if (held === undefined) return;
    this.entry = undefined;
    try {
      if (writable)
        persistFold(this.source.dir, this.source.id, currentFold(this.source, held, undefined).entry);
      this.cache?.put(this.source.dir, held);
    } catch (error) {
      process.emitWarning(`session ${this.source.id}: projection snapshot not written: ${String(error)}`);
    }
  }

  /** An import's snapshot, from the events just written (a long imported session opens fast at once). */
  snapshotImport(events: readonly SessionEvent[]): void {
    const first = this.source.row(1);
    const lastSeq = events.at(-1)?.seq;
    const row = lastSeq === undefined ? undefined : this.source.row(lastSeq);
    if (first === undefined || row === undefined) return;
    const usage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    };
    const counted = { tallies: { userMessages: 0, usage }, messageIds: new Set<string>() };
    for (const event of events) tally(counted, event);
    persistFold(this.source.dir, this.source.id, {
      seq: row.seq,
      digest: rowDigest(row),
      firstDigest: rowDigest(first),
      projection: ProjectionFold.fromEvents(events),
      ...counted,
      snapshotSeq: 0,
    });
  }
}
