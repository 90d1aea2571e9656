import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { createHandlers } from '../../../main/ipc/handlers.js';
import type { KeyChanges, KeyStore } from '../../../main/ipc/keys.js';
import type { ProviderKeys } from '../../../main/providers/index.js';
import { ProviderServer } from '../../support/providerServer.js';
import { eventsOf } from '../../support/sessionFixture.js';
import { scriptedSessionInput, useIpcFixture } from './support.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

const ipc = useIpcFixture('keel-ipc-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'notes.txt'), 'hello\n'),
  handlers: ({ home }) => createHandlers({ home, mode: 'serve', version: '9.9.9', env }),
});
const { call, fail, waitForPush } = ipc;

const turnEnded = (sessionId: string, turnId: string) =>
  waitForPush('session.status', (p) => p.sessionId === sessionId && p.turnId === turnId && !p.running);

async function newSession(extra: Record<string, unknown> = {}) {
  const { session } = await call('sessions.create', scriptedSessionInput(ipc, extra));
  return session;
}

/** The lease is free when this process can open the session for writing (and closes it again). */
function leaseIsFree(id: string): boolean {
  try {
    SessionLog.open(ipc.home, id, { write: true }).close();
    return true;
  } catch {
    return false;
  }
}

describe('sessions', () => {
  it('creates a session with its pin, lists it grouped by project, and opens it', async () => {
    const session = await newSession({
      title: 'First',
      policy: 'auto-edit',
      networkAllow: ['registry.npmjs.org'],
    });
    expect(session).toMatchObject({
      title: 'First',
      projectFolder: ipc.project,
      projectExists: true,
      status: 'idle',
    });
    expect(ipc.pushes).toContainEqual({
      topic: 'sessions.changed',
      payload: { sessionId: session.id, change: 'created' },
    });
    expect(leaseIsFree(session.id)).toBe(true);

    const listed = await call('sessions.list');
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
    expect(listed.projects).toEqual([
      { folder: ipc.project, exists: true, lastActivity: session.updatedAt, sessionIds: [session.id] },
    ]);
    expect(listed.hasMore).toBe(false);

    const opened = await call('sessions.open', { sessionId: session.id });
    expect(opened.pin).toEqual({
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: ipc.server.openaiBaseUrl,
      contextWindow: 32_000,
    });
    expect(opened).toMatchObject({
      policy: 'auto-edit',
      toolMode: 'write',
      networkAllow: ['registry.npmjs.org'],
      running: false,
      readOnly: false,
      canResume: false,
      pendingApprovals: [],
      context: { usedTokens: null, window: 32_000, compactAt: 24_000 },
    });
    expect((await call('projects.recent')).projects).toEqual([
      { folder: ipc.project, exists: true, lastUsedAt: expect.any(String) as string },
    ]);
  });

  it('pages the list, reports hasMore, and shows a vanished project folder as such', async () => {
    const other = path.join(ipc.dir, 'other');
    fs.mkdirSync(other);
    const a = await newSession();
    const b = await newSession({ projectFolder: other });
    const c = await newSession();
    fs.rmSync(other, { recursive: true });
    const first = await call('sessions.list', { limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual([c.id, b.id]);
    expect(first.hasMore).toBe(true);
    expect(first.projects.map((p) => [p.folder, p.exists])).toEqual([
      [ipc.project, true],
      [other, false],
    ]);
    const second = await call('sessions.list', { limit: 2, offset: 2 });
    expect(second.sessions.map((s) => s.id)).toEqual([a.id]);
    expect(second.hasMore).toBe(false);
    const opened = await call('sessions.open', { sessionId: b.id });
    expect(opened.readOnly).toBe(true);
    expect((await fail('turns.send', { sessionId: b.id, prompt: 'hi' })).code).toBe('invalid_state');
  });

  it('archives (hidden unless asked for) and deletes only with the id repeated', async () => {
    const session = await newSession();
    await call('sessions.archive', { sessionId: session.id });
    expect((await call('sessions.list')).sessions).toEqual([]);
    expect((await call('sessions.list', { includeArchived: true })).sessions[0]?.archived).toBe(true);
    await call('sessions.archive', { sessionId: session.id, archived: false });
    expect((await call('sessions.list')).sessions).toHaveLength(1);

    const refused = await fail('sessions.delete', { sessionId: session.id, confirm: 'yes' });
    expect(refused).toEqual({
      code: 'invalid_input',
      message: 'confirm: confirm must repeat the session id',
    });
    expect(fs.existsSync(path.join(ipc.home, 'sessions', session.id))).toBe(true);
    await call('sessions.delete', { sessionId: session.id, confirm: session.id });
    expect(fs.existsSync(path.join(ipc.home, 'sessions', session.id))).toBe(false);
    expect((await call('sessions.list', { includeArchived: true })).sessions).toEqual([]);
    expect((await fail('sessions.open', { sessionId: session.id })).code).toBe('not_found');
  });

  it('refuses a folder that does not exist and an unknown local model without a context window', async () => {
    expect(
      (
        await fail('sessions.create', {
          projectFolder: path.join(ipc.dir, 'nope'),
          provider: 'openai',
          model: 'gpt-5',
        })
      ).code,
    ).toBe('not_found');
    const unknown = await fail('sessions.create', {
      projectFolder: ipc.project,
      provider: 'openai-compatible',
      baseUrl: ipc.server.openaiBaseUrl,
      model: 'mystery',
    });
    expect(unknown.code).toBe('invalid_input');
    expect(unknown.message).toMatch(/context window of "mystery"/);
  });
});

describe('the boundary', () => {
  it('answers invalid input, unknown channels and handler failures as values, never by throwing', async () => {
    expect(await ipc.handlers.invoke('turns.send', { sessionId: 'x' })).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: expect.stringMatching(/^prompt: /) as string },
    });
    expect(await ipc.handlers.invoke('shell.exec', {})).toEqual({
      ok: false,
      error: { code: 'not_found', message: 'unknown channel shell.exec' },
    });
    expect(await ipc.handlers.invoke('__proto__', {})).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    expect(await ipc.handlers.invoke('sessions.open', { sessionId: 'no-such-session' })).toEqual({
      ok: false,
      error: { code: 'not_found', message: 'no session no-such-session' },
    });
    expect(await ipc.handlers.invoke('settings.get', { extra: 1 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    });
  });

  it('renames a session with an event, and the list shows the new title', async () => {
    const session = await newSession();
    const renamed = await call('sessions.rename', { sessionId: session.id, title: 'Rate limiter' });
    expect(renamed.session.title).toBe('Rate limiter');
    const page = await call('events.page', { sessionId: session.id, limit: 10 });
    expect(page.events.at(-1)).toMatchObject({ kind: 'session_renamed', title: 'Rate limiter' });
    expect((await fail('sessions.rename', { sessionId: session.id, title: '' })).code).toBe('invalid_input');
  });
});

