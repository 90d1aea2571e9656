import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  buildKeelApi,
  CHANNEL_NAMES,
  channels,
  ipcChannelOf,
  isChannelName,
  isTopicName,
  resultSchema,
  TOPIC_NAMES,
  topics,
  type ChannelInput,
  type ChannelName,
  type IpcResult,
  type KeelApi,
  type ProjectGroup,
  type SessionSummary,
  type TopicName,
  type TopicPayload,
} from '../../../main/ipc/contract.js';
import { REPO_ROOT } from '../../support/cli.js';

const session = 'sess-1';
const event = { seq: 2, at: '2025-01-01T00:00:00.000Z', kind: 'user_message', content: 'hi' } as const;

/** One input per channel; the type makes a new channel without a sample a compile error. */
const inputs: { [C in ChannelName]: ChannelInput<C> } = {
  'sessions.list': { limit: 50, offset: 100, search: 'limits', projectFolder: '/p', includeArchived: true },
  'sessions.create': {
    projectFolder: '/p',
    provider: 'openai-compatible',
    model: 'qwen',
    baseUrl: 'http://127.0.0.1:11434/v1',
    contextWindow: 32_000,
    policy: 'ask',
    toolMode: 'write',
    networkAllow: ['registry.npmjs.org'],
    title: 'A title',
    checkout: 'manual',
  },
  'sessions.open': { sessionId: session },
  'sessions.rename': { sessionId: session, title: 'New' },
  'sessions.setModel': { sessionId: session, provider: 'anthropic', model: 'claude-sonnet-5-5' },
  'sessions.setReasoning': { sessionId: session, effort: 'low' },
  'sessions.setPolicy': { sessionId: session, policy: 'auto-edit' },
  'sessions.archive': { sessionId: session, archived: false },
  'sessions.delete': { sessionId: session, confirm: session },
  'events.page': { sessionId: session, beforeSeq: 100, limit: 50 },
  'turns.send': { sessionId: session, prompt: 'Fix the bug', discardChanges: true },
  'turns.stop': { sessionId: session },
  'turns.resume': { sessionId: session },
  'approvals.list': { sessionId: session },
  'approvals.decide': {
    sessionId: session,
    requestSeq: 5,
    decision: 'grant',
    scope: 'prefix:npm test',
    resume: false,
  },
  'approvals.preview': { sessionId: session, requestSeq: 5 },
  'grants.list': { sessionId: session, includeRevoked: true },
  'grants.revoke': { sessionId: session, grantSeq: 6, reason: 'too broad' },
  'trace.summary': { sessionId: session, maxDepth: 2 },
  'cost.report': { sessionId: session },
  'budget.set': { sessionId: session, usd: 2.5, tokens: null },
  'commands.kill': { sessionId: session, toolCallId: 'call_1' },
  'artifacts.read': {
    sessionId: session,
    handle: 'ev5-run_command.log',
    offset: 1_048_576,
    maxBytes: 65_536,
  },
  'artifacts.image': { sessionId: session, handle: 'ev5-mcp__fixture__image-2.png' },
  'tool.watch': { sessionId: session },
  'tool.unwatch': { sessionId: session },
  'tool.outputAck': { sessionId: session, toolCallId: 'call_1', chars: 4096 },
  'terminal.open': { sessionId: session, cols: 100, rows: 40, unconfined: false },
  'terminal.write': { terminalId: 'term-1', data: 'echo hi\r' },
  'terminal.resize': { terminalId: 'term-1', cols: 80, rows: 24 },
  'terminal.ack': { terminalId: 'term-1', chars: 12 },
  'terminal.kill': { terminalId: 'term-1' },
  'terminal.list': { sessionId: session },
  'compactions.list': { sessionId: session },
  'compactions.inspect': { sessionId: session, seq: 9 },
  'compactions.payload': { sessionId: session, seq: 9 },
  'compactions.run': { sessionId: session, rerun: 9 },
  'persistent.diff': { sessionId: session, dir: 'project' },
  'persistent.apply': { sessionId: session, dirs: ['project'] },
  'persistent.file': { sessionId: session, dir: 'project', path: 'src/main.go', commitSeq: 12 },
  'persistent.history': { sessionId: session },
  'history.revert': { sessionId: session, turn: 2 },
  'history.rewind': { sessionId: session, toSeq: 4, files: true },
  'history.fork': { sessionId: session, at: 4 },
  'history.snapshots': { sessionId: session },
  'history.restoreSnapshot': { sessionId: session, seq: 5 },
  'persistent.discard': { sessionId: session },
  'mcp.servers': { folder: '/p' },
  'mcp.approveProject': { folder: '/p' },
  'mcp.setToolEnabled': { tool: 'mcp__tracker__create_issue', enabled: false },
  'mcp.rules': { folder: '/p' },
  'mcp.revokeRule': { folder: '/p', tool: 'mcp__tracker__create_issue' },
  'settings.get': {},
  'settings.set': { keys: { anthropic: 'sk-ant', openai: null } },
  'settings.testProvider': { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant' },
  'providers.catalogue': {},
  'providers.refreshModels': { provider: 'anthropic', baseUrl: 'http://127.0.0.1:8080' },
  'providers.models': { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1' },
  'providers.detectLocal': {},
  'projects.openFolder': { path: '/p' },
  'projects.recent': {},
  'app.launchCommands': {},
  'app.info': {},
  'imports.scan': { tool: 'claude-code' },
  'imports.run': { tool: 'codex', project: '/p' },
  'checkouts.storage': {},
  'checkouts.collect': { dryRun: true },
  'checkouts.kind': {},
  'checkouts.setKind': { kind: 'view' },
  // Issue 30.
  'setup.trust': { folder: '/p' },
  'setup.approve': { folder: '/p', hashes: { '.claude/settings.json': 'a'.repeat(64) } },
  'setup.revoke': { folder: '/p' },
  'rules.list': { folder: '/p' },
  'rules.add': { folder: '/p', action: 'deny', rule: 'Bash(git push:*)' },
  'rules.remove': { folder: '/p', rule: 'Bash(git push:*)', action: 'deny' },
  // Issue 37: the composer.
  'commands.list': { sessionId: session },
  'mentions.complete': { sessionId: session, query: 'src/app', limit: 20 },
  // Issue 30: plan mode.
  'plan.setMode': { sessionId: session, active: true },
  'plan.decide': { sessionId: session, requestSeq: 4, decision: 'approve', policy: 'auto-edit' },
  'models.localMachine': {},
  'models.localList': {},
  'models.localPull': { id: 'qwen2.5-coder-3b' },
  'models.localCancel': { id: 'qwen2.5-coder-3b' },
  // Issue 32: background commands in the terminal dock.
  'background.list': { sessionId: session },
  'background.stop': { sessionId: session, handle: 'bg-srv' },
  // Issue 33: Settings → MCP servers.
  'mcp.configured': {},
  'mcp.saveServer': {
    name: 'web',
    replacing: 'old',
    fields: { url: 'https://mcp.example/mcp', headers: ['X: y'] },
  },
  'mcp.removeServer': { name: 'web' },
  'mcp.signIn': { name: 'web', allowHosts: ['auth.example'] },
  'mcp.signInWait': { name: 'web' },
  'mcp.signOut': { name: 'web' },
};

const payloads: { [T in TopicName]: TopicPayload<T> } = {
  'event.appended': { sessionId: session, event },
  'turn.delta': {
    sessionId: session,
    turnId: 't',
    delta: { type: 'text', text: 'Hel' },
    sentAt: 1_700_000_000_000,
  },
  'tool.output': { sessionId: session, turnId: 't', toolCallId: 'call_1', chunk: 'ok\n' },
  'turn.notice': { sessionId: session, turnId: 't', text: 'retrying in 2 s' },
  'session.status': {
    sessionId: session,
    status: 'awaiting_approval',
    running: false,
    turnId: 't',
    outcome: { status: 'awaiting_approval', pendingSeqs: [7] },
  },
  'sessions.changed': { sessionId: session, change: 'archived' },
  'app.command': { command: 'newSession', folder: '/p' },
  'imports.progress': { tool: 'claude-code', done: 3, total: 10 },
  'models.localProgress': { id: 'qwen2.5-coder-3b', state: 'running', received: 10, bytesPerSecond: 5 },
  'terminal.data': { terminalId: 'term-1', sessionId: session, chunk: '\u001b[32mhi\u001b[0m\r\n' },
  'terminal.exit': {
    terminalId: 'term-1',
    sessionId: session,
    exitCode: null,
    signal: 'SIGKILL',
    killed: true,
  },
};

/** What crosses Electron IPC (structured clone) and the WebSocket (JSON). */
const crossings: [string, (value: unknown) => unknown][] = [
  ['structured clone', (value) => structuredClone(value)],
  ['JSON', (value) => JSON.parse(JSON.stringify(value)) as unknown],
];

describe('the contract', () => {
  it('names every channel group.method with a one-line doc and zod input and output schemas', () => {
    // The channels the desktop app needs at least (issue 7), beside the extras.
    expect(CHANNEL_NAMES).toEqual(
      expect.arrayContaining([
        'sessions.list',
        'sessions.create',
        'sessions.open',
        'sessions.rename',
        'sessions.archive',
        'sessions.delete',
        'events.page',
        'turns.send',
        'turns.stop',
        'turns.resume',
        'approvals.list',
        'approvals.decide',
        'compactions.list',
        'compactions.inspect',
        'compactions.run',
        'persistent.diff',
        'persistent.apply',
        'persistent.discard',
        'settings.get',
        'settings.set',
        'settings.testProvider',
        'projects.openFolder',
        'projects.recent',
        'app.info',
        // Issue 8: the review surfaces.
        'approvals.preview',
        'grants.list',
        'grants.revoke',
        'trace.summary',
        'commands.kill',
        'tool.outputAck',
        'terminal.open',
        'terminal.write',
        'terminal.resize',
        'terminal.ack',
        'terminal.kill',
        'compactions.payload',
        'persistent.file',
        'persistent.history',
        // Issue 31: spend.
        'cost.report',
        'budget.set',
      ]),
    );
    for (const name of CHANNEL_NAMES) {
      expect(name).toMatch(/^[a-z]+\.[a-zA-Z]+$/);
      const spec = channels[name];
      expect(spec.doc.length, name).toBeGreaterThan(10);
      expect(spec.doc, name).not.toContain('\n');
      expect(typeof spec.input.safeParse, name).toBe('function');
      expect(typeof spec.output.safeParse, name).toBe('function');
    }
    expect(isChannelName('sessions.list')).toBe(true);
    expect(isChannelName('toString')).toBe(false);
    expect(isTopicName('turn.delta')).toBe(true);
    expect(isTopicName('constructor')).toBe(false);
    expect(ipcChannelOf('turns.send')).toBe('keel:turns.send');
  });

  it('round-trips every channel input through structured clone and JSON unchanged', () => {
    for (const name of CHANNEL_NAMES) {
      const schema = channels[name].input;
      const parsed = schema.parse(inputs[name]);
      for (const [how, cross] of crossings)
        expect(schema.parse(cross(inputs[name])), `${name} via ${how}`).toEqual(parsed);
    }
  });

  it('round-trips every pushed event payload', () => {
    expect(TOPIC_NAMES.sort()).toEqual(Object.keys(payloads).sort());
    for (const topic of TOPIC_NAMES) {
      const parsed = topics[topic].parse(payloads[topic]);
      for (const [how, cross] of crossings)
        expect(topics[topic].parse(cross(payloads[topic])), `${topic} via ${how}`).toEqual(parsed);
    }
  });

  it('applies defaults to inputs and rejects what does not match', () => {
    expect(channels['sessions.list'].input.parse({})).toEqual({
      limit: 100,
      offset: 0,
      includeArchived: false,
    });
    expect(
      channels['approvals.decide'].input.parse({ sessionId: 's', requestSeq: 1, decision: 'deny' }),
    ).toEqual({
      sessionId: 's',
      requestSeq: 1,
      decision: 'deny',
      resume: true,
    });
    expect(channels['sessions.delete'].input.safeParse({ sessionId: 's', confirm: 't' }).success).toBe(false);
    expect(
      channels['approvals.decide'].input.safeParse({ sessionId: 's', requestSeq: 1, decision: 'grant' })
        .success,
    ).toBe(false);
    expect(channels['turns.send'].input.safeParse({ sessionId: 's', prompt: '' }).success).toBe(false);
    expect(channels['checkouts.setKind'].input.safeParse({ kind: 'reflink' }).success).toBe(false);
    expect(channels['events.page'].input.safeParse({ sessionId: 's', limit: 100_000 }).success).toBe(false);
    expect(
      topics['turn.delta'].safeParse({ ...payloads['turn.delta'], delta: { type: 'bogus' } }).success,
    ).toBe(false);
  });

  it('wraps every output as { ok: true, value } or { ok: false, error: { code, message } }', () => {
    const schema = resultSchema(channels['turns.stop'].output);
    expect(schema.parse({ ok: true, value: { stopped: true } })).toEqual({
      ok: true,
      value: { stopped: true },
    });
    expect(schema.parse({ ok: false, error: { code: 'busy', message: 'running' } }).ok).toBe(false);
    expect(schema.safeParse({ ok: false, error: { code: 'teapot', message: 'x' } }).success).toBe(false);
    expect(schema.safeParse({ ok: true, value: { stopped: 'yes' } }).success).toBe(false);
  });

  it('imports nothing but zod, main/common and its own parts, so the renderer can compile it for the browser', () => {
    const importsOf = (file: string) =>
      [
        ...fs
          .readFileSync(path.join(REPO_ROOT, file), 'utf8')
          .matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gms),
      ].map((match) => {
        const specifier = match[1] ?? '';
        return specifier.startsWith('.')
          ? path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier))
          : specifier;
      });
    const parts = fs
      .readdirSync(path.join(REPO_ROOT, 'main/ipc/contract'))
      .map((name) => `main/ipc/contract/${name}`);
    const reached = new Set<string>();
    const visit = (file: string) => {
      for (const target of importsOf(file)) {
        if (target === 'zod') continue;
        const source = target.replace(/\.js$/, '.ts');
        expect(source, `${file} imports ${target}`).toMatch(/^main\/(common\/|ipc\/contract\/)[\w]+\.ts$/);
        if (!reached.has(source)) {
          reached.add(source);
          visit(source);
        }
      }
    };
    visit('main/ipc/contract.ts');
    for (const part of parts) expect(reached.has(part), part).toBe(true);
    // Everything the contract reaches is compiled for the browser.
    const web = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tsconfig.web.json'), 'utf8')) as {
      include: string[];
    };
    const included = (file: string) =>
      web.include.some(
        (pattern) =>
          pattern === file ||
          (pattern.endsWith('/*.ts') && path.posix.dirname(file) === pattern.slice(0, -5)),
      );
    for (const file of ['main/ipc/contract.ts', ...reached]) expect(included(file), file).toBe(true);
  });
});

