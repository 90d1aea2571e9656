import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Policy, SessionEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { runTurn, TurnSetupError } from '../../../../main/core/turn/engine.js';
import { loadSessionState } from '../../../../main/core/turn/loadState.js';
import { foldSession } from '../../../../main/core/turn/state.js';
import { createProvider } from '../../../../main/providers/index.js';
import { kinds } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

const fx = useTurnHostFixture('keel-turn-', {
  prepare: ({ project }) => {
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
  },
  cleanup: () => {
    // The indexed state loader must agree with a fold over the whole log for every session a test built.
    for (const log of fx.logs) expect(loadSessionState(log)).toEqual(foldSession(log.read()));
  },
});

const createSession = (policy: Policy, toolMode: 'read-only' | 'write' = 'write'): SessionLog =>
  fx.createSession({ policy, toolMode });

type Body = { messages: { role: string; content: string | null; tool_call_id?: string }[] };
const bodyOf = (i: number) => fx.server.requests[i]?.body as Body;

describe('a turn', () => {
  it('runs a multi-step turn: tool call, result, final answer, all as events', async () => {
    const log = createSession('ask');
    fx.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading it.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'src/server.go' } }],
      },
      { kind: 'reply', text: 'It is an empty main.' },
    );
    const deltas: string[] = [];
    const outcome = await runTurn(
      fx.hostFor(log, { hooks: { onDelta: (d) => d.type === 'text' && deltas.push(d.text) } }),
      {
        prompt: 'what does server.go do?',
      },
    );
    expect(outcome).toEqual({ status: 'completed', text: 'It is an empty main.' });
    expect(kinds(log.read())).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'tool_call_started',
      'tool_result',
      'assistant_message',
    ]);
    const result = log.read().find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toContain('func main()');
    expect(result?.kind === 'tool_result' && result.idempotencyKey).toBe('ev3-read_file');
    expect(bodyOf(1).messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(deltas.join('')).toBe('Reading it.It is an empty main.');
    expect(log.readTrace().map((t) => t.stage)).toEqual(
      expect.arrayContaining(['projection', 'time_to_first_token', 'stream', 'tool:read_file']),
    );
  });

  it("stores a request's trace in its assistant message's commit and a tool's in its result's: no trace commit of its own", async () => {
    const log = createSession('ask');
    fx.server.enqueue(
      { kind: 'reply', toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'src/server.go' } }] },
      { kind: 'reply', text: 'It is an empty main.' },
    );
    await runTurn(fx.hostFor(log), { prompt: 'what does server.go do?' });
    const db = new Database(path.join(log.dir, 'events.sqlite'), { readonly: true });
    try {
      const carriers = db.prepare('SELECT kind FROM events WHERE trace IS NOT NULL ORDER BY seq').pluck();
      expect(carriers.all()).toEqual(['assistant_message', 'tool_result', 'assistant_message']);
      expect(db.prepare('SELECT count(*) FROM trace').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    const request = ['projection', 'time_to_first_token', 'stream', 'usage'];
    expect(log.readTrace({ turn: 1 }).map((t) => t.stage)).toEqual([
      ...request,
      'tool:read_file',
      ...request,
    ]);
  });

  it('stops on an approval request with the diff, and executes exactly once after the grant', async () => {
    const log = createSession('ask');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'w1', name: 'write_file', arguments: { path: 'src/limit.go', content: 'package main\n' } },
      ],
    });
    const first = await runTurn(fx.hostFor(log), { prompt: 'add a limiter' });
    expect(first.status).toBe('awaiting_approval');
    const request = log.read().at(-1);
    expect(request?.kind).toBe('approval_request');
    if (request?.kind !== 'approval_request') return;
    expect(request.diff).toContain('+package main');
    expect(existsSync(path.join(fx.project, 'src/limit.go'))).toBe(false);

    log.append({ kind: 'approval_granted', requestSeq: request.seq, scope: 'once' });
    fx.server.enqueue({ kind: 'reply', text: 'Done.' });
    const second = await runTurn(fx.hostFor(log));
    expect(second).toEqual({ status: 'completed', text: 'Done.' });
    expect(readFileSync(path.join(fx.project, 'src/limit.go'), 'utf8')).toBe('package main\n');
    const started = log.read().find((e) => e.kind === 'tool_call_started');
    expect(started?.kind === 'tool_call_started' && started.idempotencyKey).toBe(
      `ev${request.seq}-write_file`,
    );
    expect(log.read().filter((e) => e.kind === 'tool_result')).toHaveLength(1);
  });

  it('gives a denial and its reason to the model as the tool result', async () => {
    const log = createSession('ask');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'r1', name: 'run_command', arguments: { command: 'rm -rf build' } }],
    });
    await runTurn(fx.hostFor(log), { prompt: 'clean up' });
    const request = log.read().at(-1) as SessionEvent;
    log.append({ kind: 'approval_denied', requestSeq: request.seq, reason: 'keep the build folder' });
    fx.server.enqueue({ kind: 'reply', text: 'OK, leaving it.' });
    await runTurn(fx.hostFor(log));
    const tool = bodyOf(1).messages.find((m) => m.role === 'tool');
    expect(tool?.content).toContain('denied by the user: keep the build folder');
  });

  it('pre-authorises edits under a granted path glob and still asks elsewhere', async () => {
    const log = createSession('ask');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'e1', name: 'write_file', arguments: { path: 'src/a.go', content: 'a\n' } }],
    });
    await runTurn(fx.hostFor(log), { prompt: 'write a' });
    const request = log.read().at(-1) as SessionEvent;
    log.append({ kind: 'approval_granted', requestSeq: request.seq, scope: 'path:src/**' });
    fx.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ id: 'e2', name: 'write_file', arguments: { path: 'src/b.go', content: 'b\n' } }],
      },
      {
        kind: 'reply',
        toolCalls: [{ id: 'e3', name: 'write_file', arguments: { path: 'docs/c.md', content: 'c\n' } }],
      },
    );
    const outcome = await runTurn(fx.hostFor(log));
    expect(outcome.status).toBe('awaiting_approval');
    expect(readFileSync(path.join(fx.project, 'src/b.go'), 'utf8')).toBe('b\n');
    expect(existsSync(path.join(fx.project, 'docs/c.md'))).toBe(false);
    const last = log.read().at(-1);
    expect(last?.kind === 'approval_request' && last.toolCallId).toBe('e3');
  });

  it('refuses a tool outside the session mode without asking anyone', async () => {
    const log = createSession('read-only', 'read-only');
    fx.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ id: 'x1', name: 'write_file', arguments: { path: 'a', content: 'b' } }],
      },
      { kind: 'reply', text: 'I cannot write here.' },
    );
    await runTurn(fx.hostFor(log), { prompt: 'write a file' });
    const result = log.read().find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(
      /unknown tool \\"write_file\\" in read-only mode/,
    );
    expect(existsSync(path.join(fx.project, 'a'))).toBe(false);
  });

  it('keeps partial text as interrupted when stopped mid-stream, and the next request is accepted', async () => {
    const log = createSession('ask');
    fx.server.enqueue({ kind: 'reply', text: 'one two three four five six seven eight', delayMs: 25 });
    const controller = new AbortController();
    let seen = 0;
    const outcome = await runTurn(
      fx.hostFor(log, {
        signal: controller.signal,
        hooks: { onDelta: () => ++seen === 3 && controller.abort() },
      }),
      { prompt: 'count' },
    );
    expect(outcome.status).toBe('interrupted');
    const interrupted = log.read().at(-1);
    expect(interrupted?.kind).toBe('interrupted');
    expect(interrupted?.kind === 'interrupted' && interrupted.content.startsWith('one two three')).toBe(true);
    fx.server.enqueue({ kind: 'reply', text: 'resumed' });
    expect(await runTurn(fx.hostFor(log))).toEqual({ status: 'completed', text: 'resumed' });
    expect(fx.server.requests.at(-1)?.rejected).toBeUndefined();
    const assistant = bodyOf(1).messages.filter((m) => m.role === 'assistant');
    expect(assistant.at(-1)?.content).toMatch(/one two three[\s\S]*\[interrupted/);
  });

  it('stops when the stop file appears (keel stop from another process)', async () => {
    const log = createSession('ask');
    const stopFile = path.join(log.dir, 'stop');
    fx.server.enqueue({ kind: 'reply', text: 'a b c d e f g h i j k l m n o p', delayMs: 40 });
    setTimeout(() => writeFileSync(stopFile, ''), 150);
    const outcome = await runTurn(fx.hostFor(log, { stopFile }), { prompt: 'go' });
    expect(outcome.status).toBe('interrupted');
    expect(existsSync(stopFile)).toBe(false);
  });

  it('records a final provider failure as an error event and stays resumable', async () => {
    const log = createSession('ask');
    fx.server.enqueue(
      { kind: 'fail', status: 500 },
      { kind: 'fail', status: 500 },
      { kind: 'fail', status: 500 },
      { kind: 'fail', status: 500 },
    );
    const outcome = await runTurn(fx.hostFor(log), { prompt: 'hello' });
    expect(outcome.status).toBe('failed');
    const error = log.read().at(-1);
    expect(error?.kind === 'error' && error.message).toMatch(/server error \(500\)/);
    expect(log.readTrace().filter((t) => t.stage === 'retry')).toHaveLength(3);
    fx.server.enqueue({ kind: 'reply', text: 'back' });
    expect(await runTurn(fx.hostFor(log))).toEqual({ status: 'completed', text: 'back' });
  });

  it('tells the user how to switch this session off a model the provider no longer serves', async () => {
    const log = createSession('ask');
    fx.server.enqueue({ kind: 'fail', status: 404, message: 'The model `scripted-model` does not exist' });
    const outcome = await runTurn(fx.hostFor(log), { prompt: 'hello' });
    expect(outcome.status).toBe('failed');
    const error = log.read().at(-1);
    expect(error?.kind === 'error' && error.code).toBe('not_found');
    expect(error?.kind === 'error' && error.message).toContain(`keel model ${log.id} PROVIDER:MODEL`);
  });

  it('asks again instead of re-running a command whose outcome is unknown', async () => {
    const log = createSession('full-auto');
    log.append([
      { kind: 'user_message', content: 'deploy' },
      {
        kind: 'assistant_message',
        content: '',
        toolCalls: [
          { id: 'd1', name: 'run_command', arguments: '{"command":"echo deployed >> deploys.txt"}' },
        ],
      },
      { kind: 'tool_call_started', toolCallId: 'd1', tool: 'run_command', idempotencyKey: 'ev3-run_command' },
    ]);
    const outcome = await runTurn(fx.hostFor(log));
    expect(outcome.status).toBe('awaiting_approval');
    const request = log.read().at(-1);
    expect(request?.kind === 'approval_request' && request.unknownOutcome).toBe(true);
    expect(request?.kind === 'approval_request' && request.reason).toMatch(/outcome unknown/);
    expect(existsSync(path.join(fx.project, 'deploys.txt'))).toBe(false);
    expect(fx.server.requests).toHaveLength(0);
  });

  it('applies an edit whose outcome is unknown at most once, by its recorded images', async () => {
    const log = createSession('full-auto');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        {
          id: 'e1',
          name: 'edit_file',
          arguments: {
            path: 'src/server.go',
            old_string: 'func main() {}',
            new_string: 'func main() { serve() }',
          },
        },
      ],
    });
    await runTurn(fx.hostFor(log, { maxSteps: 1 }), { prompt: 'edit' });
    const started = log.read().find((e) => e.kind === 'tool_call_started');
    expect(started?.kind === 'tool_call_started' && started.postImageHash).toBeTruthy();
    // Replay the same log as if the process had died after the write but before tool_result: a second log
    // in another home, with the same events up to tool_call_started.
    const events = log.read();
    const cut = events.findIndex((e) => e.kind === 'tool_call_started');
    const replayHome = path.join(fx.dir, 'replay');
    const id = SessionLog.importEvents(replayHome, events.slice(0, cut + 1));
    const replay = SessionLog.open(replayHome, id, { write: true });
    fx.track(replay);
    fx.server.enqueue({ kind: 'reply', text: 'edited' });
    await runTurn(fx.hostFor(replay));
    const result = replay.read().find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(/already applied/);
    expect(readFileSync(path.join(fx.project, 'src/server.go'), 'utf8')).toBe(
      'package main\n\nfunc main() { serve() }\n',
    );
  });

  it('uses the pinned model and refuses to run with an unconfigured provider, writing nothing', async () => {
    const log = SessionLog.create(fx.home, {
      projectFolder: fx.project,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      contextWindow: 200_000,
      toolMode: 'write',
      policy: 'ask',
    });
    fx.track(log);
    const error = await runTurn(fx.hostFor(log), { prompt: 'hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TurnSetupError);
    expect((error as Error).message).toMatch(
      /pinned to anthropic:claude-sonnet-4-5.*ANTHROPIC_API_KEY.*keel model/,
    );
    expect(log.lastSeq()).toBe(1);
  });

  it('keeps the system block and the prefix byte-identical across turns', async () => {
    const log = createSession('ask');
    for (let i = 0; i < 20; i++) {
      fx.server.enqueue({ kind: 'reply', text: `answer ${i}` });
      await runTurn(fx.hostFor(log), { prompt: `question ${i}` });
    }
    const bodies = fx.server.requests.map((r) => r.body as Body);
    for (let i = 1; i < bodies.length; i++) {
      const previous = JSON.stringify((bodies[i - 1] as Body).messages);
      expect(JSON.stringify((bodies[i] as Body).messages).startsWith(previous.slice(0, -1))).toBe(true);
    }
  });

  it('is accepted by the next request after a stop at any delta position (100 random stops)', async () => {
    const log = createSession('full-auto');
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; run < 100; run++) {
      const stopAt = 1 + Math.floor(random() * 45);
      const withCall = run % 3 === 0;
      fx.server.enqueue({
        kind: 'reply',
        text: words,
        ...(withCall
          ? { toolCalls: [{ id: `r${run}`, name: 'read_file', arguments: { path: 'src/server.go' } }] }
          : {}),
      });
      const controller = new AbortController();
      let seen = 0;
      await runTurn(
        fx.hostFor(log, {
          signal: controller.signal,
          hooks: { onDelta: () => ++seen === stopAt && controller.abort() },
        }),
        { prompt: `run ${run}` },
      );
      // Anything after the scripted reply (the tool's follow-up) gets the server's default answer.
      expect(fx.server.pending).toBe(0);
    }
    expect(fx.server.requests.filter((r) => r.rejected !== undefined)).toEqual([]);
    const interrupted = log.read().filter((e) => e.kind === 'interrupted');
    expect(interrupted.length).toBeGreaterThan(50);
  }, 120_000);

  it('speaks the Anthropic wire format end to end, with cache breakpoints', async () => {
    const log = SessionLog.create(fx.home, {
      projectFolder: fx.project,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      baseUrl: fx.server.anthropicBaseUrl,
      contextWindow: 200_000,
      toolMode: 'write',
      policy: 'ask',
    });
    fx.track(log);
    fx.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading.',
        toolCalls: [{ id: 'toolu_1', name: 'read_file', arguments: { path: 'src/server.go' } }],
      },
      { kind: 'reply', text: 'Done.', usage: { cacheReadTokens: 900 } },
    );
    const outcome = await runTurn(
      fx.hostFor(log, { createProvider: (pin) => createProvider(pin, { anthropic: 'k' }, {}) }),
      {
        prompt: 'read it',
      },
    );
    expect(outcome).toEqual({ status: 'completed', text: 'Done.' });
    expect(fx.server.requests.map((r) => r.rejected)).toEqual([undefined, undefined]);
    const body = fx.server.requests[1]?.body as {
      system: { cache_control?: unknown }[];
      messages: { role: string }[];
    };
    expect(body.system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const final = log.read().at(-1);
    expect(final?.kind === 'assistant_message' && final.usage?.cacheReadTokens).toBe(900);
  });
});
