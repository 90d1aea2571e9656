import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unusualStop } from '../../../main/common/stopReasons.js';
import type { Payload } from '../../../main/common/payload.js';
import {
  createProvider,
  ProviderError,
  withRetries,
  type ModelProvider,
  type StreamEvent,
} from '../../../main/providers/index.js';
import { ProviderServer, type ScriptStep } from '../../support/providerServer.js';

let server: ProviderServer;
beforeEach(async () => {
  server = await new ProviderServer().start();
});
afterEach(async () => {
  await server.close();
});

const payload: Payload = { messages: [{ role: 'user', content: 'add rate limiting' }] };
const anthropic = () =>
  createProvider({ provider: 'anthropic', baseUrl: server.anthropicBaseUrl }, { anthropic: 'k' });
const responses = () =>
  createProvider({ provider: 'openai', baseUrl: server.openaiBaseUrl }, { openai: 'k' });
const chat = () => createProvider({ provider: 'openai-compatible', baseUrl: server.openaiBaseUrl }, {}, {});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function completed(provider: ModelProvider, step: ScriptStep) {
  server.enqueue(step);
  const done = (await collect(provider.stream({ payload, tools: [], model: 'claude-opus-5-5' }))).at(-1);
  if (done?.type !== 'done') throw new Error('the stream did not end with its message');
  return done.message;
}

/** The stream's failure after Keel's retries, with the retry events it yielded before failing. */
async function failure(provider: ModelProvider) {
  const events: StreamEvent[] = [];
  try {
    for await (const event of withRetries(() => provider.stream({ payload, tools: [], model: 'm' }), {
      baseDelayMs: 1,
    }))
      events.push(event);
  } catch (error) {
    if (error instanceof ProviderError) return { error, retries: events.filter((e) => e.type === 'retry') };
    throw error;
  }
  throw new Error(`the stream did not fail: ${JSON.stringify(events.at(-1))}`);
}

describe('Anthropic usage', () => {
  it('takes the final counts from message_delta, not the provisional ones of message_start', async () => {
    // As in recorded streams: message_start said 589 input and no cache read; the final usage is larger.
    const message = await completed(anthropic(), {
      kind: 'reply',
      text: 'done',
      provisionalUsage: { inputTokens: 589, cacheReadTokens: 0, cacheWriteTokens: 0 },
      usage: { inputTokens: 1250, cacheReadTokens: 6289, cacheWriteTokens: 310, outputTokens: 42 },
    });
    expect(message.usage).toEqual({
      inputTokens: 1250,
      outputTokens: 42,
      cacheReadTokens: 6289,
      cacheWriteTokens: 310,
    });
  });

  it("keeps message_start's counts when message_delta gives only output_tokens (older streams)", async () => {
    const message = await completed(anthropic(), {
      kind: 'reply',
      text: 'done',
      legacyDeltaUsage: true,
      usage: { inputTokens: 700, cacheReadTokens: 90, cacheWriteTokens: 5, outputTokens: 12 },
    });
    expect(message.usage).toEqual({
      inputTokens: 700,
      outputTokens: 12,
      cacheReadTokens: 90,
      cacheWriteTokens: 5,
    });
  });
});

