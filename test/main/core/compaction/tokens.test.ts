import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  encodingFor,
  estimateEventTokens,
  estimatePayloadTokens,
  estimateToolTokens,
  eventTokenUpperBound,
  factorFor,
  loadEstimator,
  tokenUpperBound,
  usageTotal,
  type TokenEstimator,
} from '../../../../main/core/compaction/tokens.js';
import type { SessionEvent } from '../../../../main/common/events.js';
import { projectPayload } from '../../../../main/core/projection/index.js';
import { toOpenAIRequest } from '../../../../main/providers/openai.js';
import type { ToolSpec } from '../../../../main/providers/types.js';
import { createToolRegistry } from '../../../../main/tools/registry.js';
import { REPO_ROOT } from '../../../support/cli.js';
import {
  ESTIMATE_MESSAGES_ERROR,
  ESTIMATE_TOOLS_OVER,
  referenceRequestTokens,
  referenceToolTokens,
} from './reference.js';

let estimator: TokenEstimator;

/** A tool whose parameters are all scalars (or enums of them). */
const isFlat = (tool: ToolSpec) =>
  Object.values((tool.parameters['properties'] ?? {}) as Record<string, { type?: unknown }>).every(
    (property) => property.type !== 'object' && property.type !== 'array',
  );

beforeAll(async () => {
  estimator = await loadEstimator({ provider: 'openai', model: 'gpt-4.1' });
});

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** A realistic session: prose, code read by tools, JSON arguments, a diff, non-English text, numbers. */
function realisticEvents(): SessionEvent[] {
  const at = '2026-01-01T00:00:00.000Z';
  const code = read('main/core/projection/projectPayload.ts');
  const readme = read('main/core/projection/README.md');
  const events: SessionEvent[] = [
    {
      seq: 1,
      at,
      kind: 'session_created',
      sessionId: 's',
      projectFolder: '/p',
      provider: 'openai',
      model: 'gpt-4.1',
      contextWindow: 1_000_000,
      toolMode: 'write',
      policy: 'ask',
    },
    {
      seq: 2,
      at,
      kind: 'user_message',
      content: 'Migrate the billing service to Postgres. Staging only; do not touch migrations.',
    },
  ];
  const texts = [
    code.slice(0, 6000),
    readme.slice(0, 5000),
    'Größe, naïve café — 日本語のテキストと中文文本, and emoji 🚀🔥 mixed with ASCII.\n'.repeat(20),
    JSON.stringify({
      rows: Array.from({ length: 60 }, (_, i) => ({ id: i, total: i * 17.25, ok: i % 3 === 0 })),
    }),
    Array.from(
      { length: 80 },
      (_, i) => `${String(i + 1).padStart(4)}\tconst value${i} = compute(${i}, "x${i}");`,
    ).join('\n'),
  ];
  let seq = 3;
  texts.forEach((text, i) => {
    events.push({
      seq: seq++,
      at,
      kind: 'assistant_message',
      content: i % 2 === 0 ? `Step ${i}: reading the next file.` : '',
      toolCalls: [
        {
          id: `call_${i}`,
          name: 'read_file',
          arguments: JSON.stringify({ path: `src/file${i}.ts`, offset: 1, limit: 200 }),
        },
      ],
    });
    events.push({
      seq: seq++,
      at,
      kind: 'tool_result',
      toolCallId: `call_${i}`,
      tool: 'read_file',
      content: text,
    });
    events.push({
      seq: seq++,
      at,
      kind: 'user_message',
      content: `Thanks. Now check part ${i}: ${text.slice(0, 300)}`,
    });
  });
  events.push({ seq: seq++, at, kind: 'assistant_message', content: readme.slice(0, 2500), toolCalls: [] });
  return events;
}

