import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createProvider,
  costOf,
  findModel,
  ProviderError,
  resolveContextWindow,
  withRetries,
  type ModelProvider,
  type StreamEvent,
  type ToolSpec,
} from '../../../main/providers/index.js';
import type { Payload } from '../../../main/common/payload.js';
import { ProviderServer } from '../../support/providerServer.js';

let server: ProviderServer;
beforeEach(async () => {
  server = await new ProviderServer().start();
});
afterEach(async () => {
  await server.close();
});

const tools: ToolSpec[] = [
  {
    name: 'grep',
    description: 'search',
    parameters: { type: 'object', properties: { pattern: { type: 'string' } } },
  },
];
const payload: Payload = {
  messages: [
    { role: 'system', content: 'You are Keel.' },
    { role: 'user', content: 'add rate limiting' },
  ],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const formats = [
  [
    'anthropic',
    () => createProvider({ provider: 'anthropic', baseUrl: server.anthropicBaseUrl }, { anthropic: 'k' }),
  ],
  ['openai', () => createProvider({ provider: 'openai', baseUrl: server.openaiBaseUrl }, { openai: 'k' })],
  [
    'openai-compatible',
    () => createProvider({ provider: 'openai-compatible', baseUrl: server.openaiBaseUrl }, {}, {}),
  ],
] as const satisfies readonly (readonly [string, () => ModelProvider])[];

describe.each(formats)('%s provider over real HTTP', (_name, make) => {
  it('streams text deltas and tool calls and ends with the complete message and usage', async () => {
    server.enqueue({
      kind: 'reply',
      text: 'Looking for handlers.',
      toolCalls: [{ id: 'call_1', name: 'grep', arguments: { pattern: 'http.Handle' } }],
      usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100 },
    });
    const events = await collect(make().stream({ payload, tools, model: 'claude-opus-5-5' }));
    const text = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
    expect(text).toBe('Looking for handlers.');
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.message.content).toBe('Looking for handlers.');
    expect(done.message.toolCalls).toEqual([
      { id: 'call_1', name: 'grep', arguments: '{"pattern":"http.Handle"}' },
    ]);
    expect(done.message.usage?.cacheReadTokens).toBe(100);
    expect(done.message.usage?.outputTokens).toBe(30);
  });

  it('surfaces the provider 400 for a tool call without its result as a readable bad_request', async () => {
    const invalid: Payload = {
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c9', name: 'grep', arguments: '{}' }] },
        { role: 'user', content: 'and?' },
      ],
    };
    const failure = await collect(make().stream({ payload: invalid, tools, model: 'm' })).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).code).toBe('bad_request');
    expect((failure as ProviderError).message).toMatch(/rejected the request \(400\).*c9/);
  });

  it('keeps the partial text when the connection drops mid-stream, and does not retry it', async () => {
    server.enqueue(
      { kind: 'reply', text: 'one two three four five', dropAfter: 2 },
      { kind: 'reply', text: 'second' },
    );
    const provider = make();
    const failure = await collect(
      withRetries(() => provider.stream({ payload, tools, model: 'm' }), { baseDelayMs: 1 }),
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).partial).toBe('one two ');
    expect(server.pending).toBe(1);
  });

  it('retries 429 (honouring retry-after), 5xx and a reset before any token, each attempt visible', async () => {
    server.enqueue(
      { kind: 'fail', status: 429, retryAfterSeconds: 0 },
      { kind: 'fail', status: 503 },
      { kind: 'reset' },
      { kind: 'reply', text: 'finally' },
    );
    const provider = make();
    const events = await collect(
      withRetries(() => provider.stream({ payload, tools, model: 'm' }), { baseDelayMs: 1 }),
    );
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries.map((r) => (r.type === 'retry' ? r.attempt : 0))).toEqual([2, 3, 4]);
    expect(retries[0]?.type === 'retry' && retries[0].delayMs).toBe(0);
    expect(events.at(-1)?.type).toBe('done');
  });

  it('stops streaming when aborted and reports aborted with the partial text', async () => {
    server.enqueue({ kind: 'reply', text: 'a b c d e f g h i j', delayMs: 30 });
    const controller = new AbortController();
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of make().stream({ payload, tools, model: 'm', signal: controller.signal })) {
        if (event.type === 'text') {
          seen.push(event.text);
          if (seen.length === 3) controller.abort();
        }
      }
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).code).toBe('aborted');
    expect((failure as ProviderError).partial.startsWith(seen.join(''))).toBe(true);
    expect(seen.length).toBeLessThan(10);
  });
});

