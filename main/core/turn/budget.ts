import type { SpendFigures, Usage } from '../../common/events.js';
import type { Payload } from '../../common/payload.js';
import { costOf, findModel } from '../../providers/catalogue.js';

/** A session's caps: USD and tokens (input, cache read, cache write and output); absent: no cap of that kind. */
export type Caps = { usd?: number; tokens?: number };

/**
 * What a session spent, by where it went: its own model requests, its compaction summaries, its subagents.
 * `unpriced` counts requests of models without a documented price (their money is unknown, not zero).
 */
export type Spend = {
  requests: SpendFigures;
  compaction: SpendFigures;
  subagents: SpendFigures;
  unpriced: number;
};

/** No spend at all. */
export function emptySpend(): Spend {
  return {
    requests: { usd: 0, tokens: 0 },
    compaction: { usd: 0, tokens: 0 },
    subagents: { usd: 0, tokens: 0 },
    unpriced: 0,
  };
}

/** Every token a request was billed for: input, cache read, cache write and output (reasoning is output). */
export function usageTokens(usage: Usage): number {
  return (
    usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
  );
}

/** Adds one request's usage, priced for `model`, to a part of the spend (in place). */
export function addSpend(spend: Spend, part: 'requests' | 'compaction', usage: Usage, model: string): void {
  const into = spend[part];
  into.tokens += usageTokens(usage);
  const usd = costOf(usage, model);
  if (usd === undefined) spend.unpriced += 1;
  else into.usd += usd;
}

/** The whole spend: own requests, compaction and subagents. */
export function spentTotal(spend: Spend): SpendFigures {
  return {
    usd: spend.requests.usd + spend.compaction.usd + spend.subagents.usd,
    tokens: spend.requests.tokens + spend.compaction.tokens + spend.subagents.tokens,
  };
}

/** The tighter of two caps, kind by kind. */
export function tighterCaps(a: Caps, b: Caps | undefined): Caps {
  if (!b) return a;
  const min = (x: number | undefined, y: number | undefined) =>
    x === undefined ? y : y === undefined ? x : Math.min(x, y);
  const usd = min(a.usd, b.usd);
  const tokens = min(a.tokens, b.tokens);
  return { ...(usd === undefined ? {} : { usd }), ...(tokens === undefined ? {} : { tokens }) };
}

/** What may still be spent under each cap (never below zero). */
export function remainingOf(caps: Caps, spend: Spend): Caps {
  const spent = spentTotal(spend);
  return {
    ...(caps.usd === undefined ? {} : { usd: Math.max(0, caps.usd - spent.usd) }),
    ...(caps.tokens === undefined ? {} : { tokens: Math.max(0, caps.tokens - spent.tokens) }),
  };
}

/** Caps on a session's total spend that leave `remaining` on top of what it has spent (a child's ceiling). */
export function ceilingFrom(spent: SpendFigures, remaining: Caps): Caps {
  return {
    ...(remaining.usd === undefined ? {} : { usd: spent.usd + remaining.usd }),
    ...(remaining.tokens === undefined ? {} : { tokens: spent.tokens + remaining.tokens }),
  };
}

/** True when a cap of either kind is set. */
export function hasCaps(caps: Caps): boolean {
  return caps.usd !== undefined || caps.tokens !== undefined;
}

/** The worst case of one request: its input estimate and its max output, and their price at the highest rates. */
export type RequestWorstCase = { inputTokens: number; maxOutputTokens: number; usd?: number };

/**
 * The most one request can cost: every input token at the dearer of the input and cache-write rates, every
 * output token at the output rate, at the long-context rates when the input passes the model's threshold.
 * `usd` is undefined for a model without a documented price.
 */
export function worstCase(model: string, inputTokens: number, maxOutputTokens: number): RequestWorstCase {
  const schedule = findModel(model)?.prices;
  if (!schedule) return { inputTokens, maxOutputTokens };
  const long = schedule.longContext;
  const prices = long && inputTokens > long.above ? long.prices : schedule.base;
  const inputRate = Math.max(prices.input, prices.cacheWrite ?? prices.input);
  return {
    inputTokens,
    maxOutputTokens,
    usd: (inputTokens * inputRate + maxOutputTokens * prices.output) / 1e6,
  };
}

/** Why a request may not be sent: the cap it would cross and by how much it is crossed already, if it is. */
export type BudgetVerdict =
  | { ok: true }
  | {
      ok: false;
      limit: 'usd' | 'tokens';
      cap: number;
      spent: SpendFigures;
      overBy?: number;
      unpriced?: true;
    };

/**
 * The cap check before a request (pure, a few comparisons): spent so far plus the request's worst case must stay
 * within every cap. A USD cap cannot be held for a model without a price, so such a request is refused too.
 */
