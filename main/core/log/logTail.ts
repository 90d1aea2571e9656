import type { SessionEvent } from '../../common/events.js';
import type { SessionStatus } from '../../store/sessionIndex.js';
import type { LogStatements } from './logStatements.js';
import type { LogTail } from './logTypes.js';

/**
 * What a session log knows of its own end without asking SQLite on every append: the newest event's seq
 * and kind, and the approval requests not yet answered. A writer is the log's only writer (its lease), so
 * after reading them once it keeps them in step with its own appends; a read-only log reads the tail each
 * time. Anything else that writes events (create, import), a refused or rolled-back append, forgets it.
 */
export class LogTailState {
  private tail: LogTail | undefined;
  private unanswered: Set<number> | undefined;

  constructor(
    private readonly statements: Pick<LogStatements, 'lastSeq' | 'lastKind' | 'unansweredRequests'>,
    /** Whether the tail may be kept (a writer, still open). */
    private readonly keeps: () => boolean,
  ) {}

  /** Whether the tail is remembered (an append that fails with it remembered may have met a stale one). */
  get known(): boolean {
    return this.tail !== undefined;
  }

  /** The newest event's seq (0 for an empty log) and kind. */
  current(): LogTail {
    if (this.tail !== undefined) return this.tail;
    const seq = this.statements.lastSeq.get() ?? 0;
    const tail = { seq, kind: seq === 0 ? undefined : this.statements.lastKind.get() };
    if (this.keeps()) this.tail = tail;
    return tail;
  }

  /** The newest event's seq (0 for an empty log): a read-only log asks for the seq alone, not the kind too. */
  seq(): number {
    if (this.tail !== undefined) return this.tail.seq;
    if (this.keeps()) return this.current().seq;
    return this.statements.lastSeq.get() ?? 0;
  }

  /** The tail is read again on next use. */
  forget(): void {
    this.tail = undefined;
  }

  /** These events were committed, in order, after the tail. */
  appended(events: readonly SessionEvent[]): void {
    const newest = events[events.length - 1];
    if (newest === undefined) return;
    if (this.keeps()) this.tail = { seq: newest.seq, kind: newest.kind };
    if (!this.unanswered) return;
    for (let i = 0; i < events.length; i += 1) {
      const event = events[i] as SessionEvent; // indexed: once per append, not optimized (indexFollower.ts)
      if (event.kind === 'approval_request') this.unanswered.add(event.seq);
      if (
        event.kind === 'approval_granted' ||
        event.kind === 'approval_denied' ||
        event.kind === 'plan_approved' ||
        event.kind === 'plan_rejected'
      ) {
        this.unanswered.delete(event.requestSeq);
      }
    }
  }

  /** The status the events give: an unanswered approval, else an interruption or error last, else running/idle. */
  status(running: boolean): SessionStatus {
    this.unanswered ??= new Set(this.statements.unansweredRequests.all());
    if (this.unanswered.size > 0) return 'awaiting_approval';
    const lastKind = this.current().kind;
    if (lastKind === 'interrupted') return 'interrupted';
    if (lastKind === 'error') return 'error';
    return running ? 'running' : 'idle';
  }
}
