import { z } from 'zod';

// The shape of `keel cost` and the app's spend figures (#31) as zod schemas, importing nothing but zod, so the
// IPC contract (compiled for the browser too) can carry a report and validate it.

const count = z.number().int().nonnegative();

/** Tokens and their cost. `usdKnown` is false when some request's model has no documented price. */
export const Spent = z.object({
  tokens: count,
  usd: z.number().nonnegative(),
  usdKnown: z.boolean(),
});
export type Spent = z.infer<typeof Spent>;

/**
 * Where a session's money went: totals (its own requests, compaction summaries, subagents), by kind, by turn,
 * by model, by subagent, the cache hit rate, the caps, and the newest turn (for a running turn's burn rate).
 */
export const CostReport = z.object({
  sessionId: z.string(),
  /** The day the catalogue's list prices were read (YYYY-MM-DD): costs are priced as of then. */
  pricesAsOf: z.string(),
  caps: z.object({ usd: z.number().nonnegative().optional(), tokens: count.optional() }),
  /** Everything: own requests + compaction summaries + subagents. */
  total: Spent,
  /**
   * By what was billed. `input` excludes cache reads and writes; `reasoning` is the part of `output` spent
   * reasoning (already in `output`); `compaction` is the summary requests, all kinds together.
   */
  byKind: z.object({
    input: Spent,
    cacheRead: Spent,
    cacheWrite: Spent,
    output: Spent,
    reasoning: Spent,
    compaction: Spent,
  }),
  /** Own requests and compaction per turn (turn 0: before the first prompt). */
  byTurn: z.array(Spent.extend({ turn: count, requests: count, startedAt: z.string().optional() })),
  byModel: z.array(Spent.extend({ model: z.string(), requests: count })),
  bySubagent: z.array(Spent.extend({ childId: z.string(), task: z.string(), requests: count })),
  /** cacheRead / (input + cacheRead + cacheWrite) over own requests; null before any prompt was counted. */
  cacheHitRate: z.number().min(0).max(1).nullable(),
  /** Own model requests recorded (assistant messages with usage). */
  requests: count,
  /** Of those, the ones whose server reported no usage (Keel's estimate stands in). */
  estimatedRequests: count,
  /** Requests (compaction included) of models without a documented price. */
  unpricedRequests: count,
  /** The newest turn: when it started and what it spent so far (a running turn's burn rate). */
  latestTurn: z
    .object({ turn: count, startedAt: z.string(), lastAt: z.string(), tokens: count, usd: z.number() })
    .optional(),
});
export type CostReport = z.infer<typeof CostReport>;
