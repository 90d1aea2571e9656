import { afterEach, describe, expect, it } from 'vitest';
import { ProviderServer, validateAnthropicRequest, validateOpenAIRequest } from './providerServer.js';

let server: ProviderServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('scripted provider server: what it rejects', () => {
  it('rejects an OpenAI tool call without its result, and a result without its call', () => {
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{}' } }],
    };
    expect(validateOpenAIRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }, call] })).toMatch(
      /did not have response messages: c1/,
    );
    expect(
      validateOpenAIRequest({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }, call, { role: 'user', content: 'next' }],
      }),
    ).toMatch(/must be followed by tool messages/);
    expect(
      validateOpenAIRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'zz', content: 'x' },
        ],
      }),
    ).toMatch(/must be a response to a preceeding message/);
    expect(
      validateOpenAIRequest({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          call,
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
      }),
    ).toBeNull();
  });

  it('rejects an Anthropic tool_use without a tool_result in the next message, and an unexpected tool_result', () => {
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'grep', input: {} }] };
    const base = { model: 'm', max_tokens: 10 };
    expect(validateAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'hi' }, use] })).toMatch(
      /without `tool_result`/,
    );
    expect(
      validateAnthropicRequest({
        ...base,
        messages: [{ role: 'user', content: 'hi' }, use, { role: 'user', content: 'go on' }],
      }),
    ).toMatch(/without `tool_result`/);
    expect(
      validateAnthropicRequest({
        ...base,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }],
      }),
    ).toMatch(/unexpected `tool_use_id`/);
    expect(validateAnthropicRequest({ ...base, messages: [{ role: 'user', content: '' }] })).toMatch(
      /non-empty/,
    );
    expect(
      validateAnthropicRequest({
        ...base,
        messages: [
          { role: 'user', content: 'hi' },
          use,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        ],
      }),
    ).toBeNull();
  });

  it('takes text after the tool results of a user message, and rejects it before them', () => {
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'grep', input: {} }] };
    const result = { type: 'tool_result', tool_use_id: 't1', content: 'ok' };
    const note = { type: 'text', text: '<environment>…</environment>' };
    const request = (content: unknown[]) => ({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }, use, { role: 'user', content }],
    });
    expect(validateAnthropicRequest(request([result, note]))).toBeNull();
    expect(validateAnthropicRequest(request([note, result]))).toMatch(/without `tool_result`/);
  });
});

describe('scripted provider server over HTTP', () => {
  it('streams OpenAI chunks with text, a tool call and usage, then [DONE]', async () => {
    server = await new ProviderServer().start();
    server.enqueue({
      kind: 'reply',
      text: 'hello there',
      toolCalls: [{ id: 'c1', name: 'grep', arguments: { pattern: 'x' } }],
    });
    const res = await post(`${server.openaiBaseUrl}/chat/completions`, {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const chunks = text
      .split('\n\n')
      .filter((l) => l.startsWith('data: ') && !l.includes('[DONE]'))
      .map(
        (l) =>
          JSON.parse(l.slice(6)) as {
            choices: { delta: { content?: string; tool_calls?: { function: { arguments?: string } }[] } }[];
            usage?: unknown;
          },
      );
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const args = chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function.arguments ?? '').join('');
    expect(content).toBe('hello there');
    expect(JSON.parse(args)).toEqual({ pattern: 'x' });
    expect(chunks.at(-1)?.usage).toBeDefined();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('answers 400 in the provider shape for an invalid sequence, and 401 for a wrong key', async () => {
    server = await new ProviderServer({ apiKey: 'sk-test' }).start();
    const bad = await post(
      `${server.anthropicBaseUrl}/v1/messages`,
      {
        model: 'm',
        max_tokens: 5,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }] }],
      },
      { 'x-api-key': 'sk-test' },
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const unauthorized = await post(
      `${server.anthropicBaseUrl}/v1/messages`,
      { model: 'm', max_tokens: 5, messages: [] },
      { 'x-api-key': 'wrong' },
    );
    expect(unauthorized.status).toBe(401);
    expect(server.requests.map((r) => r.rejected)).toEqual([
      expect.stringMatching(/unexpected/),
      'invalid x-api-key',
    ]);
  });

  it('streams Anthropic events in order and honours scripted failures', async () => {
    server = await new ProviderServer().start();
    server.enqueue(
      { kind: 'fail', status: 429, retryAfterSeconds: 2 },
      { kind: 'reply', text: 'hi', usage: { cacheReadTokens: 7 } },
    );
    const body = { model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const limited = await post(`${server.anthropicBaseUrl}/v1/messages`, body);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    const ok = await post(`${server.anthropicBaseUrl}/v1/messages`, body);
    const types = [...(await ok.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(types).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });
});
