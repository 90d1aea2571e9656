import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usageTotal } from '../../../../main/core/compaction/tokens.js';
import { compactionLimit, measureContext, shouldCompact } from '../../../../main/core/compaction/trigger.js';
import type { Usage } from '../../../../main/common/events.js';

const usageArb: fc.Arbitrary<Usage> = fc.record(
  {
    inputTokens: fc.nat(300_000),
    outputTokens: fc.nat(50_000),
    cacheReadTokens: fc.nat(300_000),
    cacheWriteTokens: fc.nat(300_000),
  },
  { requiredKeys: ['inputTokens', 'outputTokens'] },
);

describe('the compaction trigger', () => {
  it('compacts exactly when the request passes threshold × window (every window/threshold/size combination)', () => {
    for (const window of [1, 100, 4_000, 128_000, 200_000, 1_000_000]) {
      for (const threshold of [0.05, 0.5, 0.75, 0.9, 0.95]) {
        const limit = Math.floor(window * threshold);
        expect(compactionLimit(window, threshold)).toBe(limit);
        for (const tokens of [0, limit - 1, limit, limit + 1, window, window * 2]) {
          expect(shouldCompact(tokens, window, threshold)).toBe(tokens > limit);
        }
      }
    }
  });

  it('never compacts when the threshold is 0 (off), whatever the size', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.integer({ min: 1, max: 2_000_000 }), (tokens, window) => {
        expect(shouldCompact(tokens, window, 0)).toBe(false);
        expect(compactionLimit(window, 0)).toBe(Number.POSITIVE_INFINITY);
      }),
    );
  });

  it('is monotone: a larger request never un-triggers', () => {
    fc.assert(
      fc.property(
        fc.nat(1_000_000),
        fc.nat(1_000),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 0.95, noNaN: true }),
        (tokens, more, window, threshold) => {
          if (shouldCompact(tokens, window, threshold))
            expect(shouldCompact(tokens + more, window, threshold)).toBe(true);
        },
      ),
    );
  });

  it('measures from the newest of: the provider report, the compaction in effect, else the whole estimate', () => {
    fc.assert(
      fc.property(
        fc.option(usageArb, { nil: undefined }),
        fc.integer({ min: 2, max: 1000 }),
        fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
        fc.option(fc.nat(100_000), { nil: undefined }),
        fc.nat(100_000),
        (usage, usageSeq, compactionSeq, tokensAfter, whole) => {
          const asked: number[] = [];
          let wholeAsked = 0;
          const appendedAfter = (seq: number) => (asked.push(seq), seq * 10);
          const measure = measureContext({
            ...(usage ? { lastUsage: usage, lastUsageSeq: usageSeq } : {}),
            ...(compactionSeq === undefined ? {} : { compactionSeq }),
            ...(tokensAfter === undefined ? {} : { compactionTokensAfter: tokensAfter }),
            appendedAfter,
            payloadTokens: () => (wholeAsked++, whole),
          });
          if (usage && (compactionSeq === undefined || usageSeq > compactionSeq)) {
            expect(measure).toEqual({
              source: 'usage',
              tokens: usageTotal(usage) + usageSeq * 10,
              usageTokens: usageTotal(usage),
              appendedTokens: usageSeq * 10,
            });
            expect([asked, wholeAsked]).toEqual([[usageSeq], 0]);
          } else if (compactionSeq !== undefined && tokensAfter !== undefined) {
            // The reported request had the old summary (or none): the compaction's own size replaces it.
            expect(measure).toEqual({
              source: 'compaction',
              tokens: tokensAfter + compactionSeq * 10,
              compactionTokens: tokensAfter,
              appendedTokens: compactionSeq * 10,
            });
            expect([asked, wholeAsked]).toEqual([[compactionSeq], 0]);
          } else {
            expect(measure).toEqual({ source: 'estimate', tokens: whole });
            expect([asked, wholeAsked]).toEqual([[], 1]);
          }
        },
      ),
    );
  });

  it('estimates the whole request when nothing has been reported yet', () => {
    expect(measureContext({ appendedAfter: () => 1, payloadTokens: () => 42 })).toEqual({
      source: 'estimate',
      tokens: 42,
    });
  });

  it('counts cache reads and writes and the reply in the reported size', () => {
    const measure = measureContext({
      lastUsage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 3_000, cacheWriteTokens: 400 },
      lastUsageSeq: 9,
      compactionSeq: 5,
      appendedAfter: () => 70,
      payloadTokens: () => 0,
    });
    expect(measure.tokens).toBe(3_500);
    expect(shouldCompact(measure.tokens, 4_000, 0.75)).toBe(true);
    expect(shouldCompact(measure.tokens, 4_000, 0.9)).toBe(false);
  });
});
