import type { SessionEvent } from '../log/events.js';
import type { TraceEntry } from '../log/sessionLog.js';

/** Token counts of one or more model requests, as the providers reported them (input excludes cache reads). */
export type TokenCounts = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
};

/** Tokens with their cost. `costKnown` is false when some request's model has no price in the catalogue. */
export type TokensAndCost = TokenCounts & {
  /** USD, summed over the requests whose model has a price. */
  costUsd: number;
  costKnown: boolean;
};

/** What a timeline stage is; `other` for trace stages this module does not know yet. */
export type StageKind =
  | 'projection'
  | 'request'
  | 'time_to_first_token'
  | 'stream'
  | 'retry'
  | 'tool'
  | 'approval_wait'
  | 'compaction'
  | 'persistent'
  | 'other';

/** One bar of a turn's timeline. Offsets and durations are milliseconds; offsets count from the turn's start. */
export type TimelineStage = {
  kind: StageKind;
  /** The trace stage name (`tool:run_command`, `persistent_commit`…), or `approval_wait`. */
  name: string;
  startedAt: string;
  startOffsetMs: number;
  durationMs: number;
  /** For tools and approval waits: the tool and the model's call id. */
  tool?: string;
  toolCallId?: string;
  /** For approval waits: the approval_request's seq and, once decided, how. */
  requestSeq?: number;
  decision?: 'granted' | 'denied';
  /** An approval still waiting: its duration runs to `now` (0 without one). */
  pending?: boolean;
  /** Whatever the trace record carried (retry reason, compaction status, tool error flag…). */
  detail?: unknown;
};

/** A subagent a turn spawned, with the child's own summary when it could be read. */
export type SubagentTrace = {
  childId: string;
  toolCallId?: string;
  task: string;
  /** Seq of subagent_started in the parent. */
  startedSeq: number;
  /** Set once the parent recorded subagent_result. */
  finished: boolean;
  outOfBudget?: boolean;
  /** The child's own summary (its subagents nested again), absent when `missing` says why. */
  summary?: SessionTraceSummary;
  missing?: 'not_found' | 'depth_limit' | 'cycle';
};

/** One turn (the Nth user message and everything until the next one): its timeline, tokens and cost. */
export type TurnTraceSummary = TokensAndCost & {
  turn: number;
  /** The user's prompt, first 200 characters. */
  prompt?: string;
  startedAt: string;
  /** From the first stage (or the prompt) to the last stage or event of the turn. */
  durationMs: number;
  /** Stages in start order. */
  stages: TimelineStage[];
  /** Model requests answered (assistant messages recorded). */
  requests: number;
  retries: number;
  tools: number;
  compactions: number;
  /** Time spent waiting for the user's approval decisions (pending ones up to `now`). */
  approvalWaitMs: number;
  subagents: SubagentTrace[];
};

/** A point of the per-turn chart. */
export type TurnPoint = TokenCounts & { turn: number; totalTokens: number; costUsd: number };

/** A session's trace: totals, the per-turn chart series, and each turn's timeline. */
export type SessionTraceSummary = {
  sessionId: string;
  model: string;
  turns: TurnTraceSummary[];
  totals: TokensAndCost & {
    turns: number;
    requests: number;
    durationMs: number;
    approvalWaitMs: number;
    /** cacheRead / (input + cacheRead + cacheWrite); null before any input was counted. */
    cacheHitRate: number | null;
  };
  /** Tokens and cost of this session plus every subagent below it that could be read. */
  totalsWithSubagents: TokensAndCost;
  perTurn: TurnPoint[];
};

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