export function checkBudget(caps: Caps, spend: Spend, request: RequestWorstCase): BudgetVerdict {
  const spent = spentTotal(spend);
  if (
    caps.tokens !== undefined &&
    spent.tokens + request.inputTokens + request.maxOutputTokens > caps.tokens
  ) {
    const over = spent.tokens - caps.tokens;
    return { ok: false, limit: 'tokens', cap: caps.tokens, spent, ...(over > 0 ? { overBy: over } : {}) };
  }
  if (caps.usd !== undefined) {
    if (request.usd === undefined) return { ok: false, limit: 'usd', cap: caps.usd, spent, unpriced: true };
    if (spent.usd + request.usd > caps.usd) {
      const over = spent.usd - caps.usd;
      return { ok: false, limit: 'usd', cap: caps.usd, spent, ...(over > 0 ? { overBy: over } : {}) };
    }
  }
  return { ok: true };
}

/** USD with cents (and tenths of a cent below a dollar, where caps of a few cents live). */
export function formatUsd(usd: number): string {
  return usd < 1 ? `$${usd.toFixed(3)}` : `$${usd.toFixed(2)}`;
}

/**
 * The sentence of a `budget_reached` event: what was spent, on what, what the next request could cost, and
 * the command that raises the cap.
 */
export function budgetMessage(
  sessionId: string,
  verdict: Extract<BudgetVerdict, { ok: false }>,
  spend: Spend,
  request: RequestWorstCase,
  model: string,
): string {
  const usdCap = verdict.limit === 'usd';
  const show = (figures: SpendFigures) =>
    usdCap ? formatUsd(figures.usd) : `${figures.tokens.toLocaleString('en-US')} tokens`;
  const cap = usdCap ? formatUsd(verdict.cap) : `${verdict.cap.toLocaleString('en-US')} tokens`;
  const on = [
    `requests ${show(spend.requests)}`,
    ...(spend.compaction.tokens > 0 ? [`compaction ${show(spend.compaction)}`] : []),
    ...(spend.subagents.tokens > 0 ? [`subagents ${show(spend.subagents)}`] : []),
  ].join(', ');
  const raise = usdCap ? `keel budget ${sessionId} --usd AMOUNT` : `keel budget ${sessionId} --tokens COUNT`;
  if (verdict.unpriced) {
    return (
      `Spend cap of ${cap} reached: model ${model} has no known price, so a request cannot be kept within a USD cap. ` +
      `Set a token cap instead, or remove the USD cap (keel budget ${sessionId} --usd none), then keel resume ${sessionId}.`
    );
  }
  const next = usdCap
    ? request.usd === undefined
      ? 'an unknown amount'
      : `up to ${formatUsd(request.usd)}`
    : `up to ${(request.inputTokens + request.maxOutputTokens).toLocaleString('en-US')} tokens`;
  const over =
    verdict.overBy === undefined
      ? ''
      : ` The last request's actual input was above its estimate: the cap was crossed by ${
          usdCap ? formatUsd(verdict.overBy) : `${verdict.overBy.toLocaleString('en-US')} tokens`
        }.`;
  return (
    `Spend cap of ${cap} reached: spent ${show(verdict.spent)} (${on}); the next request could cost ${next}, ` +
    `so it was not sent.${over} Raise the cap with ${raise}, then keel resume ${sessionId}.`
  );
}

/**
 * Characters per token the input estimate assumes. Tokenizers give 3.5–4.5 characters of English or code per
 * token; 3 leans high, so an estimate is rarely below the provider's count (the only way a cap is crossed).
 */
export const CHARS_PER_TOKEN = 3;

/** Room for what the characters do not show: role and tool-call framing per message, images. */
const MESSAGE_OVERHEAD_TOKENS = 8;
const IMAGE_TOKENS = 1_600;

/**
 * An upper-leaning estimate of a request's input tokens from its payload and tool definitions: characters
 * over CHARS_PER_TOKEN plus framing per message. One pass over the messages, no serialisation.
 */
export function estimateInputTokens(payload: Payload, toolChars: number): number {
  let chars = toolChars + (payload.environment?.length ?? 0);
  let extra = 0;
  for (const message of payload.messages) {
    chars += message.content.length;
    extra += MESSAGE_OVERHEAD_TOKENS;
    if (message.toolCalls)
      for (const call of message.toolCalls)
        chars += call.arguments.length + call.name.length + call.id.length;
    if (message.reasoning)
      for (const part of message.reasoning)
        chars +=
          part.type === 'thinking'
            ? part.thinking.length + part.signature.length
            : part.type === 'redacted_thinking'
              ? part.data.length
              : part.type === 'reasoning'
                ? (part.encryptedContent?.length ?? 0) + part.summary.reduce((n, text) => n + text.length, 0)
                : part.text.length;
    if (message.images) extra += message.images.length * IMAGE_TOKENS;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + extra;
}

/**
 * The usage a reply cost when its server reported none (some OpenAI-compatible servers): the input estimate
 * and the reply's characters, marked `estimated` so nobody takes it for the provider's figure.
 */
export function estimatedUsage(inputTokens: number, replyChars: number): Usage {
  return { inputTokens, outputTokens: Math.ceil(replyChars / CHARS_PER_TOKEN), estimated: true };
}
