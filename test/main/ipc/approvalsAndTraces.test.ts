import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { startFixture, type IpcFixture } from './support.js';

let f: IpcFixture;

beforeEach(async () => {
  f = await startFixture('keel-ipc-review-');
  fs.writeFileSync(path.join(f.project, 'notes.txt'), 'hello\nsecond line\n');
});

afterEach(async () => {
  await f.close();
});

const write = (file: string, content: string) => ({
  kind: 'reply' as const,
  toolCalls: [{ name: 'write_file', arguments: { path: file, content } }],
});

/** Sends a prompt and waits for the turn to stop; returns how it ended. */
async function turn(sessionId: string, prompt: string) {
  const { turnId } = await f.call('turns.send', { sessionId, prompt });
  return (await f.turnEnded(sessionId, turnId)).outcome;
}

describe('approvals.preview', () => {
  it('gives an edit the original and proposed file text, its diff, scopes and a path suggestion', async () => {
    // In the folder itself, so a change made to the project folder under the pending request is the tools' file.
    const session = await f.newSession({ policy: 'ask', checkout: 'direct' });
    f.server.enqueue({
      kind: 'reply',
      toolCalls: [
        {
          name: 'edit_file',
          arguments: { path: 'notes.txt', old_string: 'hello', new_string: 'hello world' },
        },
      ],
    });
    expect((await turn(session.id, 'greet the world'))?.status).toBe('awaiting_approval');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    if (!request) throw new Error('no request');
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request.seq });
    expect(preview.request.seq).toBe(request.seq);
    expect(preview.arguments).toEqual({ path: 'notes.txt', old_string: 'hello', new_string: 'hello world' });
    expect(preview.file).toEqual({
      path: 'notes.txt',
      original: 'hello\nsecond line\n',
      proposed: 'hello world\nsecond line\n',
      diff: request.diff,
      binary: false,
      tooLarge: false,
      changedSinceRequest: false,
    });
    expect(preview.protectedReason).toBeNull();
    expect(preview.allowedScopes).toEqual(['once', 'session', 'path']);
    expect(preview.suggested).toEqual({ path: 'path:notes.txt' });

    // The file changes under the pending request: the preview follows it and says so.
    fs.writeFileSync(path.join(f.project, 'notes.txt'), 'hello\nthird line\n');
    const again = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request.seq });
    expect(again.file?.proposed).toBe('hello world\nthird line\n');
    expect(again.file?.changedSinceRequest).toBe(true);

    expect((await f.fail('approvals.preview', { sessionId: session.id, requestSeq: 1 })).code).toBe(
      'not_found',
    );
    await f.call('approvals.decide', {
      sessionId: session.id,
      requestSeq: request.seq,
      decision: 'deny',
      resume: false,
    });
    expect((await f.fail('approvals.preview', { sessionId: session.id, requestSeq: request.seq })).code).toBe(
      'invalid_state',
    );
  });

  it('says why a path is protected, and redacts secrets from the proposed text', async () => {
    // On the default checkout, the model's root: the project's .env and .vscode are at its top.
    fs.writeFileSync(path.join(f.project, '.env'), 'DEPLOY_TOKEN=tok-9f8e7d6c5b4a\n');
    const session = await f.newSession({ policy: 'auto-edit' });
    f.server.enqueue(write('.vscode/tasks.json', '{"token": "tok-9f8e7d6c5b4a"}\n'));
    expect((await turn(session.id, 'add a task'))?.status).toBe('awaiting_approval');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request?.seq });
    expect(preview.protectedReason).toMatch(/inside \.vscode/);
    expect(preview.file?.original).toBeNull();
    expect(preview.file?.proposed).toContain('{"token": ');
    expect(JSON.stringify(preview)).not.toContain('tok-9f8e7d6c5b4a');
    expect(preview.file?.path).toBe('.vscode/tasks.json');
    expect(preview.suggested.path).toBe('path:.vscode/**');
    expect(fs.existsSync(path.join(f.project, '.vscode'))).toBe(false);
  });

  it("shows a command's working directory, capped timeout and what the box lets it touch", async () => {
    const session = await f.newSession({
      policy: 'ask',
      networkAllow: ['registry.npmjs.org'],
      checkout: 'direct',
    });
    f.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { name: 'run_command', arguments: { command: 'npm test -- --watch', timeout_ms: 99_999_999 } },
      ],
    });
    await turn(session.id, 'run the tests');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request?.seq });
    expect(preview.command).toMatchObject({
      command: 'npm test -- --watch',
      cwd: '.',
      cwdPath: f.project,
      timeoutMs: 600_000,
      requestedTimeoutMs: 99_999_999,
      timeoutCapped: true,
      networkAllow: ['registry.npmjs.org'],
      // The folder itself, and the session's private area (/session), which the file tools write too.
      writable: [
        f.project,
        fs.realpathSync(path.join(f.home, 'sessions', session.id, 'workspace', 'session')),
      ],
      // The Keel home is hidden in a direct session too (its /session area is bound back on top).
      hidden: [f.home],
    });
    expect(['bwrap', 'sandbox-exec', 'none']).toContain(preview.command?.sandbox.kind);
    expect(preview.allowedScopes).toEqual(['once', 'session', 'prefix']);
    expect(preview.suggested).toEqual({ prefix: 'prefix:npm test' });
    expect(preview.file).toBeUndefined();
  });

  it('shows a command of a checkout session starting in the project checkout (or its cwd), the Keel home hidden', async () => {
    const session = await f.newSession({ policy: 'ask' });
    f.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'm1', name: 'run_command', arguments: { command: 'make' } },
        { id: 'm2', name: 'run_command', arguments: { command: 'ls', cwd: '/session/uploads' } },
      ],
    });
    await turn(session.id, 'build it');
    const [first] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: first?.seq });
    const workspace = fs.realpathSync(path.join(f.home, 'sessions', session.id, 'workspace'));
    expect(preview.command).toMatchObject({
      command: 'make',
      cwd: '.',
      cwdPath: path.join(workspace, 'persistent', 'project'),
      writable: [workspace],
      hidden: [f.home],
    });
    expect(preview.command?.writable).not.toContain(f.project);
    expect(preview.suggested).toEqual({ prefix: 'prefix:make' });
    // The second call asks once the first ran: grant the first and let the turn go on to it.
    const decided = await f.call('approvals.decide', {
      sessionId: session.id,
      requestSeq: first?.seq,
      decision: 'grant',
      scope: 'once',
    });
    await f.turnEnded(session.id, decided.turnId as string);
    const [second] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const named = await f.call('approvals.preview', { sessionId: session.id, requestSeq: second?.seq });
    expect(named.command).toMatchObject({
      command: 'ls',
      cwd: '/session/uploads',
      cwdPath: path.join(workspace, 'session', 'uploads'),
    });
  });
});

