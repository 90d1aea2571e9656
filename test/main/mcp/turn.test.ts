import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import type { McpServerConfig } from '../../../main/common/mcp.js';
import { decideApproval } from '../../../main/core/approvals/decide.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { runTurn, type TurnHost } from '../../../main/core/turn/engine.js';
import { appendMcpApproval } from '../../../main/store/mcpApprovals.js';
import { readProjectMcpConfig } from '../../../main/mcp/config.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Real MCP servers (test/fixtures/mcp/server.mjs, the SDK's server API over stdio) in the real box, driven
// through the real turn engine by the scripted provider.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const ENV = {
  PATH: process.env.PATH,
  ANTHROPIC_API_KEY: 'sk-ant-api03-keel-must-not-leak',
  KEEL_SECRET_THING: 'nope',
};

const fixture = useTurnHostFixture('keel-mcp-turn-');
const fixtureServer = (...args: string[]): Partial<McpServerConfig> => ({
  command: process.execPath,
  args: [SERVER, ...args],
  env: { FIXTURE_TOKEN: 'plain-value-42' },
});

const session = (policy: 'ask' | 'full-auto' | 'read-only' = 'ask'): SessionLog =>
  fixture.createSession({ policy, toolMode: policy === 'read-only' ? 'read-only' : 'write' });

const hostFor = (log: SessionLog, notices: string[] = [], signal?: AbortSignal): Promise<TurnHost> =>
  fixture.keelHost(log, {
    env: ENV,
    hooks: { onNotice: (text) => notices.push(text) },
    ...(signal ? { signal } : {}),
  });

async function turnWith(
  log: SessionLog,
  call: { name: string; arguments: Record<string, unknown> },
  notices: string[] = [],
) {
  fixture.server.enqueue(
    { kind: 'reply', text: '', toolCalls: [{ id: 'c1', ...call }] },
    { kind: 'reply', text: 'done' },
  );
  const host = await hostFor(log, notices);
  const outcome = await runTurn(host, { prompt: 'go' });
  await host.dispose?.();
  return { outcome, host };
}

/** The newest result of call `id` (turnWith names every call c1). */
const resultOf = (log: SessionLog, id = 'c1') =>
  log
    .read()
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id)
    .at(-1);
const listed = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');
type ToolsBody = { tools?: { function: { name: string; parameters: unknown } }[] };
const toolNamesSent = (i: number) =>
  ((fixture.server.requests[i]?.body as ToolsBody).tools ?? []).map((t) => t.function.name);

