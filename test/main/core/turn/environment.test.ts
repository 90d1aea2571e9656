import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../../main/common/clock.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import type { RecordedRequest } from '../../../support/providerServer.js';
import { createScriptedSession, useSessionFixture } from '../../../support/sessionFixture.js';

const logs: SessionLog[] = [];

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd: fx.project,
    stdio: 'ignore',
  });
}

const fx = useSessionFixture('keel-turn-environment-', {
  prepare: ({ project }) => {
    git('init', '-q', '-b', 'rate-limits');
    fs.mkdirSync(path.join(project, 'src'));
    fs.writeFileSync(path.join(project, 'src', 'server.js'), 'listen(8080)\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'first');
  },
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

const FORMATS = ['openai-compatible', 'anthropic'] as const;
type Format = (typeof FORMATS)[number];
const CLOCK = fixedClock('2026-12-01T12:00:00Z');

function createSession(format: Format): SessionLog {
  const log = createScriptedSession(fx, {
    policy: 'full-auto',
    toolMode: 'write',
    provider: format,
    contextWindow: 200_000,
  });
  logs.push(log);
  return log;
}

async function turn(log: SessionLog, prompt: string): Promise<void> {
  const host = await createTurnHost(log, { env: { ANTHROPIC_API_KEY: 'sk-ant-test' }, clock: CLOCK });
  const outcome = await runTurn(host, { prompt });
  expect(outcome.status).toBe('completed');
}

type Block = { type: string; text?: string; cache_control?: unknown };
type Message = { role: string; content: string | Block[] | null };
const messagesOf = (request: RecordedRequest | undefined) =>
  (request?.body as { messages: Message[] }).messages;

/** The environment block of a request, taken from where each wire format carries it (and checked to be last). */
function environmentOf(format: Format, request: RecordedRequest | undefined): string {
  const last = messagesOf(request).at(-1);
  expect(last?.role).toBe('user');
  if (format === 'openai-compatible') return last?.content as string;
  const all = messagesOf(request).flatMap((message) => message.content as Block[]);
  const block = all.at(-1);
  expect(block?.type).toBe('text');
  // The cache breakpoint stays on the conversation's newest block, right before the volatile one.
  expect(block?.cache_control).toBeUndefined();
  expect(all.at(-2)?.cache_control).toEqual({ type: 'ephemeral' });
  return block?.text ?? '';
}

/** A request's messages without its environment block, cache breakpoints removed (they move every request). */
function conversationOf(format: Format, request: RecordedRequest | undefined): Message[] {
  const messages = structuredClone(messagesOf(request));
  if (format === 'openai-compatible') return messages.slice(0, -1);
  const last = messages.at(-1);
  if (Array.isArray(last?.content)) {
    last.content.pop();
    if (last.content.length === 0) messages.pop();
  }
  for (const message of messages)
    if (Array.isArray(message.content)) for (const block of message.content) delete block.cache_control;
  return messages;
}

describe.each(FORMATS)('the environment block (%s)', (format) => {
  it('comes last in every request, with the date, OS, shell, branch, status, box and policy', async () => {
    const log = createSession(format);
    fs.writeFileSync(path.join(fx.project, 'src', 'server.js'), 'listen(9090)\n');
    fx.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading it.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'src/server.js' } }],
      },
      { kind: 'reply', text: 'It listens on 9090.' },
    );
    await turn(log, 'what port?');
    expect(fx.server.requests).toHaveLength(2);
    expect(fx.server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    for (const request of fx.server.requests) {
      const text = environmentOf(format, request);
      expect(text.startsWith('<environment>\n')).toBe(true);
      expect(text.endsWith('\n</environment>')).toBe(true);
      expect(text).toMatch(/^Date: 2026-12-0[12] \(/m);
      expect(text).toMatch(/^OS: .*\S/m);
      expect(text).toContain('Shell: bash');
      expect(text).toContain('Git: branch rate-limits; git status --short:\n   M src/server.js\n');
      expect(text).toMatch(/^Box: /m);
      expect(text).toContain('Policy: full-auto: ');
    }
    // The second request answers the tool call: the block follows the tool result, never sits before it.
    if (format === 'anthropic') {
      const blocks = messagesOf(fx.server.requests[1]).at(-1)?.content as Block[];
      expect(blocks.map((block) => block.type)).toEqual(['tool_result', 'text']);
    } else {
      expect(messagesOf(fx.server.requests[1]).map((message) => message.role)).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
        'user',
      ]);
    }
  });

  it('is never logged, and leaves every earlier message byte-stable across requests and turns', async () => {
    const log = createSession(format);
    fx.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'src/server.js' } }],
      },
      { kind: 'reply', text: 'First answer.' },
      { kind: 'reply', text: 'Second answer.' },
    );
    await turn(log, 'one');
    log.append({ kind: 'policy_changed', policy: 'ask' });
    await turn(log, 'two');
    expect(fx.server.requests).toHaveLength(3);
    for (let i = 1; i < fx.server.requests.length; i++) {
      const before = conversationOf(format, fx.server.requests[i - 1]);
      const after = conversationOf(format, fx.server.requests[i]);
      expect(after.slice(0, before.length)).toEqual(before);
    }
    // The raw bytes too: everything before the messages (system, and for OpenAI the tools) is identical.
    const heads = fx.server.requests.map((request) =>
      request.raw.slice(0, request.raw.indexOf('"messages"')),
    );
    expect(new Set(heads).size).toBe(1);
    expect(environmentOf(format, fx.server.requests[2])).toContain('Policy: ask: ');
    for (const event of log.read()) expect(JSON.stringify(event)).not.toContain('<environment>');
  });
});