describe('token estimate', () => {
  it('is within 3% of the documented OpenAI count of the messages actually sent', () => {
    const events = realisticEvents();
    const errors: number[] = [];
    // Every prefix of the session: from a 2-message request to the whole thing.
    for (let n = 2; n <= events.length; n++) {
      const payload = projectPayload(events.slice(0, n), { system: 'You are Keel.' });
      const estimate = estimatePayloadTokens(payload, estimator);
      const reference = referenceRequestTokens(toOpenAIRequest(payload, []));
      errors.push((estimate - reference) / reference);
    }
    const worst = Math.max(...errors.map(Math.abs));
    expect(worst).toBeLessThanOrEqual(ESTIMATE_MESSAGES_ERROR);
  });

  it('over-counts tool definitions (their JSON text) by at most 40%, never under-counts them', () => {
    const payload = projectPayload(realisticEvents(), { system: 'You are Keel.' });
    for (const mode of ['read-only', 'write'] as const) {
      // The cookbook formula models flat parameters only; nested schemas (arrays of objects) it under-counts.
      const tools = createToolRegistry(mode).definitions().filter(isFlat);
      const wire = toOpenAIRequest(payload, tools);
      const toolError =
        (estimateToolTokens(tools, estimator) - referenceToolTokens(wire.tools)) /
        referenceToolTokens(wire.tools);
      expect(toolError).toBeGreaterThanOrEqual(0);
      expect(toolError).toBeLessThanOrEqual(ESTIMATE_TOOLS_OVER);
      const whole =
        (estimatePayloadTokens(payload, estimator, tools) - referenceRequestTokens(wire)) /
        referenceRequestTokens(wire);
      expect(whole).toBeGreaterThanOrEqual(-ESTIMATE_MESSAGES_ERROR);
      expect(whole).toBeLessThanOrEqual(0.1);
    }
  });

  it('measures like the trigger (last request as reported + appended events estimated) within 3%', () => {
    const events = realisticEvents();
    const sent = (n: number) =>
      referenceRequestTokens(toOpenAIRequest(projectPayload(events.slice(0, n), { system: 'S' }), []));
    const whole = sent(events.length);
    const errors: number[] = [];
    for (let k = 2; k < events.length; k++) {
      const last = events[k - 1] as SessionEvent;
      // The provider reports usage for a request whose calls are settled: a prefix ending in a result or message.
      if (last.kind === 'assistant_message' && last.toolCalls.length > 0) continue;
      const appended = events.slice(k).reduce((sum, event) => sum + estimateEventTokens(event, estimator), 0);
      errors.push((sent(k) + appended - whole) / whole);
    }
    expect(errors.length).toBeGreaterThan(5);
    expect(Math.max(...errors.map(Math.abs))).toBeLessThanOrEqual(ESTIMATE_MESSAGES_ERROR);
  });

  it('byte counts bound every estimate from above, so the cheap check never misses a compaction', () => {
    for (const event of realisticEvents()) {
      expect(eventTokenUpperBound(event)).toBeGreaterThanOrEqual(estimateEventTokens(event, estimator));
    }
    expect(tokenUpperBound('日本語')).toBe(9);
  });

  it('counts special-token strings as text instead of throwing', () => {
    expect(estimator.count('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  it('picks o200k for current OpenAI models, cl100k for older and non-OpenAI ones, and scales unknown tokenizers up', async () => {
    expect(encodingFor({ provider: 'openai', model: 'gpt-4o' })).toBe('o200k_base');
    expect(encodingFor({ provider: 'openai', model: 'gpt-4.1-mini' })).toBe('o200k_base');
    expect(encodingFor({ provider: 'openai', model: 'gpt-5' })).toBe('o200k_base');
    expect(encodingFor({ provider: 'openai', model: 'o3' })).toBe('o200k_base');
    expect(encodingFor({ provider: 'openai', model: 'gpt-4-turbo' })).toBe('cl100k_base');
    expect(encodingFor({ provider: 'openai', model: 'gpt-3.5-turbo' })).toBe('cl100k_base');
    expect(encodingFor({ provider: 'anthropic', model: 'claude-sonnet-4-5' })).toBe('cl100k_base');
    expect(factorFor({ provider: 'openai' })).toBe(1);
    expect(factorFor({ provider: 'anthropic' })).toBeGreaterThan(1);
    const claude = await loadEstimator({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    const text = read('main/core/projection/README.md');
    expect(claude.count(text)).toBeGreaterThan(estimator.count(text));
  });

  it('sums everything the provider read and wrote for usage', () => {
    expect(
      usageTotal({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 1000, cacheWriteTokens: 7 }),
    ).toBe(1127);
    expect(usageTotal({ inputTokens: 5, outputTokens: 1 })).toBe(6);
  });
});