describe('stops that must be said', () => {
  it("keeps an Anthropic refusal's stop_details and says them", async () => {
    const message = await completed(anthropic(), {
      kind: 'reply',
      text: 'I can',
      stopReason: 'refusal',
      stopDetails: {
        type: 'refusal',
        category: 'cyber',
        explanation: 'This looks like exploit development.',
      },
    });
    expect(message.stopReason).toBe('refusal');
    expect(message.stopDetails).toEqual({
      type: 'refusal',
      category: 'cyber',
      explanation: 'This looks like exploit development.',
    });
    const notice = unusualStop(message.stopReason, message.stopDetails);
    expect(notice?.kind).toBe('refusal');
    expect(notice?.message).toMatch(
      /^The model declined to continue \(cyber\): This looks like exploit development\./,
    );
  });

  it.each([
    ['chat completions', chat],
    ['the Responses API', responses],
  ])(
    "takes OpenAI's refusal part (%s) as a refusal with its text as the explanation",
    async (_name, make) => {
      const message = await completed(make(), {
        kind: 'reply',
        refusal: "I'm sorry, I can't help with that.",
      });
      expect(message.content).toBe('');
      expect(message.stopReason).toBe('refusal');
      expect(message.stopDetails?.explanation).toBe("I'm sorry, I can't help with that.");
      expect(unusualStop(message.stopReason, message.stopDetails)?.kind).toBe('refusal');
    },
  );

  it.each([
    ['Anthropic max_tokens', anthropic, 'max_tokens', 'output_limit'],
    ['Anthropic pause_turn', anthropic, 'pause_turn', 'paused'],
    ['chat completions length', chat, 'length', 'output_limit'],
    ['chat completions content_filter', chat, 'content_filter', 'content_filter'],
    ['Responses incomplete max_output_tokens', responses, 'max_output_tokens', 'output_limit'],
    ['Responses incomplete content_filter', responses, 'content_filter', 'content_filter'],
  ] as const)('names %s as an unusual stop', async (_name, make, reason, kind) => {
    const message = await completed(make(), { kind: 'reply', text: 'partial answer', stopReason: reason });
    expect(message.stopReason).toBe(reason);
    expect(unusualStop(message.stopReason, message.stopDetails)?.kind).toBe(kind);
  });

  it('says nothing for ordinary ends', async () => {
    for (const make of [anthropic, chat, responses]) {
      const message = await completed(make(), { kind: 'reply', text: 'all done' });
      expect(unusualStop(message.stopReason, message.stopDetails)).toBeUndefined();
    }
  });
});

