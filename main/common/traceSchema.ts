import { z } from 'zod';

// The shape of a trace summary as zod schemas, importing nothing but zod, so the IPC contract (compiled
// for the browser too) can carry a summary and validate it.

const ms = z.number().nonnegative();
const count = z.number().int().nonnegative();

/** Token counts of one or more model requests, as the providers reported them (input excludes cache reads). */
export const TokenCounts = z.object({
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  /** Of outputTokens, those spent reasoning; present only when a provider reported some. */
  reasoningTokens: count.optional(),
});
export type TokenCounts = z.infer<typeof TokenCounts>;

/** Tokens with their cost. `costKnown` is false when some request's model has no price in the catalogue. */
export const TokensAndCost = TokenCounts.extend({
  /** USD, summed over the requests whose model has a price. */
  costUsd: z.number().nonnegative(),
  costKnown: z.boolean(),
});
export type TokensAndCost = z.infer<typeof TokensAndCost>;

/** What a timeline stage is; `other` for trace stages this module does not know yet. */
export const StageKind = z.enum([
  'projection',
  'request',
  'time_to_first_token',
  'stream',
  'retry',
  'tool',
  'approval_wait',
  'compaction',
  'persistent',
  'other',
]);
export type StageKind = z.infer<typeof StageKind>;

/** One bar of a turn's timeline. Offsets and durations are milliseconds; offsets count from the turn's start. */
export const TimelineStage = z.object({
  kind: StageKind,
  /** The trace stage name (`tool:run_command`, `persistent_commit`…), or `approval_wait`. */
  name: z.string(),
  startedAt: z.string(),
  startOffsetMs: ms,
  durationMs: ms,
  /** For tools and approval waits: the tool and the model's call id. */
  tool: z.string().optional(),
  toolCallId: z.string().optional(),
  /** For approval waits: the approval_request's seq and, once decided, how. */
  requestSeq: z.number().int().positive().optional(),
  decision: z.enum(['granted', 'denied']).optional(),
  /** An approval still waiting: its duration runs to `now` (0 without one). */
  pending: z.boolean().optional(),
  /** Whatever the trace record carried (retry reason, compaction status, tool error flag…). */
  detail: z.unknown().optional(),
});
export type TimelineStage = z.infer<typeof TimelineStage>;

/** A point of the per-turn chart. */
export const TurnPoint = TokenCounts.extend({
  turn: count,
  totalTokens: count,
  costUsd: z.number().nonnegative(),
});
export type TurnPoint = z.infer<typeof TurnPoint>;

/** A subagent a turn spawned, with the child's own summary when it could be read. */
export type SubagentTrace = {
  childId: string;
  toolCallId?: string | undefined;
  task: string;
  /** Seq of subagent_started in the parent. */
  startedSeq: number;
  /** Set once the parent recorded subagent_result. */
  finished: boolean;
  outOfBudget?: boolean | undefined;
  /** The child's own summary (its subagents nested again), absent when `missing` says why. */
  summary?: SessionTraceSummary | undefined;
  missing?: 'not_found' | 'depth_limit' | 'cycle' | undefined;
};

/** One turn (the Nth user message and everything until the next one): its timeline, tokens and cost. */
export type TurnTraceSummary = TokensAndCost & {
  turn: number;
  /** The user's prompt, first 200 characters. */
  prompt?: string | undefined;
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

/** Schema of SubagentTrace (recursive through the child's summary). */
export const SubagentTraceSchema: z.ZodType<SubagentTrace> = z.lazy(() =>
  z.object({
    childId: z.string(),
    toolCallId: z.string().optional(),
    task: z.string(),
    startedSeq: z.number().int().positive(),
    finished: z.boolean(),
    outOfBudget: z.boolean().optional(),
    summary: SessionTraceSummarySchema.optional(),
    missing: z.enum(['not_found', 'depth_limit', 'cycle']).optional(),
  }),
);

/** Schema of TurnTraceSummary. */
export const TurnTraceSummarySchema: z.ZodType<TurnTraceSummary> = z.lazy(() =>
  TokensAndCost.extend({
    turn: count,
    prompt: z.string().optional(),
    startedAt: z.string(),
    durationMs: ms,
    stages: z.array(TimelineStage),
    requests: count,
    retries: count,
    tools: count,
    compactions: count,
    approvalWaitMs: ms,
    subagents: z.array(SubagentTraceSchema),
  }),
);

/** Schema of SessionTraceSummary: what a `trace.summary` channel returns. */
export const SessionTraceSummarySchema: z.ZodType<SessionTraceSummary> = z.lazy(() =>
  z.object({
    sessionId: z.string(),
    model: z.string(),
    turns: z.array(TurnTraceSummarySchema),
    totals: TokensAndCost.extend({
      turns: count,
      requests: count,
      durationMs: ms,
      approvalWaitMs: ms,
      cacheHitRate: z.number().min(0).max(1).nullable(),
    }),
    totalsWithSubagents: TokensAndCost,
    perTurn: z.array(TurnPoint),
  }),
);