describe('grants', () => {
  it('lists a session grant, revokes it (an event), and the next edit asks again', async () => {
    const session = await f.newSession({ policy: 'ask', checkout: 'direct' });
    f.server.enqueue(write('a.txt', 'a\n'), { kind: 'reply', text: 'wrote a' });
    await turn(session.id, 'write a');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const decided = await f.call('approvals.decide', {
      sessionId: session.id,
      requestSeq: request?.seq,
      decision: 'grant',
      scope: 'session',
    });
    await f.turnEnded(session.id, decided.turnId as string);
    expect(fs.readFileSync(path.join(f.project, 'a.txt'), 'utf8')).toBe('a\n');

    // The grant covers the next write without asking.
    f.server.enqueue(write('b.txt', 'b\n'), { kind: 'reply', text: 'wrote b' });
    expect(await turn(session.id, 'write b')).toEqual({ status: 'completed' });
    const { grants } = await f.call('grants.list', { sessionId: session.id });
    expect(grants).toEqual([
      {
        seq: decided.event.seq,
        requestSeq: request?.seq,
        tool: 'write_file',
        scope: 'session',
        grantedAt: decided.event.at,
        toolCallId: request?.toolCallId,
        allows: 'every write_file call in this session',
      },
    ]);

    const revoked = await f.call('grants.revoke', {
      sessionId: session.id,
      grantSeq: decided.event.seq,
      reason: 'too broad',
    });
    expect(revoked.event).toMatchObject({
      kind: 'approval_revoked',
      grantSeq: decided.event.seq,
      reason: 'too broad',
    });
    expect(revoked.grant.revoked).toEqual({
      seq: revoked.event.seq,
      at: revoked.event.at,
      reason: 'too broad',
    });
    expect(f.pushes).toContainEqual({
      topic: 'event.appended',
      payload: { sessionId: session.id, event: revoked.event },
    });
    expect((await f.call('grants.list', { sessionId: session.id })).grants).toEqual([]);
    expect(
      (await f.call('grants.list', { sessionId: session.id, includeRevoked: true })).grants.map(
        (g) => g.revoked?.seq,
      ),
    ).toEqual([revoked.event.seq]);

    f.server.enqueue(write('c.txt', 'c\n'));
    expect((await turn(session.id, 'write c'))?.status).toBe('awaiting_approval');
    expect(fs.existsSync(path.join(f.project, 'c.txt'))).toBe(false);

    const twice = await f.fail('grants.revoke', { sessionId: session.id, grantSeq: decided.event.seq });
    expect(twice).toEqual({
      code: 'invalid_state',
      message: `grant ${decided.event.seq} was already revoked (event ${revoked.event.seq})`,
    });
    expect((await f.fail('grants.revoke', { sessionId: session.id, grantSeq: 2 })).code).toBe('not_found');
  });
});

