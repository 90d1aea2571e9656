import type { SessionEvent } from '../../common/events.js';
import type { SessionIndex, SessionStatus } from '../../store/sessionIndex.js';
import { toIndexUpdate } from './logRows.js';
import { indexNotice } from './indexNotice.js';
import { messageOf } from './logErrors.js';

/*
 * How a writer's index row follows its log. The log is the truth and commits first (two files cannot share
 * one transaction in WAL mode); the row (counts, time, status, title, search text) is derived from it.
 *
 * Outside a turn every append is indexed at once. During a turn (`setRunning(true)`) the events that change
 * nothing the list shows but counts and search text (assistant messages, tool calls and results) are held
 * in memory and indexed together at the turn's end, when PENDING_LIMIT of them wait, or on close: one
 * index.sqlite transaction (row + FTS) per turn instead of one per event, which was most of the bytes
 * written per step. Anything that changes the row otherwise (the first user message: the title; a status
 * change such as an approval request; a rename, a model switch) is indexed at once, with what was held.
 *
 * A kill loses only what was held in memory: the log has it, and the row is caught up by seq watermark on
 * the next writer's open (`catchUp`) or on the next `openSessionIndex` (indexRebuild.ts). Until then the
 * row's `lastSeq` says how far it is indexed (`indexLag` in indexLag.ts tells a reader by how much).
 */

/** Events held back from the index at most, even during a long turn. */
export const PENDING_LIMIT = 256;

/** Events read per page when catching the index up from the log. */
const INDEX_PAGE = 5_000;

/** Kinds that, while a turn runs, are indexed at its end rather than on append (and user messages but the first). */
const DEFERRABLE = new Set<string>(['assistant_message', 'tool_call_started', 'tool_result']);

/** What the follower needs of its log (a SessionLog, which is its only user). */
export type FollowedLog = {
  readonly id: string;
  lastSeq(): number;
  read(options: { fromSeq: number; limit: number }): SessionEvent[];
  /** The status the list shows for the log. */
  indexStatus(): SessionStatus;
};

export class IndexFollower {
  private pending: SessionEvent[] = [];
  /** A write to the index failed: the row is caught up from the log, not from `pending`. */
  private behind = false;
  /** The status the row was last given by this writer. */
  private indexedStatus: SessionStatus | undefined;

  constructor(
    private readonly log: FollowedLog,
    private readonly index: SessionIndex,
    /** Seq of the log's first user message (the title comes from it), if any. */
    private readonly firstUserMessageSeq: () => number | undefined,
  ) {}

  /** A write to the index failed since the last catch-up: the row lags the log. */
  get isBehind(): boolean {
    return this.behind;
  }

  /** Events appended but not yet in the index row (held during a turn, or lost to a failed write). */
  get pendingCount(): number {
    return this.pending.length;
  }

  /**
   * After a commit of `events`, with the status the log now derives: indexes them now, or, during a turn, holds
   * them if nothing else changes. Runs on every durable append, so it takes the status its log already knows and
   * tests the events without a closure (#19: the append p50 against the JSON-lines floor).
   */
  appended(events: readonly SessionEvent[], running: boolean, status: SessionStatus): void {
    if (this.behind) {
      this.tryCatchUp();
      return;
    }
    const deferrable =
      running &&
      status === this.indexedStatus &&
      this.pending.length + events.length < PENDING_LIMIT &&
      this.allDeferrable(events);
    // Indexed loops: this runs once per append, too few times to be optimized, and there a for-of's iterator costs.
    for (let i = 0; i < events.length; i += 1) this.pending.push(events[i] as SessionEvent);
    if (!deferrable) this.flush(status);
  }

  /**
   * The turn engine's append during a running turn, decided without deriving the status: an assistant message,
   * tool call or result leaves the status as the row has it, and while the row says `running` (set by this
   * writer with the turn running, every non-deferrable event since indexed at once) the status is still
   * `running` after it (only approvals, interruptions and errors change it, and none of them is held). True when
   * the event is held; false leaves it to `appended`.
   */
  holds(event: SessionEvent): boolean {
    if (this.indexedStatus !== 'running' || this.behind || this.pending.length + 1 >= PENDING_LIMIT)
      return false;
    if (!DEFERRABLE.has(event.kind)) return false;
    this.pending.push(event);
    return true;
  }

  private allDeferrable(events: readonly SessionEvent[]): boolean {
    for (let i = 0; i < events.length; i += 1) {
      const event = events[i] as SessionEvent;
      if (!DEFERRABLE.has(event.kind) && !this.isLaterUserMessage(event)) return false;
    }
    return true;
  }

  /** A user message after the first: only counts and search text change, the title stays. */
  private isLaterUserMessage(event: SessionEvent): boolean {
    if (event.kind !== 'user_message') return false;
    const first = this.firstUserMessageSeq();
    return first !== undefined && first < event.seq;
  }

  /**
   * Writes what is held, with `status`; only the status when nothing is held and it changed (with
   * `touchedAt`, a turn's start, also the row's updated time, so the list orders it as active).
   */
  flush(status: SessionStatus = this.log.indexStatus(), touchedAt?: string): void {
    if (this.behind) {
      this.tryCatchUp();
      return;
    }
    try {
      if (this.pending.length > 0) {
        this.index.recordAppend(this.log.id, toIndexUpdate(this.pending, status));
        this.pending = [];
      } else if (status !== this.indexedStatus) {
        this.index.setStatus(this.log.id, status, touchedAt);
      }
      this.indexedStatus = status;
    } catch (error) {
      this.behind = true;
      indexNotice(`session ${this.log.id}: index.sqlite not updated, will catch up: ${messageOf(error)}`);
    }
  }

  /** `flush`, never throwing (close, exit). */
  tryFlush(): void {
    try {
      this.flush();
    } catch (error) {
      indexNotice(`session ${this.log.id}: index.sqlite still behind: ${messageOf(error)}`);
    }
  }

  private tryCatchUp(): void {
    try {
      this.catchUp();
    } catch (error) {
      indexNotice(`session ${this.log.id}: index.sqlite still behind: ${messageOf(error)}`);
    }
  }

  /** Brings the index row to the log's last seq by watermark, page by page (each page one index transaction). */
  catchUp(): void {
    const last = this.log.lastSeq();
    const position = this.index.position(this.log.id);
    if (!position) throw new Error(`session ${this.log.id} has no row in index.sqlite`);
    const status = this.log.indexStatus();
    if (position.lastSeq > last) {
      this.index.truncateTo(this.log.id, last, status);
    } else {
      for (let from = position.lastSeq + 1; from <= last; from += INDEX_PAGE) {
        const page = this.log.read({ fromSeq: from, limit: INDEX_PAGE });
        if (page.length === 0) break;
        this.index.recordAppend(this.log.id, toIndexUpdate(page, status));
      }
      if (position.status !== status) this.index.setStatus(this.log.id, status);
    }
    this.pending = [];
    this.behind = false;
    this.indexedStatus = status;
  }
}