describe.runIf(process.platform === 'linux')('MCP tools in a turn (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('offers a server’s tools as mcp__<server>__<tool> with their JSON Schema, records them, and runs a read-only one', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('ask');
    const { outcome } = await turnWith(log, { name: 'mcp__fixture__echo', arguments: { text: 'hi' } });
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(toolNamesSent(0)).toEqual(
      expect.arrayContaining(['read_file', 'mcp__fixture__echo', 'mcp__fixture__write_note']),
    );
    const echo = ((fixture.server.requests[0]?.body as ToolsBody).tools ?? []).find(
      (t) => t.function.name === 'mcp__fixture__echo',
    );
    expect(echo?.function.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    const result = resultOf(log);
    expect(result?.isError).toBeUndefined();
    expect(result?.content).toContain('echo: hi');
    expect(result?.content).toContain('"length": 2');
    const [event] = listed(log);
    expect(event?.servers).toEqual([
      expect.objectContaining({
        name: 'fixture',
        source: 'settings',
        transport: 'stdio',
        state: 'ready',
        tools: expect.arrayContaining(['mcp__fixture__echo']) as unknown,
      }),
    ]);
    // The same servers and tools next turn: nothing new recorded.
    await turnWith(log, { name: 'mcp__fixture__echo', arguments: { text: 'again' } });
    expect(listed(log)).toHaveLength(1);
  });

  it('validates arguments against the server’s schema before calling', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('full-auto');
    await turnWith(log, { name: 'mcp__fixture__echo', arguments: { text: 5 } });
    expect(resultOf(log)).toMatchObject({
      isError: true,
      content: expect.stringMatching(/invalid arguments: .*string/) as unknown,
    });
  });

  it('gives the server only its own env and the box’s: Keel’s API keys never reach it', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('ask');
    await turnWith(log, { name: 'mcp__fixture__environment', arguments: {} });
    const names = JSON.parse(resultOf(log)?.content ?? '[]') as string[];
    expect(names).toContain('FIXTURE_TOKEN');
    expect(names).toContain('PATH');
    expect(names).not.toContain('ANTHROPIC_API_KEY');
    expect(names).not.toContain('KEEL_SECRET_THING');
    await turnWith(log, { name: 'mcp__fixture__secret', arguments: {} });
    expect(resultOf(log, 'c1')?.content).toBe('token is plain-value-42');
  });

  it('puts a write tool behind the approval gate; granted, it runs with its idempotency key and the project stays read-only', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('ask');
    fixture.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'w1', name: 'mcp__fixture__write_note', arguments: { text: 'hello' } }],
      },
      { kind: 'reply', text: 'written?' },
    );
    const firstHost = await hostFor(log);
    const first = await runTurn(firstHost, { prompt: 'write' });
    expect(first.status).toBe('awaiting_approval');
    const request = log.read().find((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
    expect(request).toMatchObject({
      tool: 'mcp__fixture__write_note',
      reason: 'commands need approval in this policy',
    });
    const decided = decideApproval(log.read(), { decision: 'grant', scope: 'once' });
    if (!decided.ok) throw new Error(decided.message);
    log.append(decided.event);
    await fixture.dispose(firstHost);
    const second = await runTurn(await hostFor(log));
    expect(second).toEqual({ status: 'completed', text: 'written?' });
    const result = resultOf(log, 'w1');
    expect(result?.content).toBe('could not write: EROFS');
    expect(result?.isError).toBe(true);
    const key = result?.idempotencyKey as string;
    expect(key).toMatch(/^ev\d+-mcp__fixture__write_note$/);
    // The server got the key in _meta (it marks its HOME, the session's scratch folder, with it).
    expect(fs.readFileSync(path.join(log.dir, 'mcp', 'fixture', 'home', `called-${key}`), 'utf8')).toBe(
      'hello',
    );
    expect(fs.existsSync(path.join(fixture.project, 'note.txt'))).toBe(false);
  });

  it("does not start a project's .mcp.json servers until that file is approved, and asks again when it changes", async () => {
    const log = session('ask');
    const probe = await hostFor(log);
    const root = path.resolve(probe.tools.workspace, probe.tools.commandCwd ?? '.');
    await probe.dispose?.();
    const config = { mcpServers: { proj: { command: process.execPath, args: [SERVER, '--tools=echo'] } } };
    fs.writeFileSync(path.join(root, '.mcp.json'), JSON.stringify(config));
    const notices: string[] = [];
    await turnWith(log, { name: 'mcp__proj__echo', arguments: { text: 'x' } }, notices);
    expect(resultOf(log)?.content).toMatch(/unknown tool \\"mcp__proj__echo\\"/);
    expect(notices.join('\n')).toMatch(
      /declares MCP servers \(proj\) that were not started.*keel mcp approve --project/,
    );
    const valid = readProjectMcpConfig(root);
    if (valid.status !== 'valid') throw new Error('expected a valid config');
    expect(listed(log).at(-1)?.project).toEqual({ status: 'untrusted', hash: valid.hash, servers: ['proj'] });

    appendMcpApproval(fixture.home, {
      kind: 'mcp_config_approved',
      project: fs.realpathSync(fixture.project),
      configHash: valid.hash,
      servers: ['proj'],
      via: 'test',
    });
    fixture.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'c2', name: 'mcp__proj__echo', arguments: { text: 'now' } }],
      },
      { kind: 'reply', text: 'ok' },
    );
    const trusted = await hostFor(log);
    await runTurn(trusted, { prompt: 'again' });
    expect(resultOf(log, 'c2')?.content).toContain('echo: now');
    expect(listed(log).at(-1)).toMatchObject({
      project: { status: 'trusted' },
      servers: [expect.objectContaining({ name: 'proj', source: 'project' })],
    });
    await fixture.dispose(trusted);

    // A changed file (a model could have edited it) is not trusted by the old approval.
    fs.writeFileSync(
      path.join(root, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: { ...config.mcpServers.proj, args: [SERVER] } } }),
    );
    const changed = await hostFor(log);
    expect(changed.registry.get('mcp__proj__echo')).toBeUndefined();
    expect(listed(log).at(-1)?.project?.status).toBe('untrusted');
  });

  it('keeps only read-only-hinted tools in a read-only session, and leaves out disabled tools', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() }, ['mcp__fixture__secret']);
    const host = await hostFor(session('read-only'));
    const names = host.registry.names().filter((name) => name.startsWith('mcp__'));
    expect(names).toContain('mcp__fixture__echo');
    expect(names).not.toContain('mcp__fixture__write_note');
    expect(names).not.toContain('mcp__fixture__crash');
    expect(names).not.toContain('mcp__fixture__secret');
  });

  it('reports a server that prints garbage, hangs on initialize, or cannot start; the others and the turn go on', async () => {
    writeMcpSettings(fixture.home, {
      noisy: fixtureServer('--garbage', '--tools=echo'),
      stuck: { ...fixtureServer('--hang'), startTimeoutMs: 500 },
      missing: { command: '/nonexistent/server' },
    });
    const log = session('ask');
    const notices: string[] = [];
    const { outcome } = await turnWith(
      log,
      { name: 'mcp__noisy__echo', arguments: { text: 'through' } },
      notices,
    );
    expect(outcome.status).toBe('completed');
    expect(resultOf(log)?.content).toContain('echo: through');
    const servers = listed(log).at(-1)?.servers ?? [];
    expect(servers.find((s) => s.name === 'stuck')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/timed out/i) as unknown,
    });
    expect(servers.find((s) => s.name === 'missing')).toMatchObject({
      state: 'failed',
      stderrTail: expect.stringMatching(/nonexistent/) as unknown,
    });
    expect(notices.join('\n')).toMatch(/MCP server "stuck" failed to start/);
  });

  it('answers the call in flight with an error when the server dies, and restarts it with a report', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('full-auto');
    const notices: string[] = [];
    fixture.server.enqueue(
      { kind: 'reply', text: '', toolCalls: [{ id: 'k1', name: 'mcp__fixture__crash', arguments: {} }] },
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'k2', name: 'mcp__fixture__echo', arguments: { text: 'back' } }],
      },
      { kind: 'reply', text: 'ok' },
    );
    const outcome = await runTurn(await hostFor(log, notices), { prompt: 'crash it' });
    expect(outcome.status).toBe('completed');
    expect(resultOf(log, 'k1')).toMatchObject({
      isError: true,
      content: JSON.stringify({
        error: 'MCP server "fixture" stopped during the call: exited with status 3',
      }),
    });
    expect(notices.join('\n')).toMatch(
      /MCP server "fixture" the server stopped: exited with status 3; restarting in 250 ms/,
    );
    expect(resultOf(log, 'k2')?.content).toContain('echo: back');
    expect(notices.join('\n')).toMatch(/MCP server "fixture" restarted/);
  });

  it('cancels a call with notifications/cancelled when the turn is stopped, and when its timeout passes', async () => {
    writeMcpSettings(fixture.home, { fixture: { ...fixtureServer(), timeoutMs: 700 } });
    const log = session('full-auto');
    const cancelled = path.join(log.dir, 'mcp', 'fixture', 'home', 'cancelled');
    await turnWith(log, { name: 'mcp__fixture__slow', arguments: {} });
    expect(resultOf(log)).toMatchObject({
      isError: true,
      content: expect.stringMatching(/did not answer within 700 ms and was cancelled/) as unknown,
    });
    expect(fs.existsSync(cancelled)).toBe(true);
    fs.rmSync(cancelled);

    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const controller = new AbortController();
    fixture.server.enqueue({
      kind: 'reply',
      text: '',
      toolCalls: [{ id: 's2', name: 'mcp__fixture__slow', arguments: {} }],
    });
    const host = await hostFor(log, [], controller.signal);
    const running = runTurn(host, { prompt: 'slow again' });
    const waitFor = async (check: () => boolean) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
    };
    await waitFor(() =>
      log.read().some((e: SessionEvent) => e.kind === 'tool_call_started' && e.toolCallId === 's2'),
    );
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    expect((await running).status).toBe('interrupted');
    await waitFor(() => fs.existsSync(cancelled));
    expect(fs.existsSync(cancelled)).toBe(true);
    expect(resultOf(log, 's2')?.content).toMatch(/cancelled/);
  });

  it('asks again, saying the outcome is unknown, for a write tool started but never recorded (a crash)', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('full-auto');
    log.append({ kind: 'user_message', content: 'write it' });
    const call = { id: 'r1', name: 'mcp__fixture__write_note', arguments: '{"text":"once"}' };
    const assistant = log.append({ kind: 'assistant_message', content: '', toolCalls: [call] });
    if (!assistant.ok) throw new Error('append failed');
    const key = `ev${assistant.events[0]?.seq}-mcp__fixture__write_note`;
    log.append({ kind: 'tool_call_started', toolCallId: 'r1', tool: call.name, idempotencyKey: key });
    const outcome = await runTurn(await hostFor(log));
    expect(outcome.status).toBe('awaiting_approval');
    const request = log.read().find((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
    expect(request).toMatchObject({ tool: call.name, unknownOutcome: true });
    expect(request?.reason).toContain(
      `outcome unknown: Keel stopped after starting this ${call.name} (key ${key})`,
    );
    expect(fs.existsSync(path.join(log.dir, 'mcp', 'fixture', 'home', `called-${key}`))).toBe(false);
  });

  it('keeps images and large results as artifacts by handle', async () => {
    writeMcpSettings(fixture.home, { fixture: fixtureServer() });
    const log = session('ask');
    await turnWith(log, { name: 'mcp__fixture__image', arguments: {} });
    const image = resultOf(log);
    expect(image?.content).toMatch(
      /a red dot\n\[image image\/png, \d+ bytes: artifact ev\d+-mcp__fixture__image-2\.png\]/,
    );
    const png = fs.readFileSync(path.join(log.artifactsDir, image?.artifact as string));
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    await turnWith(log, { name: 'mcp__fixture__big', arguments: { megabytes: 20 } });
    const big = resultOf(log);
    expect(big?.content.length).toBeLessThan(60_000);
    expect(big?.content).toMatch(
      /cut at 50000 of 20971520 characters; the whole is kept for the user; tools cannot read it in this session\]/,
    );
    expect(fs.statSync(path.join(log.artifactsDir, big?.artifact as string)).size).toBe(20 * 1024 * 1024);
  });
});