describe('trace.summary', () => {
  it("summarises a real turn: its timeline, tokens, cost and the session's totals", async () => {
    const session = await f.newSession({ policy: 'read-only' });
    f.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }],
        usage: { inputTokens: 300, outputTokens: 20, cacheReadTokens: 100 },
      },
      { kind: 'reply', text: 'It says hello.', usage: { inputTokens: 350, outputTokens: 10 } },
    );
    expect(await turn(session.id, 'what does notes.txt say?')).toEqual({ status: 'completed' });
    const read = f.eventsOf(session.id).find((event) => event.kind === 'tool_result');
    expect(read?.kind === 'tool_result' && !read.isError && read.content).toContain('second line');
    const { summary } = await f.call('trace.summary', { sessionId: session.id });
    expect(summary.sessionId).toBe(session.id);
    expect(summary.turns).toHaveLength(1);
    const [first] = summary.turns;
    expect(first).toMatchObject({
      turn: 1,
      prompt: 'what does notes.txt say?',
      requests: 2,
      tools: 1,
      // The provider reports input without the cache reads (OpenAI counts them in prompt_tokens).
      inputTokens: 550,
      outputTokens: 30,
      cacheReadTokens: 100,
    });
    const kinds = new Set(first?.stages.map((stage) => stage.kind));
    for (const kind of ['projection', 'request', 'time_to_first_token', 'stream', 'tool'] as const)
      expect(kinds.has(kind), kind).toBe(true);
    expect(first?.stages.find((stage) => stage.kind === 'tool')).toMatchObject({ tool: 'read_file' });
    expect(summary.totals).toMatchObject({ turns: 1, requests: 2, inputTokens: 550 });
    expect(summary.totals.cacheHitRate).toBeCloseTo(100 / 650);
    expect(summary.perTurn).toEqual([expect.objectContaining({ turn: 1, totalTokens: 680 })]);
    expect((await f.fail('trace.summary', { sessionId: 'no-such-session' })).code).toBe('not_found');
  });
});

describe('compactions.payload', () => {
  it('gives the current payload and the one rebuilt without a compaction, as text', async () => {
    const at = '2025-01-01T00:00:00.000Z';
    const id = SessionLog.importEvents(f.home, [
      {
        seq: 1,
        at,
        kind: 'session_created',
        sessionId: 'x',
        projectFolder: f.project,
        provider: 'openai',
        model: 'gpt-5',
        contextWindow: 400_000,
        toolMode: 'write',
        policy: 'ask',
        systemPrompt: 'You are a test.',
      },
      { seq: 2, at, kind: 'user_message', content: 'the goal' },
      { seq: 3, at, kind: 'assistant_message', content: 'an old answer', toolCalls: [] },
      { seq: 4, at, kind: 'user_message', content: 'next' },
      {
        seq: 5,
        at,
        kind: 'compaction',
        through: 3,
        fromSeq: 2,
        summary: 'GOAL: the goal',
        pinned: 'the goal',
      },
      { seq: 6, at, kind: 'assistant_message', content: 'a new answer', toolCalls: [] },
    ]);
    const { current, without } = await f.call('compactions.payload', { sessionId: id, seq: 5 });
    expect(current.text).toContain('--- system ---\nSession so far: GOAL: the goal');
    expect(current.text).not.toContain('an old answer');
    expect(without.text).not.toContain('Session so far');
    expect(without.text).toContain('--- assistant ---\nan old answer');
    expect(without.text.startsWith('--- system ---\nYou are a test.')).toBe(true);
    expect([current.messageCount, without.messageCount]).toEqual([5, 5]);
    expect((await f.fail('compactions.payload', { sessionId: id, seq: 4 })).code).toBe('not_found');
  });
});
