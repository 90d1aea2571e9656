import { z } from 'zod';
import { eventBase } from './eventBase.js';

// Issue #31: what a request cost (Usage) and the event kinds of spend caps, a session's limit on the money and
// tokens its model requests spend. events.ts imports them into SessionEvent.

const { base } = eventBase;

/** Token counts as the provider reported them for one request. */
export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative().optional(),
  cacheWriteTokens: z.number().int().nonnegative().optional(),
  /** Of `outputTokens`, those the model spent reasoning (thinking), as the provider reported them. */
  reasoningTokens: z.number().int().nonnegative().optional(),
  /** The server reported no usage: Keel estimated these counts from the request and reply (#31). */
  estimated: z.literal(true).optional(),
});
export type Usage = z.infer<typeof Usage>;

/**
 * A session's spend cap set or changed: at creation (the command's flags or settings' default) or later
 * (`keel budget`, the app). A field absent leaves that cap as it was; null removes it.
 */
export const BudgetSet = z.object({
  ...base,
  kind: z.literal('budget_set'),
  usd: z.number().nonnegative().nullable().optional(),
  tokens: z.number().int().nonnegative().nullable().optional(),
  /** Who set it: the session's creation, the settings' default, or the user later. */
  source: z.enum(['created', 'settings', 'user']).optional(),
});

/** How much was spent, in money (USD) and tokens (input, cache read and write, output). */
export const SpendFigures = z.object({
  usd: z.number().nonnegative(),
  tokens: z.number().int().nonnegative(),
});
export type SpendFigures = z.infer<typeof SpendFigures>;

/**
 * A model request was not sent because it could cross a cap: what was spent (on what), the request's worst
 * case (its input estimate plus its max output, priced), the cap and how to raise it. `overBy`: the cap was
 * already crossed (by the last request's actual input above its estimate) by this much, in the cap's unit.
 */
export const BudgetReached = z.object({
  ...base,
  kind: z.literal('budget_reached'),
  limit: z.enum(['usd', 'tokens']),
  cap: z.number().nonnegative(),
  spent: SpendFigures,
  /** What the spend went to: this session's own requests, compaction summaries, subagents. */
  spentOn: z.object({ requests: SpendFigures, compaction: SpendFigures, subagents: SpendFigures }),
  request: z.object({
    inputTokens: z.number().int().nonnegative(),
    maxOutputTokens: z.number().int().nonnegative(),
    /** Absent when the model has no price (a USD cap cannot be held then). */
    usd: z.number().nonnegative().optional(),
  }),
  overBy: z.number().positive().optional(),
  /** The sentence shown in the transcript and by `keel run`, with how to raise the cap. */
  message: z.string(),
});
