import { beforeAll, describe, expect, it } from 'vitest';
import { measureNextRequest } from '../../../../main/core/compaction/compact.js';
import { loadEstimator, type TokenEstimator } from '../../../../main/core/compaction/tokens.js';
import { formatInstructions, selectView } from '../../../../main/core/projection/index.js';
import { LogBuilder } from '../projection/eventFactory.js';

let estimator: TokenEstimator;

beforeAll(async () => {
  estimator = await loadEstimator({ provider: 'openai', model: 'gpt-4.1' });
});

const rules = 'Run npm test before you finish. Never edit generated files under dist/. '.repeat(40);

describe('measureNextRequest with project instructions', () => {
  it('adds instructions recorded after the provider last reported, and not those it already counted', () => {
    const log = new LogBuilder();
    log.user('goal');
    const answered = log.add({
      kind: 'assistant_message',
      content: 'ok',
      toolCalls: [],
      usage: { inputTokens: 1000, outputTokens: 10 },
    });
    const measure = () =>
      measureNextRequest({
        view: selectView(log.events),
        lastUsage: { inputTokens: 1000, outputTokens: 10 },
        lastUsageSeq: answered.seq,
        systemPrompt: 'You are Keel.',
        tools: [],
        estimator,
      });
    const without = measure().tokens;
    const loaded = log.instructions({ 'AGENTS.md': rules });
    const withNew = measure().tokens;
    const text = formatInstructions(loaded) ?? '';
    expect(withNew - without).toBeGreaterThanOrEqual(estimator.count(text));

    // A report newer than the instructions already counts them: nothing is added on top.
    const later = log.add({ kind: 'assistant_message', content: 'done', toolCalls: [] });
    const counted = measureNextRequest({
      view: selectView(log.events),
      lastUsage: { inputTokens: 3000, outputTokens: 10 },
      lastUsageSeq: later.seq,
      systemPrompt: 'You are Keel.',
      tools: [],
      estimator,
    });
    expect(counted.tokens).toBe(3010);
  });

  it('counts the instructions in the estimate of a session the provider has not reported on yet', () => {
    const log = new LogBuilder();
    log.user('goal');
    const input = { systemPrompt: 'You are Keel.', tools: [], estimator };
    const bare = measureNextRequest({ view: selectView(log.events), ...input }).tokens;
    log.instructions({ 'AGENTS.md': rules });
    const instructed = measureNextRequest({ view: selectView(log.events), ...input }).tokens;
    expect(instructed - bare).toBeGreaterThanOrEqual(estimator.count(rules));
  });
});
