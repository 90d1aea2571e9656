import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { INSTRUCTIONS_HEADING } from '../../../../main/core/projection/index.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../../../main/core/prompts/system.js';
import { createTurnHost } from '../../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { createScriptedSession, useSessionFixture } from '../../../support/sessionFixture.js';

const logs: SessionLog[] = [];

const fx = useSessionFixture('keel-turn-instructions-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'AGENTS.md'), 'Run `npm test` before you say you are done.\n');
    fs.mkdirSync(path.join(project, 'pkg', 'api'), { recursive: true });
    fs.writeFileSync(path.join(project, 'pkg', 'api', 'CLAUDE.md'), 'Handlers live in routes/.\n');
  },
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test' };
type Format = 'openai-compatible' | 'anthropic';

function createSession(format: Format): SessionLog {
  const log = createScriptedSession(fx, {
    policy: 'ask',
    toolMode: 'write',
    provider: format,
    contextWindow: 200_000,
  });
  logs.push(log);
  return log;
}

async function turn(log: SessionLog, prompt: string): Promise<void> {
  fx.server.enqueue({ kind: 'reply', text: `answer to ${prompt}` });
  const outcome = await runTurn(await createTurnHost(log, { env: ENV }), { prompt });
  expect(outcome.status).toBe('completed');
}

const loadedEvents = (log: SessionLog) =>
  log.read().filter((event): event is EventOf<'instructions_loaded'> => event.kind === 'instructions_loaded');

type OpenAIBody = { messages: { role: string; content: string }[] };
type AnthropicBody = {
  system: { type: string; text: string; cache_control?: unknown }[];
  messages: unknown[];
};

describe('project instructions in a turn', () => {
  it('records them once, sends them right after the system prompt, and records an edit between turns once', async () => {
    const log = createSession('openai-compatible');
    await turn(log, 'one');
    await turn(log, 'two');
    expect(loadedEvents(log)).toHaveLength(1);
    expect(loadedEvents(log)[0]?.files.map((file) => file.path)).toEqual(['AGENTS.md', 'pkg/api/CLAUDE.md']);
    const [first, second] = fx.server.requests.map((request) => request.body as OpenAIBody);
    expect(first?.messages[0]).toEqual({ role: 'system', content: DEFAULT_SYSTEM_PROMPT });
    const instructions = first?.messages[1];
    expect(instructions?.role).toBe('system');
    expect(instructions?.content.startsWith(INSTRUCTIONS_HEADING)).toBe(true);
    expect(instructions?.content).toContain('## AGENTS.md\n\nRun `npm test` before you say you are done.');
    expect(instructions?.content).toContain(
      '## pkg/api/CLAUDE.md (applies to pkg/api/)\n\nHandlers live in routes/.',
    );
    expect(second?.messages.slice(0, 2)).toEqual(first?.messages.slice(0, 2));

    fs.writeFileSync(path.join(fx.project, 'AGENTS.md'), 'Use pnpm, not npm.\n');
    await turn(log, 'three');
    await turn(log, 'four');
    const loaded = loadedEvents(log);
    expect(loaded).toHaveLength(2);
    expect(loaded[1]?.files[0]?.content).toBe('Use pnpm, not npm.\n');
    const [, , third, fourth] = fx.server.requests.map((request) => request.body as OpenAIBody);
    expect(third?.messages[1]?.content).toContain('Use pnpm, not npm.');
    expect(third?.messages[1]?.content).not.toContain('npm test');
    expect(fourth?.messages.slice(0, 2)).toEqual(third?.messages.slice(0, 2));
    // From the change on, only the instructions message differs from what the earlier turns sent.
    expect(third?.messages[0]).toEqual(first?.messages[0]);
    expect(third?.messages.slice(2, 4)).toEqual(second?.messages.slice(2, 4));
  });

  it('records that the files were removed, and sends no instructions from then on', async () => {
    const log = createSession('openai-compatible');
    await turn(log, 'one');
    fs.rmSync(path.join(fx.project, 'AGENTS.md'));
    fs.rmSync(path.join(fx.project, 'pkg'), { recursive: true });
    await turn(log, 'two');
    await turn(log, 'three');
    expect(loadedEvents(log).map((event) => event.files.length)).toEqual([2, 0]);
    const last = fx.server.requests.at(-1)?.body as OpenAIBody;
    expect(last.messages.filter((message) => message.role === 'system')).toHaveLength(1);
  });

  it('runs the turn without them when they cannot be read, saying so as a notice', async () => {
    const log = createSession('openai-compatible');
    const notices: string[] = [];
    const host = await createTurnHost(log, { env: ENV, hooks: { onNotice: (text) => notices.push(text) } });
    host.instructions = () => Promise.reject(new Error('EACCES: permission denied'));
    fx.server.enqueue({ kind: 'reply', text: 'fine' });
    expect(await runTurn(host, { prompt: 'one' })).toEqual({ status: 'completed', text: 'fine' });
    expect(loadedEvents(log)).toEqual([]);
    expect(notices).toEqual(['the project instructions could not be read: EACCES: permission denied']);
  });

  it('puts them in a second Anthropic system block after the system prompt', async () => {
    const log = createSession('anthropic');
    await turn(log, 'one');
    const body = fx.server.requests[0]?.body as AnthropicBody;
    expect(body.system).toHaveLength(2);
    expect(body.system[0]).toEqual({ type: 'text', text: DEFAULT_SYSTEM_PROMPT });
    expect(body.system[1]?.text.startsWith(`${INSTRUCTIONS_HEADING}\n`)).toBe(true);
    expect(body.system[1]?.text).toContain('Handlers live in routes/.');
    // The cache breakpoint of the system prefix sits on the instructions, so both are read from the cache.
    expect(body.system[1]?.cache_control).toEqual({ type: 'ephemeral' });
    expect(fx.server.requests[0]?.rejected).toBeUndefined();
  });

  it('sends the same prefix bytes (system prompt, instructions) in every session of the same project', async () => {
    const a = createSession('openai-compatible');
    const b = createSession('openai-compatible');
    await turn(a, 'one');
    await turn(b, 'a different question');
    await turn(a, 'two');
    const prefixes = fx.server.requests.map((request) => {
      const firstUser = request.raw.indexOf('{"role":"user"');
      expect(firstUser).toBeGreaterThan(0);
      return request.raw.slice(0, firstUser);
    });
    expect(new Set(prefixes).size).toBe(1);
    expect(prefixes[0]).toContain(INSTRUCTIONS_HEADING);
  });
});