describe('errors inside a stream are judged as their HTTP twins', () => {
  it('retries an Anthropic overloaded_error event and then succeeds', async () => {
    server.enqueue(
      { kind: 'streamError', errorType: 'overloaded_error', message: 'Overloaded' },
      { kind: 'reply', text: 'finally' },
    );
    const provider = anthropic();
    const events = await collect(
      withRetries(() => provider.stream({ payload, tools: [], model: 'm' }), { baseDelayMs: 1 }),
    );
    const retry = events.find((e) => e.type === 'retry');
    expect(retry?.type === 'retry' && retry.reason).toBe(
      'Anthropic is overloaded during the response (overloaded_error): Overloaded',
    );
    expect(events.at(-1)?.type).toBe('done');
  });

  it('does not retry an Anthropic invalid_request_error event, and says it in its own words', async () => {
    server.enqueue({
      kind: 'streamError',
      errorType: 'invalid_request_error',
      message: 'messages: too many images',
    });
    const { error, retries } = await failure(anthropic());
    expect(retries).toEqual([]);
    expect(error.code).toBe('bad_request');
    expect(error.message).toBe(
      'Anthropic rejected the request (invalid_request_error): messages: too many images',
    );
  });

  it.each([undefined, 'nested'] as const)(
    'reports an exhausted quota in a Responses error event (%s shape) once, without retrying',
    async (shape) => {
      server.enqueue({
        kind: 'streamError',
        errorType: 'insufficient_quota',
        code: 'insufficient_quota',
        message: 'You exceeded your current quota, please check your plan and billing details.',
        ...(shape ? { shape } : {}),
      });
      const { error, retries } = await failure(responses());
      expect(retries).toEqual([]);
      expect(error.code).toBe('quota');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(
        /^OpenAI: the account's quota or credit is used up, so retrying will not help \(You exceeded your current quota/,
      );
      expect(error.message).not.toMatch(/could not reach/);
      expect(server.pending).toBe(0);
    },
  );

  it('retries a Responses response.failed with server_error, and keeps a partial answer when text had streamed', async () => {
    server.enqueue(
      { kind: 'streamError', shape: 'failed', code: 'server_error', message: 'The server had an error.' },
      { kind: 'reply', text: 'recovered' },
    );
    const provider = responses();
    const events = await collect(
      withRetries(() => provider.stream({ payload, tools: [], model: 'm' }), { baseDelayMs: 1 }),
    );
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('done');

    server.enqueue({ kind: 'streamError', text: 'half an', code: 'server_error', message: 'boom' });
    const { error, retries } = await failure(provider);
    expect(retries).toEqual([]);
    expect(error.partial).toBe('half an');
    expect(error.code).toBe('server');
  });

  it('names a context too long in a chat-completions error chunk, without retrying', async () => {
    server.enqueue({
      kind: 'streamError',
      errorType: 'invalid_request_error',
      code: 'context_length_exceeded',
      message: "This model's maximum context length is 8192 tokens.",
    });
    const { error, retries } = await failure(chat());
    expect(retries).toEqual([]);
    expect(error.code).toBe('context_too_long');
    expect(error.message).toMatch(
      /longer than the model's context window \(This model's maximum context length is 8192 tokens\.\)/,
    );
  });

  it('shows a local server\'s plain error text (Ollama\'s {error: "..."}) as a server error, not a network one', async () => {
    server.enqueue(
      { kind: 'streamError', shape: 'string', message: 'model runner has unexpectedly stopped' },
      { kind: 'streamError', shape: 'string', message: 'model runner has unexpectedly stopped' },
      { kind: 'streamError', shape: 'string', message: 'model runner has unexpectedly stopped' },
      { kind: 'streamError', shape: 'string', message: 'model runner has unexpectedly stopped' },
    );
    const { error, retries } = await failure(chat());
    expect(retries).toHaveLength(3);
    expect(error.code).toBe('server');
    expect(error.message).toMatch(/model runner has unexpectedly stopped/);
    expect(error.message).not.toMatch(/could not reach/);
  });

  it('tells a 429 for an exhausted quota from a rate limit: the quota is not retried, the rate limit is', async () => {
    server.enqueue(
      {
        kind: 'fail',
        status: 429,
        errorType: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: 'slow down',
      },
      { kind: 'reply', text: 'ok' },
    );
    const provider = responses();
    const events = await collect(
      withRetries(() => provider.stream({ payload, tools: [], model: 'm' }), { baseDelayMs: 1 }),
    );
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);

    server.enqueue({
      kind: 'fail',
      status: 429,
      errorType: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'You exceeded your current quota',
    });
    const { error, retries } = await failure(provider);
    expect(retries).toEqual([]);
    expect(error.code).toBe('quota');
    expect(error.status).toBe(429);
  });
});

describe('failed tool results', () => {
  it('reach Anthropic with is_error: true, and successful ones without it', async () => {
    const withTools: Payload = {
      messages: [
        { role: 'user', content: 'run the tests' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'toolu_1', name: 'run_command', arguments: '{"command":"npm test"}' },
            { id: 'toolu_2', name: 'read_file', arguments: '{"path":"a.ts"}' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '[exit code 1] 3 failing', isError: true },
        { role: 'tool', toolCallId: 'toolu_2', content: 'export const a = 1;' },
      ],
    };
    server.enqueue({ kind: 'reply', text: 'ok' });
    await collect(anthropic().stream({ payload: withTools, tools: [], model: 'm' }));
    const body = server.requests.at(-1)?.body as { messages: { content: Record<string, unknown>[] }[] };
    const results = body.messages
      .flatMap((m) => m.content)
      .filter((block) => block['type'] === 'tool_result');
    expect(results.map((block) => [block['tool_use_id'], block['is_error']])).toEqual([
      ['toolu_1', true],
      ['toolu_2', undefined],
    ]);
  });
});
