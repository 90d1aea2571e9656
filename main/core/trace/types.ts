import type { SessionEvent } from '../../common/events.js';
import type { TraceEntry } from '../log/sessionLog.js';

/** What a summary is computed from: one session's events (seq order) and trace records (write order). */
export type SessionTraceSource = {
  events: readonly SessionEvent[];
  trace: readonly TraceEntry[];
};

/** Options of summarizeSession. */
export type SummarizeOptions = {
  /** Reads a child session for nesting; undefined when it does not exist. Without it, children are not nested. */
  loadChild?: (childId: string) => SessionTraceSource | undefined;
  /** Levels of subagents nested below this session (default 3). */
  maxDepth?: number;
  /** The time pending approval waits run to; without it they count 0 ms. */
  now?: Date;
};
