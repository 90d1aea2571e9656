import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  costOf,
  createProvider,
  findModel,
  isRetired,
  MODEL_CATALOGUE,
  ProviderError,
  resolveContextWindow,
  SUGGESTED_MODEL,
  toProviderError,
  type ModelInfo,
} from '../../../main/providers/index.js';
import type { Payload } from '../../../main/common/payload.js';

const MTOK = 1_000_000;
const model = (id: string): ModelInfo => {
  const found = findModel(id);
  if (!found) throw new Error(`${id} is not in the catalogue`);
  return found;
};

describe('catalogue figures match the providers’ documentation (read 2026-11-29)', () => {
  it('prices and sizes Claude Opus 5.5 as its model page does: 1M / 128K, $4 / $20, $5 write, $0.20 read', () => {
    const opus = model('claude-opus-5-5');
    expect([opus.contextWindow, opus.maxOutputTokens, opus.status]).toEqual([1_000_000, 128_000, 'current']);
    expect(costOf({ inputTokens: MTOK, outputTokens: 0 }, 'claude-opus-5-5')).toBeCloseTo(4, 10);
    expect(costOf({ inputTokens: 0, outputTokens: MTOK }, 'claude-opus-5-5')).toBeCloseTo(20, 10);
    expect(costOf({ inputTokens: 0, outputTokens: 0, cacheReadTokens: MTOK }, 'claude-opus-5-5')).toBeCloseTo(
      0.2,
      10,
    );
    expect(
      costOf({ inputTokens: 0, outputTokens: 0, cacheWriteTokens: MTOK }, 'claude-opus-5-5'),
    ).toBeCloseTo(5, 10);
  });

  it('keeps the documented figures of other Claude models, current and older', () => {
    const sonnet = model('claude-sonnet-5-5');
    expect([sonnet.contextWindow, sonnet.maxOutputTokens]).toEqual([1_000_000, 128_000]);
    expect(sonnet.prices?.base).toEqual({ input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 });
    // Fable 5.1's cache hits are 0.025× input, not the usual 0.1×.
    expect(model('claude-fable-5-1').prices?.base).toEqual({
      input: 10,
      output: 50,
      cacheRead: 0.25,
      cacheWrite: 12.5,
    });
    expect(model('claude-fable-5').prices?.base.cacheRead).toBe(1);
    expect([model('claude-opus-4-5').contextWindow, model('claude-opus-4-5').maxOutputTokens]).toEqual([
      200_000, 64_000,
    ]);
    expect(model('claude-opus-4-6').contextWindow).toBe(1_000_000);
    expect(model('claude-haiku-5-5').contextWindow).toBe(1_000_000);
    expect(model('claude-opus-4-1').prices?.base).toEqual({
      input: 15,
      output: 75,
      cacheRead: 1.5,
      cacheWrite: 18.75,
    });
  });

  it('marks Claude Sonnet 4.5 deprecated, retiring 2026-11-30, replaced by Sonnet 5.5', () => {
    const sonnet = model('claude-sonnet-4-5-20250929');
    expect(sonnet.id).toBe('claude-sonnet-4-5');
    expect([sonnet.status, sonnet.retiresOn, sonnet.replacement]).toEqual([
      'deprecated',
      '2026-11-30',
      'claude-sonnet-5-5',
    ]);
    expect([sonnet.contextWindow, sonnet.maxOutputTokens]).toEqual([200_000, 64_000]);
  });

  it('prices GPT-6.2 Sol per its page, long-context rates for the whole request past 272K prompt tokens', () => {
    const sol = model('gpt-6.2-sol');
    expect([sol.contextWindow, sol.maxOutputTokens]).toEqual([1_050_000, 128_000]);
    // 200K fresh + 72K cached = 272K: still the base rates ($2 in, $0.10 cached, $10 out).
    const atLimit = { inputTokens: 200_000, cacheReadTokens: 72_000, outputTokens: 10_000 };
    expect(costOf(atLimit, 'gpt-6.2-sol')).toBeCloseTo(0.4 + 0.0072 + 0.1, 10);
    // One token more: every token at 2× input and cache, 1.5× output.
    const past = { ...atLimit, inputTokens: 200_001 };
    expect(costOf(past, 'gpt-6.2-sol')).toBeCloseTo(0.800004 + 0.0144 + 0.15, 10);
    expect(sol.prices?.base.cacheWrite).toBe(2.5);
  });

  it('dates OpenAI’s GPT-5 shutdown (2026-12-11) and keeps its known price for old sessions', () => {
    expect([model('gpt-5').status, model('gpt-5').retiresOn]).toEqual(['deprecated', '2026-12-11']);
    expect([model('gpt-5-mini').status, model('gpt-5-mini').retiresOn]).toEqual(['deprecated', '2026-12-11']);
    expect(costOf({ inputTokens: MTOK, outputTokens: MTOK, cacheReadTokens: MTOK }, 'gpt-5')).toBeCloseTo(
      1.25 + 10 + 0.125,
      10,
    );
  });

  it('leaves a model without a documented cache-read rate unpriced instead of billing hits as input', () => {
    for (const id of [
      'claude-haiku-5-5',
      'claude-fable-5-2',
      'claude-sonnet-4-6',
      'gpt-6.2-astra',
      'gpt-5.6-sol',
    ]) {
      expect(model(id).prices).toBeUndefined();
      expect(costOf({ inputTokens: 10, outputTokens: 10 }, id)).toBeUndefined();
    }
  });
  it('agrees with the end-of-life dates the installed Anthropic SDK warns about', () => {
    const data = readFileSync('node_modules/@anthropic-ai/sdk/internal/data/deprecated-models.js', 'utf8');
    const months = [
      'January',
      'February',
      'March',
      'April',
      'May',
      'June',
      'July',
      'August',
      'September',
      'October',
      'November',
      'December',
    ];
    const entries = [...data.matchAll(/'([^']+)': '(\w+) (\d+)\w*, (\d{4})'/g)];
    expect(entries.length).toBeGreaterThan(0);
    for (const [, id = '', month = '', day = '', year = ''] of entries) {
      const known = findModel(id);
      if (!known) continue;
      const date = `${year}-${String(months.indexOf(month) + 1).padStart(2, '0')}-${day.padStart(2, '0')}`;
      expect([id, known.status, known.retiresOn]).toEqual([id, 'deprecated', date]);
    }
    expect(findModel('claude-opus-4-5')?.retiresOn).toBe('2027-01-22');
  });
});