describe('turns', () => {
  it('streams deltas and events to subscribers, records the turn, and releases the lease after it', async () => {
    const session = await newSession();
    ipc.server.enqueue({
      kind: 'reply',
      text: 'Hello from the scripted model',
      usage: { inputTokens: 120, outputTokens: 7 },
    });
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'Say hello' });
    const ended = await turnEnded(session.id, turnId);
    expect(ended).toMatchObject({ status: 'idle', running: false, outcome: { status: 'completed' } });

    const deltas = ipc.pushes.flatMap((p) =>
      p.topic === 'turn.delta' && p.payload.turnId === turnId && p.payload.delta.type === 'text'
        ? [p.payload.delta.text]
        : [],
    );
    expect(deltas.join('')).toBe('Hello from the scripted model');
    const appended = ipc.pushes.flatMap((p) =>
      p.topic === 'event.appended' && p.payload.sessionId === session.id ? [p.payload.event.kind] : [],
    );
    expect(appended).toEqual(['session_created', 'user_message', 'assistant_message']);
    expect(ipc.pushes).toContainEqual({
      topic: 'session.status',
      payload: { sessionId: session.id, status: 'running', running: true, turnId },
    });
    expect(eventsOf(ipc.home, session.id).map((e) => e.kind)).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
    ]);
    expect(leaseIsFree(session.id)).toBe(true);

    const opened = await call('sessions.open', { sessionId: session.id });
    expect(opened.context.usedTokens).toBe(127);
    expect(opened.session.status).toBe('idle');
    const page = await call('events.page', { sessionId: session.id });
    expect(page.events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('runs one turn per session: a second send is busy, and the running turn holds the lease', async () => {
    const session = await newSession();
    ipc.server.enqueue({ kind: 'reply', text: 'one two three four five six', delayMs: 60 });
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'count' });
    expect(await fail('turns.send', { sessionId: session.id, prompt: 'again' })).toMatchObject({
      code: 'busy',
    });
    expect((await fail('sessions.delete', { sessionId: session.id, confirm: session.id })).code).toBe('busy');
    expect((await call('sessions.open', { sessionId: session.id })).running).toBe(true);
    expect(leaseIsFree(session.id)).toBe(false);
    await turnEnded(session.id, turnId);
    expect(leaseIsFree(session.id)).toBe(true);
  });

  it('stops mid-stream (partial text recorded as interrupted), then resumes to completion', async () => {
    const session = await newSession();
    ipc.server.enqueue({
      kind: 'reply',
      text: 'alpha beta gamma delta epsilon zeta eta theta',
      delayMs: 150,
    });
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'Greek letters' });
    await waitForPush('turn.delta', (p) => p.turnId === turnId);
    expect(await call('turns.stop', { sessionId: session.id })).toEqual({ stopped: true });
    // stop resolves after the interruption is committed and the lease released.
    const events = eventsOf(ipc.home, session.id);
    const last = events[events.length - 1];
    expect(last?.kind).toBe('interrupted');
    expect(last?.kind === 'interrupted' && last.content.startsWith('alpha')).toBe(true);
    expect(leaseIsFree(session.id)).toBe(true);
    const ended = await turnEnded(session.id, turnId);
    expect(ended).toMatchObject({ status: 'interrupted', outcome: { status: 'interrupted' } });
    expect((await call('sessions.open', { sessionId: session.id })).canResume).toBe(true);
    expect(await call('turns.stop', { sessionId: session.id })).toEqual({ stopped: false });

    ipc.server.enqueue({ kind: 'reply', text: 'resumed and done' });
    const resumed = await call('turns.resume', { sessionId: session.id });
    expect(await turnEnded(session.id, resumed.turnId)).toMatchObject({ outcome: { status: 'completed' } });
    expect(eventsOf(ipc.home, session.id).map((e) => e.kind)).toEqual([
      'session_created',
      'user_message',
      'interrupted',
      'assistant_message',
    ]);
    expect((await fail('turns.resume', { sessionId: session.id })).message).toBe(
      'nothing to resume: the last turn completed',
    );
  });

  it('waits on an approval, lists it, and a grant resumes the turn that then runs the command', async () => {
    const session = await newSession({ policy: 'ask' });
    ipc.server.enqueue(
      {
        kind: 'reply',
        // Commands start in the project's checkout, the model's root.
        toolCalls: [{ name: 'run_command', arguments: { command: 'echo approved > out.txt' } }],
      },
      { kind: 'reply', text: 'wrote it' },
    );
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'write out.txt' });
    const ended = await turnEnded(session.id, turnId);
    expect(ended.status).toBe('awaiting_approval');
    expect(ended.outcome?.status).toBe('awaiting_approval');
    expect(fs.existsSync(path.join(ipc.project, 'out.txt'))).toBe(false);
    const { pending } = await call('approvals.list', { sessionId: session.id });
    expect(pending).toHaveLength(1);
    const request = pending[0];
    if (!request) throw new Error('no request');
    expect(
      (await call('sessions.open', { sessionId: session.id })).pendingApprovals.map((r) => r.seq),
    ).toEqual([request.seq]);
    expect((await fail('turns.resume', { sessionId: session.id })).code).toBe('invalid_state');
    expect(
      (
        await fail('approvals.decide', {
          sessionId: session.id,
          requestSeq: request.seq,
          decision: 'grant',
          scope: 'bogus',
        })
      ).code,
    ).toBe('invalid_input');

    const decided = await call('approvals.decide', {
      sessionId: session.id,
      requestSeq: request.seq,
      decision: 'grant',
      scope: 'once',
    });
    expect(decided.event).toMatchObject({ kind: 'approval_granted', requestSeq: request.seq, scope: 'once' });
    expect(decided.turnId).toBeDefined();
    const resumed = await turnEnded(session.id, decided.turnId as string);
    expect(resumed.outcome).toEqual({ status: 'completed' });
    // The resumed turn's auto commit brought the command's file into the project folder.
    expect(fs.readFileSync(path.join(ipc.project, 'out.txt'), 'utf8')).toBe('approved\n');
    expect(eventsOf(ipc.home, session.id).at(-1)).toMatchObject({
      kind: 'persistent_commit',
      dir: 'project',
      files: [{ path: 'out.txt', preHash: null }],
    });
    expect(
      (await fail('approvals.decide', { sessionId: session.id, requestSeq: request.seq, decision: 'deny' }))
        .code,
    ).toBe('invalid_state');
  });

  it('a denial without resume records the reason and leaves the session idle with the lease free', async () => {
    const session = await newSession({ policy: 'ask' });
    ipc.server.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf /tmp/x' } }],
    });
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'clean up' });
    await turnEnded(session.id, turnId);
    const [request] = (await call('approvals.list', { sessionId: session.id })).pending;
    const decided = await call('approvals.decide', {
      sessionId: session.id,
      requestSeq: request?.seq,
      decision: 'deny',
      reason: 'not that',
      resume: false,
    });
    expect(decided).toEqual({
      event: expect.objectContaining({ kind: 'approval_denied', reason: 'not that' }) as unknown,
    });
    expect(ipc.pushes).toContainEqual({
      topic: 'event.appended',
      payload: { sessionId: session.id, event: decided.event },
    });
    expect(leaseIsFree(session.id)).toBe(true);
    expect((await call('approvals.list', { sessionId: session.id })).pending).toEqual([]);
  });

  it('answers locked while another writer (the CLI) holds the session, and its turns can be stopped by stop file', async () => {
    const session = await newSession();
    const cli = SessionLog.open(ipc.home, session.id, { write: true });
    try {
      const locked = await fail('turns.send', { sessionId: session.id, prompt: 'hi' });
      expect(locked.code).toBe('locked');
      expect((await call('sessions.open', { sessionId: session.id })).readOnly).toBe(true);
      cli.setRunning(true);
      expect(await call('turns.stop', { sessionId: session.id })).toEqual({ stopped: true });
      expect(fs.existsSync(path.join(ipc.home, 'sessions', session.id, 'stop-request'))).toBe(true);
    } finally {
      cli.close();
    }
  });

  it('reports a provider that cannot be used as the send error, with nothing appended', async () => {
    const session = await newSession({
      provider: 'anthropic',
      model: 'claude-test-model',
      contextWindow: 200_000,
      baseUrl: undefined,
    });
    const error = await fail('turns.send', { sessionId: session.id, prompt: 'hi' });
    expect(error.code).toBe('provider');
    expect(error.message).toMatch(/Settings/);
    expect(eventsOf(ipc.home, session.id).map((e) => e.kind)).toEqual(['session_created']);
    expect(leaseIsFree(session.id)).toBe(true);
  });

  it('close stops running turns, records the interruption and releases the lease', async () => {
    const session = await newSession();
    ipc.server.enqueue({ kind: 'reply', text: 'a b c d e f g h i j k l', delayMs: 200 });
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'long' });
    await waitForPush('turn.delta', (p) => p.turnId === turnId);
    await ipc.handlers.close();
    expect(
      eventsOf(ipc.home, session.id)
        .map((e) => e.kind)
        .at(-1),
    ).toBe('interrupted');
    expect(leaseIsFree(session.id)).toBe(true);
    expect(await ipc.handlers.invoke('sessions.list', {})).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: 'Keel is shutting down' },
    });
  });
});

