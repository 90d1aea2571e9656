import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import type { McpServerConfig } from '../../../main/common/mcp.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn, type TurnHost } from '../../../main/core/turn/engine.js';
import { startMcpSession } from '../../../main/mcp/session.js';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../../support/sessionFixture.js';

// Servers that misbehave (the fixture server, the SDK's server API over stdio, in the real box): each is a
// clear error on record and the session goes on. Garbage on stdout, a hang on initialize, a 20 MB result and
// a crash during a call are in turn.test.ts.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');

const logs: SessionLog[] = [];
const hosts: TurnHost[] = [];
let sandbox: SandboxInfo;

beforeAll(async () => {
  sandbox = await detectSandbox();
});
const fixture = useSessionFixture('keel-mcp-bad-', {
  cleanup: async () => {
    for (const host of hosts.splice(0)) await host.dispose?.();
    for (const log of logs.splice(0)) log.close();
  },
});

function settingsWith(servers: Record<string, Partial<McpServerConfig>>): void {
  fs.mkdirSync(fixture.home, { recursive: true });
  fs.writeFileSync(path.join(fixture.home, 'settings.json'), JSON.stringify({ mcp: { servers } }));
}

async function turnWith(log: SessionLog, calls: { name: string; arguments: Record<string, unknown> }[]) {
  fixture.server.enqueue(
    ...calls.map((call, i) => ({
      kind: 'reply' as const,
      text: '',
      toolCalls: [{ id: `c${i + 1}`, ...call }],
    })),
    { kind: 'reply', text: 'done' },
  );
  const notices: string[] = [];
  const host = await createTurnHost(log, {
    env: { PATH: process.env.PATH },
    hooks: { onNotice: (text) => notices.push(text) },
  });
  hosts.push(host);
  const outcome = await runTurn(host, { prompt: 'go' });
  await hosts.pop()?.dispose?.();
  return { outcome, notices, host };
}
/** One fixture server in the real box, as a session's MCP servers start (startMcpSession), with its backoff. */
function startServer(name: string, args: string[], restartBackoffMs: number[], notices: string[]) {
  const project = path.join(fixture.dir, 'work', 'project');
  fs.mkdirSync(project, { recursive: true });
  return startMcpSession({
    plan: {
      servers: [{ name, source: 'settings', config: { command: process.execPath, args, env: {} } }],
      project: { status: 'absent' },
      problems: [],
    },
    box: {
      sandbox,
      projectRoot: project,
      scratchRoot: path.join(fixture.dir, 'scratch'),
      network: 'none',
      baseEnv: { PATH: process.env.PATH },
    },
    timeouts: { startMs: 10_000, listMs: 5_000, restartBackoffMs },
    onNotice: (text) => notices.push(text),
  });
}

const resultOf = (log: SessionLog, id: string) =>
  log
    .read()
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id)
    .at(-1);
const listed = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');