describe('catalogue lookups and lifecycle', () => {
  it('finds dated snapshots but never a near namesake', () => {
    expect(findModel('claude-opus-4-5-20251101')?.id).toBe('claude-opus-4-5');
    expect(findModel('claude-sonnet-4-20250514')?.id).toBe('claude-sonnet-4');
    expect(findModel('gpt-4.1-2025-04-14')?.id).toBe('gpt-4.1');
    expect(findModel('claude-opus-5-5')?.id).toBe('claude-opus-5-5');
    expect(findModel('claude-opus-5-20260724')?.id).toBe('claude-opus-5');
    // Not snapshots: a newer sibling must not inherit an older model's window or prices.
    expect(findModel('claude-opus-5-7')).toBeUndefined();
    expect(findModel('claude-sonnet-4-7')).toBeUndefined();
    expect(findModel('gpt-5-nano')).toBeUndefined();
    expect(() => resolveContextWindow('claude-opus-5-7')).toThrow(/--context-window/);
  });

  it('says a model is retired from its retirement day on, and always for retired ones', () => {
    const sonnet = model('claude-sonnet-4-5');
    expect(isRetired(sonnet, '2026-11-29')).toBe(false);
    expect(isRetired(sonnet, '2026-11-30')).toBe(true);
    expect(isRetired(model('claude-opus-4-1'), '2020-01-01')).toBe(true);
    expect(isRetired(model('claude-opus-5-5'), '2030-01-01')).toBe(false);
  });

  it('suggests current, priced models that are not about to retire', () => {
    for (const [provider, id] of Object.entries(SUGGESTED_MODEL)) {
      const suggested = model(id);
      expect(suggested.provider).toBe(provider);
      expect(suggested.status).toBe('current');
      expect(suggested.retiresOn).toBeUndefined();
      expect(suggested.prices).toBeDefined();
    }
  });

  it('is well formed: unique ids, ISO retirement days, a date on every deprecation, cache reads below input', () => {
    const ids = MODEL_CATALOGUE.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of MODEL_CATALOGUE) {
      if (entry.retiresOn !== undefined) expect(entry.retiresOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if (entry.status === 'deprecated') expect(entry.retiresOn).toBeDefined();
      for (const prices of [entry.prices?.base, entry.prices?.longContext?.prices]) {
        if (prices) expect(prices.cacheRead).toBeLessThan(prices.input);
      }
    }
  });

  it('lists only Claude ids the installed Anthropic SDK knows, unless they are retired', () => {
    const types = readFileSync('node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts', 'utf8');
    const union = /export type Model = ([^;]+);/.exec(types)?.[1] ?? '';
    const sdkIds = new Set([...union.matchAll(/'([^']+)'/g)].map((m) => m[1]));
    expect(sdkIds.size).toBeGreaterThan(10);
    const unknown = MODEL_CATALOGUE.filter(
      (m) => m.provider === 'anthropic' && m.status !== 'retired' && !sdkIds.has(m.id),
    ).map((m) => m.id);
    expect(unknown).toEqual([]);
  });
});

// A server answering like the real APIs do for a model they do not serve (shapes as sent by
// api.anthropic.com, api.openai.com and Ollama).
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve404(body: unknown): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
}

