import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, ModelPin, ReasoningEffort, SessionEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { exportSession, importSession } from '../../../../main/core/harness/transfer.js';
import { projectPayload } from '../../../../main/core/projection/projectPayload.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { loadSessionState } from '../../../../main/core/turn/loadState.js';
import { foldSession } from '../../../../main/core/turn/state.js';
import { createProvider } from '../../../../main/providers/index.js';
import { rejected } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

const fx = useTurnHostFixture('keel-reasoning-', {
  prepare: ({ project }) => {
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'a.txt'), 'alpha\n');
    writeFileSync(path.join(project, 'src', 'b.txt'), 'beta\n');
  },
  cleanup: () => {
    for (const log of fx.logs) expect(loadSessionState(log)).toEqual(foldSession(log.read()));
  },
});

type Provider = ModelPin['provider'];

function createSession(provider: Provider, effort?: ReasoningEffort, model = 'scripted-model'): SessionLog {
  return fx.track(
    SessionLog.create(fx.home, {
      projectFolder: fx.project,
      provider,
      model,
      baseUrl: provider === 'anthropic' ? fx.server.anthropicBaseUrl : fx.server.openaiBaseUrl,
      contextWindow: 200_000,
      ...(effort ? { reasoningEffort: effort } : {}),
      toolMode: 'write',
      policy: 'auto-edit',
    }),
  );
}

function hostFor(log: SessionLog, extra: Partial<TurnHost> = {}): TurnHost {
  return fx.hostFor(log, {
    createProvider: (pin) => createProvider(pin, { anthropic: 'k', openai: 'k' }, {}),
    ...extra,
  });
}

const read = (id: string, file: string) => ({ id, name: 'read_file', arguments: { path: `src/${file}` } });

type AnthropicBody = {
  thinking?: unknown;
  output_config?: unknown;
  max_tokens: number;
  messages: { role: string; content: { type: string; signature?: string; thinking?: string }[] }[];
};
const anthropicBody = (i: number) => fx.server.requests[i]?.body as AnthropicBody;
const assistants = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'assistant_message'> => e.kind === 'assistant_message');