describe('provider configuration', () => {
  it('treats an empty key variable as unset', async () => {
    expect(() => createProvider({ provider: 'anthropic' }, {}, { ANTHROPIC_API_KEY: '' })).toThrow(
      /ANTHROPIC_API_KEY/,
    );
    const local = createProvider(
      { provider: 'openai-compatible', baseUrl: server.openaiBaseUrl },
      {},
      { KEEL_OPENAI_COMPATIBLE_API_KEY: '' },
    );
    server.enqueue({ kind: 'reply', text: 'fine' });
    expect((await collect(local.stream({ payload, tools, model: 'm' }))).at(-1)?.type).toBe('done');
  });

  it('names the missing key instead of sending a request that would 401', () => {
    expect(() => createProvider({ provider: 'anthropic' }, {}, {})).toThrow(/ANTHROPIC_API_KEY/);
    expect(() => createProvider({ provider: 'openai' }, {}, {})).toThrow(/OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(0);
  });

  it('reports a rejected key without dumping the response', async () => {
    const locked = await new ProviderServer({ apiKey: 'right' }).start();
    try {
      const provider = createProvider(
        { provider: 'anthropic', baseUrl: locked.anthropicBaseUrl },
        { anthropic: 'wrong' },
      );
      const failure = await collect(provider.stream({ payload, tools, model: 'm' })).catch((e: unknown) => e);
      expect((failure as ProviderError).code).toBe('auth');
      expect((failure as ProviderError).message).toBe(
        'Anthropic rejected the API key (401): invalid x-api-key',
      );
    } finally {
      await locked.close();
    }
  });

  it('puts Anthropic cache breakpoints on the tools, the system prefix and the newest message', async () => {
    const provider = createProvider(
      { provider: 'anthropic', baseUrl: server.anthropicBaseUrl },
      { anthropic: 'k' },
    );
    const withSummary: Payload = {
      messages: [
        { role: 'system', content: 'You are Keel.' },
        { role: 'system', content: 'Session so far: did things' },
        { role: 'user', content: 'goal' },
      ],
    };
    await collect(provider.stream({ payload: withSummary, tools, model: 'm' }));
    const body = server.requests[0]?.body as {
      system: { text: string; cache_control?: unknown }[];
      tools: { cache_control?: unknown }[];
      messages: { content: { cache_control?: unknown }[] }[];
    };
    expect(body.system.map((b) => b.text)).toEqual(['You are Keel.', 'Session so far: did things']);
    expect(body.system[1]?.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.system[0]?.cache_control).toBeUndefined();
    expect(body.tools.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('sends the environment block last: an OpenAI user input item, an Anthropic text block after the breakpoint', async () => {
    const withEnvironment: Payload = {
      messages: [
        { role: 'system', content: 'You are Keel.' },
        { role: 'user', content: 'goal' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'grep', arguments: '{}' }] },
        { role: 'tool', content: 'hits', toolCallId: 'c1' },
      ],
      environment: '<environment>\nDate: 2026-12-01\n</environment>',
    };
    const anthropic = createProvider(
      { provider: 'anthropic', baseUrl: server.anthropicBaseUrl },
      { anthropic: 'k' },
    );
    const openai = createProvider({ provider: 'openai', baseUrl: server.openaiBaseUrl }, { openai: 'k' });
    await collect(anthropic.stream({ payload: withEnvironment, tools, model: 'm' }));
    await collect(openai.stream({ payload: withEnvironment, tools, model: 'm' }));
    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    const anthropicBody = server.requests[0]?.body as {
      messages: { role: string; content: { type: string; text?: string; cache_control?: unknown }[] }[];
    };
    expect(anthropicBody.messages.at(-1)?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: 'hits', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: withEnvironment.environment },
    ]);
    // OpenAI's Responses API: input items, the tool result paired by call_id, the environment last.
    const openaiBody = server.requests[1]?.body as {
      input: { role?: string; type?: string; content?: string }[];
    };
    expect(openaiBody.input.map((item) => item.role ?? item.type)).toEqual([
      'system',
      'user',
      'function_call',
      'function_call_output',
      'user',
    ]);
    expect(openaiBody.input.at(-1)?.content).toBe(withEnvironment.environment);
  });

  it('knows common models and prices, and asks for a context window for unknown ones', () => {
    expect(findModel('claude-sonnet-4-5-20250929')?.contextWindow).toBe(200_000);
    expect(
      costOf({ inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 1_000_000 }, 'claude-sonnet-4-5'),
    ).toBeCloseTo(3.3);
    expect(resolveContextWindow('qwen2.5-coder:7b', 32_768)).toBe(32_768);
    expect(() => resolveContextWindow('qwen2.5-coder:7b')).toThrow(/--context-window/);
  });
});