const payload: Payload = { messages: [{ role: 'user', content: 'hi' }] };

async function failureOf(stream: AsyncIterable<unknown>): Promise<ProviderError> {
  try {
    for await (const event of stream) void event;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('the request did not fail');
}

describe('a request to a model the provider no longer serves', () => {
  it('names the retired Claude model, when it retired and the command that switches the session', async () => {
    const baseUrl = await serve404({
      type: 'error',
      error: { type: 'not_found_error', message: 'model: claude-opus-4-1-20250805' },
    });
    const provider = createProvider({ provider: 'anthropic', baseUrl }, { anthropic: 'k' });
    const failure = await failureOf(
      provider.stream({ payload, tools: [], model: 'claude-opus-4-1-20250805' }),
    );
    expect(failure.code).toBe('not_found');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toBe(
      'Anthropic no longer serves claude-opus-4-1-20250805: it was retired. This session is pinned to it, so ' +
        "every request fails until you switch the session's model: keel model SESSION anthropic:claude-opus-5-5, " +
        'or the model switch in the app.',
    );
  });

  it('gives the announced retirement day and the documented replacement, whatever the date', () => {
    // The 404 is the provider's word; the catalogue adds the day it knows, and no clock is read.
    const body = { type: 'error', error: { type: 'not_found_error', message: 'model: claude-sonnet-4-5' } };
    const sdkError = new Anthropic.NotFoundError(404, body, undefined, new Headers());
    expect(toProviderError(sdkError, 'Anthropic').message).toMatch(
      /^Anthropic no longer serves claude-sonnet-4-5 \(404: model: claude-sonnet-4-5\); its retirement was announced for 2026-11-30\. .*keel model SESSION anthropic:claude-sonnet-5-5/,
    );
  });

  it('names the unknown OpenAI model and suggests a current one', async () => {
    const baseUrl = await serve404({
      error: {
        message: 'The model `gpt-4-32k` does not exist or you do not have access to it.',
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    });
    const provider = createProvider({ provider: 'openai', baseUrl }, { openai: 'k' });
    const failure = await failureOf(provider.stream({ payload, tools: [], model: 'gpt-4-32k' }));
    expect(failure.code).toBe('not_found');
    expect(failure.message).toMatch(
      /^OpenAI does not serve the model gpt-4-32k \(404: The model `gpt-4-32k`/,
    );
    expect(failure.message).toContain(
      'keel model SESSION openai:gpt-6.2-sol, or the model switch in the app.',
    );
  });

  it('passes on a local server’s hint for a model it has not pulled', async () => {
    const baseUrl = await serve404({
      error: {
        message: 'model "qwen9:7b" not found, try pulling it first',
        type: 'api_error',
        param: null,
        code: null,
      },
    });
    const provider = createProvider({ provider: 'openai-compatible', baseUrl }, {}, {});
    const failure = await failureOf(provider.stream({ payload, tools: [], model: 'qwen9:7b' }));
    expect(failure.message).toMatch(/does not serve the model qwen9:7b \(404: .*try pulling it first\)/);
    expect(failure.message).toContain('keel model SESSION PROVIDER:MODEL');
  });

  it('leaves any other 404 (a wrong base URL) as the provider said it', async () => {
    const baseUrl = await serve404({ error: { message: 'Unknown route POST /v1/chat/completions' } });
    const provider = createProvider({ provider: 'openai', baseUrl }, { openai: 'k' });
    const failure = await failureOf(provider.stream({ payload, tools: [], model: 'gpt-6.2-sol' }));
    expect(failure.message).toBe('OpenAI: Unknown route POST /v1/chat/completions (404)');
  });
});