describe('Anthropic thinking across tool calls', () => {
  it('replays each signed thinking block unchanged before its tool_use, and the prefix stays byte-stable', async () => {
    const log = createSession('anthropic', 'high');
    fx.server.enqueue(
      { kind: 'reply', thinking: 'The file a.txt first.', toolCalls: [read('c1', 'a.txt')] },
      { kind: 'reply', thinking: 'Now b.txt.', redactedThinking: 1, toolCalls: [read('c2', 'b.txt')] },
      { kind: 'reply', thinking: 'Both read.', text: 'alpha and beta.' },
    );
    const outcome = await runTurn(hostFor(log), { prompt: 'read a and b' });
    expect(outcome).toEqual({ status: 'completed', text: 'alpha and beta.' });
    expect(rejected(fx.server)).toEqual([]);
    expect(anthropicBody(0).thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(anthropicBody(0).output_config).toEqual({ effort: 'high' });
    expect(anthropicBody(0).max_tokens).toBeGreaterThan(32_000);

    const [first, second, last] = assistants(log);
    expect(first?.reasoning).toEqual([
      { type: 'thinking', thinking: 'The file a.txt first.', signature: expect.any(String) as string },
    ]);
    expect(second?.reasoning?.map((part) => part.type)).toEqual(['thinking', 'redacted_thinking']);
    expect(last?.reasoning?.[0]).toMatchObject({ type: 'thinking', thinking: 'Both read.' });

    // Request 2 carries turn 1's block first in its assistant message, exactly as logged.
    const replayed = anthropicBody(1).messages[1]?.content[0];
    expect(replayed).toEqual({
      type: 'thinking',
      thinking: 'The file a.txt first.',
      signature: first?.reasoning?.[0]?.type === 'thinking' ? first.reasoning[0].signature : '',
    });
    expect(anthropicBody(2).messages[3]?.content.map((block) => block.type)).toEqual([
      'thinking',
      'redacted_thinking',
      'tool_use',
    ]);
    // Request N+1 begins with request N's messages, byte for byte, up to N's newest (which holds the breakpoint).
    for (const n of [0, 1]) {
      const before = anthropicBody(n).messages.slice(0, -1);
      const after = anthropicBody(n + 1).messages.slice(0, before.length);
      expect(JSON.stringify(after)).toBe(JSON.stringify(before));
    }
  });

  it('is rejected by the server when the thinking block before a tool result is dropped or changed', async () => {
    const log = createSession('anthropic', 'high');
    fx.server.enqueue({ kind: 'reply', thinking: 'Plan: read a.', toolCalls: [read('c1', 'a.txt')] });
    fx.server.enqueue({ kind: 'reply', text: 'done' });
    await runTurn(hostFor(log), { prompt: 'read a' });
    expect(rejected(fx.server)).toEqual([]);
    const good = fx.server.requests[1]?.body as AnthropicBody;
    const send = async (body: AnthropicBody) => {
      const response = await fetch(`${fx.server.anthropicBaseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    };
    const dropped = structuredClone(good);
    dropped.messages[1]?.content.shift();
    expect(await send(dropped)).toMatchObject({
      status: 400,
      text: expect.stringContaining('Expected `thinking`') as string,
    });
    const changed = structuredClone(good);
    const block = changed.messages[1]?.content[0];
    if (block) block.thinking = 'Plan: read b.';
    expect(await send(changed)).toMatchObject({
      status: 400,
      text: expect.stringContaining('Invalid `signature`') as string,
    });
  });

  it('asks a budget model for budget_tokens below max_tokens, with the interleaved-thinking beta', async () => {
    const log = createSession('anthropic', undefined, 'claude-haiku-4-5');
    fx.server.enqueue(
      { kind: 'reply', thinking: 'Read a.', toolCalls: [read('c1', 'a.txt')] },
      { kind: 'reply', thinking: 'Done.', text: 'alpha' },
    );
    await runTurn(hostFor(log), { prompt: 'read a' });
    expect(rejected(fx.server)).toEqual([]);
    const body = anthropicBody(0);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 16_000 });
    expect(body.max_tokens).toBeGreaterThan(16_000);
    expect(fx.server.requests[0]?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(anthropicBody(1).messages[1]?.content[0]?.type).toBe('thinking');
  });

  it('continues a tool loop logged without thinking (an older session) by asking that request without it', async () => {
    const log = createSession('anthropic', 'high');
    log.append({ kind: 'user_message', content: 'read a' });
    // An assistant message as older Keel logged it: no reasoning field at all.
    log.append({
      kind: 'assistant_message',
      content: '',
      toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"src/a.txt"}' }],
    });
    fx.server.enqueue(
      { kind: 'reply', thinking: 'ignored', text: 'It says alpha.' },
      { kind: 'reply', thinking: 'Hm.', text: 'ok' },
    );
    expect(await runTurn(hostFor(log))).toEqual({ status: 'completed', text: 'It says alpha.' });
    expect(rejected(fx.server)).toEqual([]);
    expect(anthropicBody(0).thinking).toBeUndefined();
    await runTurn(hostFor(log), { prompt: 'and now?' });
    expect(anthropicBody(1).thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(rejected(fx.server)).toEqual([]);
  });

  it('keeps what streamed of the thinking when stopped mid-thinking, and never replays it', async () => {
    const log = createSession('anthropic', 'high');
    const controller = new AbortController();
    let seen = 0;
    fx.server.enqueue({
      kind: 'reply',
      thinking: 'one two three four five six seven eight nine ten',
      text: 'never',
      delayMs: 30,
    });
    const outcome = await runTurn(
      hostFor(log, {
        signal: controller.signal,
        hooks: { onDelta: (delta) => delta.type === 'reasoning' && ++seen === 3 && controller.abort() },
      }),
      { prompt: 'think' },
    );
    expect(outcome.status).toBe('interrupted');
    const interrupted = log.read().at(-1);
    expect(interrupted?.kind).toBe('interrupted');
    if (interrupted?.kind !== 'interrupted') return;
    expect(interrupted.reasoning?.[0]?.type).toBe('reasoning_text');
    const text = interrupted.reasoning?.[0]?.type === 'reasoning_text' ? interrupted.reasoning[0].text : '';
    expect(text.startsWith('one two three')).toBe(true);
    expect(text).not.toContain('ten');

    fx.server.enqueue({ kind: 'reply', thinking: 'Again.', text: 'Back.' });
    expect(await runTurn(hostFor(log), { prompt: 'go on' })).toEqual({ status: 'completed', text: 'Back.' });
    expect(rejected(fx.server)).toEqual([]);
    const blocks = anthropicBody(1).messages.flatMap((message) => message.content.map((block) => block.type));
    expect(blocks).not.toContain('thinking');
  });

  it('counts thinking tokens in usage, per message and in the session totals', async () => {
    const log = createSession('anthropic', 'high');
    fx.server.enqueue(
      {
        kind: 'reply',
        thinking: 'a',
        toolCalls: [read('c1', 'a.txt')],
        usage: { outputTokens: 300, reasoningTokens: 200 },
      },
      { kind: 'reply', thinking: 'b', text: 'done', usage: { outputTokens: 90, reasoningTokens: 40 } },
    );
    await runTurn(hostFor(log), { prompt: 'read a' });
    expect(assistants(log).map((event) => event.usage?.reasoningTokens)).toEqual([200, 40]);
    expect(log.usageTotals()).toMatchObject({ outputTokens: 390, reasoningTokens: 240 });
    expect(foldSession(log.read()).totals.reasoningTokens).toBe(240);
    const usage = log.readTrace().filter((entry) => entry.stage === 'usage');
    expect(usage.map((entry) => (entry.detail as { reasoningTokens?: number }).reasoningTokens)).toEqual([
      200, 40,
    ]);
  });

  it('survives a stop for approval and a reopened log: the resumed request carries the signed blocks', async () => {
    const log = createSession('anthropic', 'high');
    fx.server.enqueue({
      kind: 'reply',
      thinking: 'I will run the tests.',
      toolCalls: [{ id: 'r1', name: 'run_command', arguments: { command: 'echo hi' } }],
    });
    const first = await runTurn(hostFor(log), { prompt: 'run tests' });
    expect(first.status).toBe('awaiting_approval');
    const request = log.read().at(-1) as SessionEvent;
    fx.close(log);
    const reopened = SessionLog.open(fx.home, log.id, { write: true });
    fx.track(reopened);
    reopened.append({ kind: 'approval_denied', requestSeq: request.seq, reason: 'not now' });
    fx.server.enqueue({ kind: 'reply', thinking: 'Denied.', text: 'OK.' });
    expect(await runTurn(hostFor(reopened))).toEqual({ status: 'completed', text: 'OK.' });
    expect(rejected(fx.server)).toEqual([]);
    expect(anthropicBody(1).messages[1]?.content[0]).toMatchObject({
      type: 'thinking',
      thinking: 'I will run the tests.',
    });
  });

  it('carries the reasoning through export and import: the imported log projects the same payload', async () => {
    const log = createSession('anthropic', 'high');
    fx.server.enqueue(
      { kind: 'reply', thinking: 'Read a.', redactedThinking: 1, toolCalls: [read('c1', 'a.txt')] },
      { kind: 'reply', thinking: 'Done.', text: 'alpha' },
    );
    await runTurn(hostFor(log), { prompt: 'read a' });
    let text = '';
    exportSession(fx.home, log.id, (chunk) => (text += chunk));
    expect(text).toContain('"redacted_thinking"');
    const otherHome = path.join(fx.dir, 'other-home');
    const { id } = importSession(otherHome, text, { project: fx.project });
    const imported = SessionLog.open(otherHome, id, { write: false });
    try {
      const system = 'You are Keel.';
      expect(projectPayload(imported.read(), { system })).toEqual(projectPayload(log.read(), { system }));
      const reasoning = (events: SessionEvent[]) =>
        events.flatMap((event) => (event.kind === 'assistant_message' ? (event.reasoning ?? []) : []));
      expect(reasoning(imported.read())).toEqual(reasoning(log.read()));
      expect(reasoning(imported.read())).toHaveLength(3);
    } finally {
      imported.close();
    }
  });
});

type ResponsesBody = {
  reasoning?: unknown;
  include?: unknown;
  store?: unknown;
  input: { type?: string; role?: string; id?: string; encrypted_content?: string; call_id?: string }[];
};
const responsesBody = (i: number) => fx.server.requests[i]?.body as ResponsesBody;

describe('OpenAI reasoning over the Responses API', () => {
  it('replays each reasoning item with its encrypted content before its function call, stateless', async () => {
    const log = createSession('openai', 'medium');
    fx.server.enqueue(
      {
        kind: 'reply',
        thinking: 'Read a first.',
        toolCalls: [read('c1', 'a.txt')],
        usage: { reasoningTokens: 64 },
      },
      { kind: 'reply', thinking: 'Then b.', toolCalls: [read('c2', 'b.txt')] },
      { kind: 'reply', thinking: 'Done.', text: 'alpha and beta.' },
    );
    const outcome = await runTurn(hostFor(log), { prompt: 'read a and b' });
    expect(outcome).toEqual({ status: 'completed', text: 'alpha and beta.' });
    expect(rejected(fx.server)).toEqual([]);
    expect(fx.server.requests.map((request) => request.format)).toEqual([
      'responses',
      'responses',
      'responses',
    ]);
    expect(responsesBody(0)).toMatchObject({
      reasoning: { effort: 'medium', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    const [first] = assistants(log);
    expect(first?.reasoning).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        encryptedContent: expect.stringMatching(/^enc_/) as string,
        summary: ['Read a first.'],
      },
    ]);
    expect(first?.usage?.reasoningTokens).toBe(64);
    const kinds = responsesBody(2).input.map((item) => item.type ?? item.role);
    expect(kinds).toEqual([
      'system',
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    for (const n of [0, 1]) {
      const before = responsesBody(n).input;
      expect(JSON.stringify(responsesBody(n + 1).input.slice(0, before.length))).toBe(JSON.stringify(before));
    }
  });

  it('is rejected by the server for a function_call_output without its call, or reasoning without its content', async () => {
    const post = async (input: unknown[]) => {
      const response = await fetch(`${fx.server.openaiBaseUrl}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input, store: false, stream: true }),
      });
      return { status: response.status, text: await response.text() };
    };
    expect(
      await post([
        { role: 'user', content: 'x' },
        { type: 'function_call_output', call_id: 'c9', output: 'y' },
      ]),
    ).toMatchObject({
      status: 400,
      text: expect.stringContaining('No tool call found for function call output with call_id c9') as string,
    });
    expect(
      await post([
        { role: 'user', content: 'x' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', call_id: 'c1', name: 'grep', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'y' },
      ]),
    ).toMatchObject({
      status: 400,
      text: expect.stringContaining('Items are not persisted when `store` is set to false') as string,
    });
  });
});

describe('reasoning_content from an OpenAI-compatible server', () => {
  it('is logged and shown, and not sent back', async () => {
    const log = createSession('openai-compatible');
    const shown: string[] = [];
    fx.server.enqueue(
      { kind: 'reply', thinking: 'Let me look.', toolCalls: [read('c1', 'a.txt')] },
      { kind: 'reply', text: 'alpha' },
    );
    await runTurn(hostFor(log, { hooks: { onDelta: (d) => d.type === 'reasoning' && shown.push(d.text) } }), {
      prompt: 'read a',
    });
    expect(shown.join('')).toBe('Let me look.');
    expect(assistants(log)[0]?.reasoning).toEqual([{ type: 'reasoning_text', text: 'Let me look.' }]);
    expect(fx.server.requests[1]?.raw).not.toContain('reasoning_content');
    expect(rejected(fx.server)).toEqual([]);
  });
});
