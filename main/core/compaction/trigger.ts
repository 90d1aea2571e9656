import type { Usage } from '../../common/events.js';
import { usageTotal } from './tokens.js';

/** How full the next request is, and how that was measured. */
export type ContextMeasure =
  | {
      /** The provider's count of the previous request plus an estimate of what was appended since. */
      source: 'usage';
      tokens: number;
      usageTokens: number;
      appendedTokens: number;
    }
  | {
      /**
       * The compaction in effect is newer than the provider's last report: its recorded `tokensAfter`
       * (the request right after it, rebased on that report) plus the events appended after it.
       */
      source: 'compaction';
      tokens: number;
      compactionTokens: number;
      appendedTokens: number;
    }
  /** Nothing reported yet (a session's first request): the whole payload estimated. */
  | { source: 'estimate'; tokens: number };

/** What measureContext needs; the estimates are functions so only the one used is computed. */
export type MeasureInput = {
  /** Usage of the newest assistant message that reported one, and its seq. */
  lastUsage?: Usage;
  lastUsageSeq?: number;
  /** Seq of the compaction event in effect (undefined when none): a usage older than it is stale. */
  compactionSeq?: number;
  /** `tokensAfter` recorded on the compaction in effect, if it has one. */
  compactionTokensAfter?: number;
  /** Estimated tokens of the events after `seq` (as they would be projected). */
  appendedAfter: (seq: number) => number;
  /** Estimated tokens of the whole next request (messages and tool definitions). */
  payloadTokens: () => number;
};

/**
 * Measures the next request. The provider's own report of the previous request (input + cache read +
 * cache write + output, the output being the assistant message now in the payload) is exact, so only
 * the events appended after it are estimated. When the compaction in effect was appended after that
 * report (the payload it measured no longer exists), the compaction's recorded size of the request
 * right after it stands in for the report. With neither, the whole payload is estimated.
 */
export function measureContext(input: MeasureInput): ContextMeasure {
  const { lastUsage, lastUsageSeq, compactionSeq } = input;
  if (
    lastUsage !== undefined &&
    lastUsageSeq !== undefined &&
    (compactionSeq === undefined || lastUsageSeq > compactionSeq)
  ) {
    const usageTokens = usageTotal(lastUsage);
    const appendedTokens = input.appendedAfter(lastUsageSeq);
    return { source: 'usage', tokens: usageTokens + appendedTokens, usageTokens, appendedTokens };
  }
  if (compactionSeq !== undefined && input.compactionTokensAfter !== undefined) {
    const appendedTokens = input.appendedAfter(compactionSeq);
    return {
      source: 'compaction',
      tokens: input.compactionTokensAfter + appendedTokens,
      compactionTokens: input.compactionTokensAfter,
      appendedTokens,
    };
  }
  return { source: 'estimate', tokens: input.payloadTokens() };
}

/** The token count above which a request triggers a compaction; Infinity when automatic compaction is off. */
export function compactionLimit(contextWindow: number, threshold: number): number {
  if (!(threshold > 0) || !(contextWindow > 0)) return Number.POSITIVE_INFINITY;
  return Math.floor(contextWindow * threshold);
}

/**
 * True when a request measured at `tokens` would exceed `threshold` × `contextWindow`. A threshold of 0
 * (or less) turns automatic compaction off: always false.
 */
export function shouldCompact(tokens: number, contextWindow: number, threshold: number): boolean {
  return tokens > compactionLimit(contextWindow, threshold);
}
