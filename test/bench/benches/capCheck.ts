import { performance } from 'node:perf_hooks';
import type { PayloadMessage } from '../../../main/common/payload.js';
import {
  checkBudget,
  emptySpend,
  estimateInputTokens,
  hasCaps,
  tighterCaps,
  worstCase,
} from '../../../main/core/turn/budget.js';
import { maxOutputTokensOf } from '../../../main/providers/outputBound.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** Issue 31: the most the cap check may add to one model request, in ms. */
export const CAP_CHECK_TARGET_MS = 0.1;

/** Messages of the payload the input estimate walks: a full context of a coding session's turns. */
const PAYLOAD_MESSAGES = 400;

/**
 * Issue 31: what the spend-cap check adds to each model request, as `turn/request.ts` makes it: the caps in
 * effect, the request's worst case (its input estimated from the payload, its max output for the provider,
 * priced) and the check against the spend folded so far. Median per request over many, after a warm-up.
 */
export const capCheckBench: Bench = {
  name: 'capcheck',
  title: 'Spend cap check per model request (ms)',
  run({ sizes, progress }) {
    const started = performance.now();
    const messages: PayloadMessage[] = [];
    for (let i = 0; i < PAYLOAD_MESSAGES; i += 1) {
      if (i % 3 === 0)
        messages.push({ role: 'user', content: `Look at src/file${i}.ts and fix the bug. `.repeat(4) });
      else if (i % 3 === 1)
        messages.push({
          role: 'assistant',
          content: 'Reading the file.',
          toolCalls: [{ id: `call${i}`, name: 'read_file', arguments: `{"path":"src/file${i}.ts"}` }],
        });
      else messages.push({ role: 'tool', toolCallId: `call${i - 1}`, content: 'x'.repeat(2000) });
    }
    const payload = { messages, environment: '<environment>\nDate: 2026-12-03\n</environment>' };
    const spend = emptySpend();
    spend.requests = { usd: 1.2345, tokens: 2_345_678 };
    const caps = { usd: 10, tokens: 50_000_000 };
    const check = () => {
      const inEffect = tighterCaps(caps, undefined);
      if (!hasCaps(inEffect)) return true;
      const worst = worstCase(
        'claude-sonnet-5-5',
        estimateInputTokens(payload, 12_000),
        maxOutputTokensOf('anthropic', { model: 'claude-sonnet-5-5', reasoningEffort: 'high' }),
      );
      return checkBudget(inEffect, { ...spend }, worst).ok;
    };
    const pure = () =>
      checkBudget(caps, spend, worstCase('claude-sonnet-5-5', 120_000, 40_000)).ok &&
      maxOutputTokensOf('openai', { model: 'gpt-6.2-sol' }) > 0;
    const rounds = Math.max(5, sizes.pathologicalRuns * 4);
    const perRound = 2_000;
    const time = (work: () => boolean) => {
      for (let i = 0; i < perRound; i += 1) work();
      const samples: number[] = [];
      for (let r = 0; r < rounds; r += 1) {
        const t0 = performance.now();
        for (let i = 0; i < perRound; i += 1) if (!work()) throw new Error('the bench request should pass');
        samples.push((performance.now() - t0) / perRound);
      }
      return round(median(samples), 5);
    };
    const whole = time(check);
    progress('capcheck: with the input estimate');
    const verdict = time(pure);
    progress('capcheck: the check alone');
    return {
      name: this.name,
      title: this.title,
      params: { payloadMessages: PAYLOAD_MESSAGES, rounds, perRound, targetMs: CAP_CHECK_TARGET_MS },
      metrics: [
        makeMetric(`per request, with the input estimate over ${PAYLOAD_MESSAGES} messages`, 'ms', 'lower', {
          keel: whole,
        }),
        makeMetric('per request, the check alone (worst case priced, caps compared)', 'µs', 'lower', {
          keel: round(verdict * 1000, 3),
        }),
      ],
      notes: [
        'As turn/request.ts makes it before each request while a cap is set: caps in effect, input estimate from the payload (one pass, no serialisation), max output for the provider, priced worst case, compared with the spend folded so far. Median of rounds of 2,000.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