describe.runIf(process.platform === 'linux')('misbehaving MCP servers (bubblewrap)', () => {
  beforeEach((context) => {
    if (sandbox.kind !== 'bwrap') context.skip();
  });

  it('cannot shadow a built-in: its read_file is mcp__<server>__read_file, and a name no provider takes is skipped on record', async () => {
    fs.writeFileSync(path.join(fixture.project, 'hello.txt'), 'the real file\n');
    settingsWith({ fix: { command: process.execPath, args: [SERVER, '--builtin-names', '--tools=echo'] } });
    const log = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
    logs.push(log);
    const { outcome, host } = await turnWith(log, [
      { name: 'read_file', arguments: { path: 'hello.txt' } },
      { name: 'mcp__fix__read_file', arguments: {} },
      { name: 'mcp__fix__run_command', arguments: {} },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(resultOf(log, 'c1')?.content).toContain('the real file');
    expect(resultOf(log, 'c2')?.content).toBe('fixture read_file ran');
    expect(resultOf(log, 'c3')?.content).toBe('fixture run_command ran');
    // The built-ins are Keel's own, once each; the server's tools sit beside them under their prefix.
    const names = host.registry.names();
    expect(names.filter((name) => name === 'read_file' || name === 'run_command')).toEqual([
      'read_file',
      'run_command',
    ]);
    expect(host.registry.get('read_file')?.description).not.toMatch(/fixture/);
    const record = listed(log)[0];
    expect(record?.servers[0]?.tools).toEqual([
      'mcp__fix__echo',
      'mcp__fix__read_file',
      'mcp__fix__run_command',
    ]);
    expect(record?.skipped).toEqual([
      'fix/a tool with spaces: its name "mcp__fix__a tool with spaces" is not 1-64 letters, digits, _ or -',
    ]);
  });

  it('ends a connection whose message passes 32 MiB (memory bounded), fails that call, restarts the server', async () => {
    settingsWith({ fix: { command: process.execPath, args: [SERVER, '--tools=big,echo'] } });
    const log = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
    logs.push(log);
    const before = process.memoryUsage().rss;
    const { outcome, notices } = await turnWith(log, [
      { name: 'mcp__fix__big', arguments: { megabytes: 40 } },
      { name: 'mcp__fix__echo', arguments: { text: 'after' } },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(resultOf(log, 'c1')).toMatchObject({
      isError: true,
      content: expect.stringMatching(
        /MCP server \\"fix\\" stopped during the call: the server sent a message of more than 33554432 bytes/,
      ) as unknown,
    });
    expect(notices.join('\n')).toMatch(/MCP server "fix" the server stopped: .*restarting in 250 ms/);
    expect(resultOf(log, 'c2')?.content).toContain('echo: after');
    // Nothing near the 40 MiB (nor its string copies) stayed in Keel.
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('cancels a call that reports progress forever at ten times its timeout, telling the server', async () => {
    settingsWith({ fix: { command: process.execPath, args: [SERVER, '--tools=ticking'], timeoutMs: 300 } });
    const log = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
    logs.push(log);
    const started = Date.now();
    const { outcome } = await turnWith(log, [{ name: 'mcp__fix__ticking', arguments: {} }]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(resultOf(log, 'c1')).toMatchObject({
      isError: true,
      content: expect.stringMatching(
        /ticking was still running after 3000 ms in all \(its progress notifications kept it going\) and was cancelled/,
      ) as unknown,
    });
    // The server got notifications/cancelled (it marks its HOME with how many ticks it sent).
    const cancelled = path.join(log.dir, 'mcp', 'fix', 'home', 'cancelled');
    await expect.poll(() => fs.existsSync(cancelled), { timeout: 5000 }).toBe(true);
    expect(Number(fs.readFileSync(cancelled, 'utf8'))).toBeGreaterThan(5);
  });

  it('restarts a server that keeps dying with backoff, reports each time, then leaves it failed', async () => {
    const notices: string[] = [];
    const session = await startServer('flaky', [SERVER, '--crash-after-start'], [50, 100], notices);
    try {
      expect(session.servers[0]?.state).toEqual({ state: 'ready' });
      await expect
        .poll(() => notices.at(-1), { timeout: 15_000 })
        .toBe(
          'MCP server "flaky" the server stopped: exited with status 2; not restarted again this session',
        );
      expect(notices).toEqual([
        'MCP server "flaky" the server stopped: exited with status 2; restarting in 50 ms',
        'MCP server "flaky" restarted',
        'MCP server "flaky" the server stopped: exited with status 2; restarting in 100 ms',
        'MCP server "flaky" restarted',
        'MCP server "flaky" the server stopped: exited with status 2; not restarted again this session',
      ]);
      const starts = fs.readFileSync(path.join(fixture.dir, 'scratch', 'flaky', 'home', 'starts'), 'utf8');
      expect(starts.split('\n').filter(Boolean)).toHaveLength(3);
      // Failed for good: a long-lived host reopens the session's servers at the next turn.
      expect(session.healthy()).toBe(false);
    } finally {
      await session.close();
    }
  });
});

describe.runIf(process.platform === 'linux')('a kept server that died between turns', () => {
  /** This test's processes: the box (its argv) and the server in it (its environment) name the test's folder. */
  const processesOfTest = () =>
    fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
          return cmdline.includes(fixture.dir) || (cmdline.includes(SERVER) && environ.includes(fixture.dir));
        } catch {
          return false;
        }
      });

  const starts = () =>
    fs
      .readFileSync(path.join(fixture.dir, 'scratch', 'fix', 'home', 'starts'), 'utf8')
      .split('\n')
      .filter(Boolean).length;

  for (const seen of [true, false]) {
    it(`the next turn's relist waits for its restart and lists its tools (${seen ? 'its exit seen' : 'its exit not seen yet'})`, async (context) => {
      if (sandbox.kind !== 'bwrap') context.skip();
      const notices: string[] = [];
      // A backoff longer than anything between the kill and the relist: the relist meets the restart pending.
      const session = await startServer('fix', [SERVER], [600], notices);
      try {
        const tools = session.tools.map((tool) => tool.name);
        expect(tools.length).toBeGreaterThan(0);
        for (const pid of processesOfTest()) process.kill(Number(pid), 'SIGKILL');
        // Seen: the connection has marked it stopped (its restart pending). Not seen: the relist's own
        // tools/list is the first to meet the closed pipe (nothing ran between the kill and the request).
        if (seen) await expect.poll(() => notices.at(-1), { timeout: 5000 }).toMatch(/restarting in 600 ms$/);
        await session.relist();
        expect(session.servers[0]?.state).toEqual({ state: 'ready' });
        expect(session.tools.map((tool) => tool.name)).toEqual(tools);
        expect(starts()).toBe(2);
        expect(session.healthy()).toBe(true);
      } finally {
        await session.close();
      }
    });
  }
});