describe('events.page', () => {
  it('pages forwards from a seq and backwards before a seq, with hasBefore/hasAfter', async () => {
    const session = await newSession();
    for (let i = 0; i < 3; i++) {
      ipc.server.enqueue({ kind: 'reply', text: `answer ${i}` });
      const { turnId } = await call('turns.send', { sessionId: session.id, prompt: `question ${i}` });
      await turnEnded(session.id, turnId);
    }
    // 1 created + 3 × (user, assistant) = 7 events.
    const newest = await call('events.page', { sessionId: session.id, limit: 3 });
    expect(newest.events.map((e) => e.seq)).toEqual([5, 6, 7]);
    expect(newest).toMatchObject({ lastSeq: 7, hasBefore: true, hasAfter: false });
    const before = await call('events.page', { sessionId: session.id, beforeSeq: 5, limit: 3 });
    expect(before.events.map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(before).toMatchObject({ hasBefore: true, hasAfter: true });
    const oldest = await call('events.page', { sessionId: session.id, beforeSeq: 2, limit: 3 });
    expect(oldest.events.map((e) => e.seq)).toEqual([1]);
    expect(oldest.hasBefore).toBe(false);
    const forward = await call('events.page', { sessionId: session.id, fromSeq: 6, limit: 10 });
    expect(forward.events.map((e) => e.seq)).toEqual([6, 7]);
    expect(forward.hasAfter).toBe(false);
    const range = await call('events.page', { sessionId: session.id, fromSeq: 2, toSeq: 3 });
    expect(range.events.map((e) => e.seq)).toEqual([2, 3]);
    expect(range.hasAfter).toBe(true);
  });
});

describe('compactions', () => {
  it('lists and inspects the compactions of a log, marking superseded ones', async () => {
    const at = '2025-01-01T00:00:00.000Z';
    const base = { at };
    const id = SessionLog.importEvents(ipc.home, [
      {
        ...base,
        seq: 1,
        kind: 'session_created',
        sessionId: 'x',
        projectFolder: ipc.project,
        provider: 'openai',
        model: 'gpt-5',
        contextWindow: 400_000,
        toolMode: 'write',
        policy: 'ask',
      },
      { ...base, seq: 2, kind: 'user_message', content: 'goal' },
      { ...base, seq: 3, kind: 'assistant_message', content: 'done', toolCalls: [] },
      { ...base, seq: 4, kind: 'compaction', through: 3, fromSeq: 2, summary: 'first', pinned: 'goal' },
      {
        ...base,
        seq: 5,
        kind: 'compaction',
        through: 3,
        fromSeq: 2,
        summary: 'again',
        pinned: 'goal',
        supersedes: 4,
      },
    ]);
    const { compactions } = await call('compactions.list', { sessionId: id });
    expect(compactions.map((c) => [c.seq, c.superseded])).toEqual([
      [4, true],
      [5, false],
    ]);
    const inspected = await call('compactions.inspect', { sessionId: id, seq: 5 });
    expect(inspected.compaction.summary).toBe('again');
    expect(inspected.replacedCount).toBe(2);
    expect((await fail('compactions.inspect', { sessionId: id, seq: 3 })).code).toBe('not_found');
  });
});

describe('settings and providers', () => {
  it('reads and writes settings; keys typed in serve are kept in the home’s key file and never returned', async () => {
    const view = await call('settings.get');
    expect(view.keyStorage).toBe('file');
    expect(view.keys).toEqual({ anthropic: false, openai: false, openaiCompatible: false });
    const next = { ...view.settings, defaults: { provider: 'openai' as const, model: 'gpt-5' } };
    expect((await call('settings.set', { settings: next })).settings.defaults).toEqual({
      provider: 'openai',
      model: 'gpt-5',
    });
    expect(JSON.parse(fs.readFileSync(path.join(ipc.home, 'settings.json'), 'utf8'))).toMatchObject({
      defaults: { model: 'gpt-5' },
    });
    const keyed = await call('settings.set', { keys: { openai: 'sk-test' } });
    expect(keyed.keys.openai).toBe(true);
    expect(JSON.stringify(keyed)).not.toContain('sk-test');
  });

  it('stores keys in a writable key store and uses them for turns and provider tests', async () => {
    await ipc.handlers.close();
    const secured = await new ProviderServer({ apiKey: 'sk-local-123' }).start();
    const stored: ProviderKeys = {};
    const keyStore: KeyStore = {
      kind: 'keychain',
      read: () => ({ ...stored }),
      write: (changes: KeyChanges) => {
        for (const name of ['anthropic', 'openai', 'openaiCompatible'] as const) {
          const value = changes[name];
          if (value === null) delete stored[name];
          else if (value !== undefined) stored[name] = value;
        }
      },
    };
    ipc.handlers = createHandlers({ home: ipc.home, mode: 'electron', version: '1', env, keyStore });
    try {
      const test = { provider: 'openai-compatible', model: 'scripted-model', baseUrl: secured.openaiBaseUrl };
      const refused = await call('settings.testProvider', test);
      expect(refused.ok).toBe(false);
      expect(refused.message).toMatch(/key/i);
      const view = await call('settings.set', { keys: { openaiCompatible: 'sk-local-123' } });
      expect(view.keys.openaiCompatible).toBe(true);
      expect(JSON.stringify(view)).not.toContain('sk-local-123');
      const answered = await call('settings.testProvider', test);
      expect(answered).toMatchObject({ ok: true });
      expect((await call('settings.testProvider', { ...test, apiKey: 'wrong' })).ok).toBe(false);

      const { session } = await call('sessions.create', {
        projectFolder: ipc.project,
        ...test,
        contextWindow: 8000,
      });
      const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'hi' });
      expect((await turnEnded(session.id, turnId)).outcome).toEqual({ status: 'completed' });
      expect(
        secured.requests.every((r) => r.headers['authorization'] === 'Bearer sk-local-123' || r.rejected),
      ).toBe(true);
    } finally {
      await secured.close();
    }
  });

  it('detects a local OpenAI-compatible server and ignores ports where nothing answers', async () => {
    await ipc.handlers.close();
    ipc.handlers = createHandlers({
      home: ipc.home,
      mode: 'serve',
      version: '1',
      env,
      localServers: [
        { name: 'Scripted', baseUrl: ipc.server.openaiBaseUrl },
        { name: 'Nothing', baseUrl: 'http://127.0.0.1:9/v1' },
      ],
    });
    expect(await call('providers.detectLocal')).toEqual({
      servers: [{ name: 'Scripted', baseUrl: ipc.server.openaiBaseUrl, models: ['scripted-model'] }],
    });
    expect((await call('providers.catalogue')).models.some((m) => m.id === 'gpt-5')).toBe(true);
  });

  it('app.info reports version, mode, home and the sandbox found here', async () => {
    const info = await call('app.info');
    expect(info).toMatchObject({
      version: '9.9.9',
      mode: 'serve',
      platform: process.platform,
      home: ipc.home,
    });
    expect(['bwrap', 'sandbox-exec', 'none']).toContain(info.sandbox.kind);
    expect(info.sandbox.reason.length).toBeGreaterThan(0);
  });

  it('projects.openFolder takes a path in serve mode, and uses the dialog when one is given', async () => {
    expect((await fail('projects.openFolder')).code).toBe('not_available');
    expect(await call('projects.openFolder', { path: ipc.project })).toEqual({ folder: ipc.project });
    expect((await fail('projects.openFolder', { path: path.join(ipc.dir, 'missing') })).code).toBe(
      'not_found',
    );
    await ipc.handlers.close();
    const answers = [ipc.project, null];
    ipc.handlers = createHandlers({
      home: ipc.home,
      mode: 'electron',
      version: '1',
      env,
      pickFolder: () => Promise.resolve(answers.shift() ?? null),
    });
    expect(await call('projects.openFolder')).toEqual({ folder: ipc.project });
    expect(await call('projects.openFolder')).toEqual({ folder: null });
  });
});