describe('buildKeelApi', () => {
  it('gives one function per channel (grouped by the part before the dot) plus subscribe, frozen', async () => {
    const calls: [ChannelName, unknown][] = [];
    const api = buildKeelApi(
      (channel, input) => {
        calls.push([channel, input]);
        return Promise.resolve({ ok: true, value: null });
      },
      () => () => undefined,
    );
    const names = Object.entries(api).flatMap(([group, value]) =>
      typeof value === 'function'
        ? [group]
        : Object.keys(value as object).map((method) => `${group}.${method}`),
    );
    expect(names.sort()).toEqual([...CHANNEL_NAMES, 'subscribe'].sort());
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.isFrozen(api.sessions)).toBe(true);
    await api.settings.get();
    await api.sessions.open({ sessionId: 'x' });
    expect(calls).toEqual([
      ['settings.get', {}],
      ['sessions.open', { sessionId: 'x' }],
    ]);
  });

  it('types each function by its channel', () => {
    expectTypeOf<KeelApi['turns']['send']>().parameter(0).toEqualTypeOf<ChannelInput<'turns.send'>>();
    expectTypeOf<Awaited<ReturnType<KeelApi['sessions']['list']>>>().toEqualTypeOf<
      IpcResult<{
        sessions: SessionSummary[];
        projects: ProjectGroup[];
        hasMore: boolean;
      }>
    >();
    expectTypeOf<Parameters<KeelApi['subscribe']>[0]>().toEqualTypeOf<TopicName>();
  });
});
