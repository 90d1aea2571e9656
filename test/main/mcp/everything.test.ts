import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import type { McpServerConfig } from '../../../main/common/mcp.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { McpPool } from '../../../main/core/mcp/pool.js';
import { runTurn, type TurnHost } from '../../../main/core/turn/engine.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// @modelcontextprotocol/server-everything (a devDependency: the MCP project's own reference server, which no
// one here wrote), over stdio in the real bubblewrap box as Keel runs it, and in its Streamable HTTP mode on
// loopback reached through the session's network allowlist; driven through the real turn engine by the
// scripted provider. Tool names are the installed version's (2026.8.31: dist/tools/*.js).
const EVERYTHING = path.resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const HTTP_LAUNCHER = path.resolve('test/fixtures/mcp/everythingHttp.mjs');
const FIXTURE = path.resolve('test/fixtures/mcp/server.mjs');

const fixture = useTurnHostFixture('keel-mcp-everything-');
const stdioEverything = (extra: Partial<McpServerConfig> = {}): Partial<McpServerConfig> => ({
  command: process.execPath,
  args: [EVERYTHING, 'stdio'],
  ...extra,
});

const session = (policy: 'ask' | 'full-auto', networkAllow?: string[]): SessionLog =>
  fixture.createSession({ policy, toolMode: 'write', ...(networkAllow ? { networkAllow } : {}) });

type Seen = { notices: string[]; output: Map<string, string> };

const hostFor = (log: SessionLog, seen: Seen, pool?: McpPool): Promise<TurnHost> =>
  fixture.keelHost(log, {
    env: { PATH: process.env.PATH },
    hooks: {
      onNotice: (text) => seen.notices.push(text),
      onToolOutput: (id, chunk) => seen.output.set(id, (seen.output.get(id) ?? '') + chunk),
    },
    ...(pool ? { mcpPool: pool } : {}),
  });

/** One turn calling `calls` in order (ids c1, c2, …), then "done". */
async function turnWith(
  log: SessionLog,
  calls: { name: string; arguments: Record<string, unknown> }[],
  pool?: McpPool,
  allReady = true,
) {
  fixture.server.enqueue(
    ...calls.map((call, i) => ({
      kind: 'reply' as const,
      text: '',
      toolCalls: [{ id: `c${i + 1}`, ...call }],
    })),
    { kind: 'reply', text: 'done' },
  );
  const seen: Seen = { notices: [], output: new Map() };
  const host = await hostFor(log, seen, pool);
  const outcome = await runTurn(host, { prompt: 'go' });
  await fixture.dispose(host);
  // Every server started and listed (else the whole record, with its error and stderr tail, is the failure).
  if (allReady)
    expect(
      listed(log)
        .at(-1)
        ?.servers.filter((s) => s.state !== 'ready'),
    ).toEqual([]);
  return { outcome, seen, host };
}

const resultOf = (log: SessionLog, id: string) =>
  log
    .read()
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id)
    .at(-1);
/** The steps of a call's live output, which must be nothing but "[progress N/total]" lines. */
function progressSteps(output: string | undefined, total: number): number[] {
  const lines = (output ?? '').split('\n').filter(Boolean);
  for (const line of lines) expect(line).toMatch(new RegExp(`^\\[progress \\d+/${total}\\]$`));
  return lines.map((line) => Number(/\d+/.exec(line)?.[0]));
}
const listed = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');

describe.runIf(process.platform === 'linux')('server-everything over stdio, boxed (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('lists its tools (no sampling tool: Keel offers none) and echoes', async () => {
    writeMcpSettings(fixture.home, { everything: stdioEverything() });
    const log = session('ask');
    const { outcome, host } = await turnWith(log, [
      { name: 'mcp__everything__echo', arguments: { message: 'hello everything' } },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(resultOf(log, 'c1')).toMatchObject({ content: 'Echo: hello everything' });
    expect(resultOf(log, 'c1')?.isError).toBeUndefined();
    const names = host.registry.names();
    expect(names).toEqual(
      expect.arrayContaining([
        'mcp__everything__echo',
        'mcp__everything__get-sum',
        'mcp__everything__trigger-long-running-operation',
      ]),
    );
    // The server registers its sampling and elicitation tools only for a client that offers them.
    expect(names).not.toContain('mcp__everything__trigger-sampling-request');
    expect(names).not.toContain('mcp__everything__trigger-elicitation-request');
    expect(listed(log)[0]?.servers[0]).toMatchObject({
      name: 'everything',
      transport: 'stdio',
      state: 'ready',
    });
  });

  it('keeps a long-running call alive while progress arrives, and streams the progress as its output', async () => {
    // 6 steps of 0.5 s against a 1 s bound: only progress restarting the bound lets it finish.
    writeMcpSettings(fixture.home, { everything: stdioEverything({ timeoutMs: 1000 }) });
    const log = session('ask');
    const { outcome, seen } = await turnWith(log, [
      { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 3, steps: 6 } },
    ]);
    expect(outcome.status).toBe('completed');
    expect(resultOf(log, 'c1')).toMatchObject({
      content: 'Long running operation completed. Duration: 3 seconds, Steps: 6.',
    });
    expect(resultOf(log, 'c1')?.isError).toBeUndefined();
    // Progress in order; the last one can be lost: the SDK hands notifications on a microtask and
    // responses at once, so a progress read in the same chunk as the result finds its call finished.
    const steps = progressSteps(seen.output.get('c1'), 6);
    expect(steps).toEqual([1, 2, 3, 4, 5, 6].slice(0, steps.length));
    expect(steps.length).toBeGreaterThanOrEqual(3);
  });

  it('still cancels a call with no progress at its bound', async () => {
    writeMcpSettings(fixture.home, { everything: stdioEverything({ timeoutMs: 1000 }) });
    const log = session('ask');
    const { outcome } = await turnWith(log, [
      // One step of 2 s: the first progress would come after the bound.
      { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 2, steps: 1 } },
      { name: 'mcp__everything__echo', arguments: { message: 'after' } },
    ]);
    expect(outcome.status).toBe('completed');
    expect(resultOf(log, 'c1')).toMatchObject({
      isError: true,
      content: expect.stringMatching(/did not answer within 1000 ms and was cancelled/) as unknown,
    });
    expect(resultOf(log, 'c2')?.content).toBe('Echo: after');
  });

  it('gives a failing tool’s isError result to the model as an error result; the turn goes on', async () => {
    writeMcpSettings(fixture.home, { everything: stdioEverything() });
    const log = session('ask');
    const { outcome } = await turnWith(log, [
      { name: 'mcp__everything__get-resource-reference', arguments: { resourceType: 'Text', resourceId: 0 } },
      { name: 'mcp__everything__get-sum', arguments: { a: 2, b: 3 } },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(resultOf(log, 'c1')).toMatchObject({
      isError: true,
      content: expect.stringContaining(
        'Invalid resourceId: 0. Must be a finite positive integer.',
      ) as unknown,
    });
    expect(resultOf(log, 'c2')?.content).toContain('5');
    // The model saw the failure as a tool error (the provider request after the call carries it).
    const body = fixture.server.requests[1]?.body as { messages: { role: string; content: string }[] };
    expect(body.messages.find((m) => m.role === 'tool')?.content).toContain('Invalid resourceId: 0');
  });

  it('refuses a sampling request with a JSON-RPC error the server sees, and the session goes on', async () => {
    // server-everything asks only a client that offered sampling; the fixture server asks anyway.
    writeMcpSettings(fixture.home, {
      everything: stdioEverything(),
      fixture: { command: process.execPath, args: [FIXTURE] },
    });
    const log = session('full-auto');
    const { outcome } = await turnWith(log, [
      { name: 'mcp__fixture__sample', arguments: {} },
      { name: 'mcp__everything__echo', arguments: { message: 'still here' } },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(resultOf(log, 'c1')).toMatchObject({
      isError: true,
      content: 'sampling refused: MCP error -32601: Method not found',
    });
    expect(resultOf(log, 'c2')?.content).toBe('Echo: still here');
  });

  it('records its tools/list_changed and lists again at the next turn (servers kept across turns)', async () => {
    writeMcpSettings(fixture.home, { everything: stdioEverything() });
    const log = session('ask');
    const pool = new McpPool();
    try {
      // After initialize the server registers its conditional tools, which sends tools/list_changed.
      const first = await turnWith(
        log,
        [{ name: 'mcp__everything__echo', arguments: { message: 'one' } }],
        pool,
      );
      expect(first.outcome.status).toBe('completed');
      expect(first.seen.notices.join('\n')).toMatch(
        /MCP server "everything" changed its tools: they apply at the next turn/,
      );
      expect(listed(log)).toHaveLength(1);
      expect(listed(log)[0]?.changedBy).toBeUndefined();

      const second = await turnWith(
        log,
        [{ name: 'mcp__everything__echo', arguments: { message: 'two' } }],
        pool,
      );
      expect(second.outcome.status).toBe('completed');
      expect(resultOf(log, 'c1')?.content).toBe('Echo: two');
      const again = listed(log);
      expect(again).toHaveLength(2);
      expect(again[1]).toMatchObject({ changedBy: ['everything'] });
      // The task-only tool it added is not offered, and the record says why.
      expect(again[1]?.servers[0]?.tools).not.toContain('mcp__everything__simulate-research-query');
      expect(again[1]?.skipped).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^everything\/simulate-research-query: it runs only as an MCP task/),
        ]),
      );
    } finally {
      await pool.stop();
    }
  });
});

type HttpEverything = {
  child: ChildProcessByStdio<null, Readable, Readable>;
  port: number;
  /** Requests it logged ("Received MCP POST request" lines on its stdout). */
  posts: () => number;
};

/** Starts server-everything's Streamable HTTP mode on a free loopback port. */
async function startHttpEverything(): Promise<HttpEverything> {
  const child = spawn(process.execPath, [HTTP_LAUNCHER], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.resume();
  let stdout = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /KEEL_PORT=(\d+)/.exec(stdout);
      if (match) resolve(Number(match[1]));
    });
  });
  const posts = () => stdout.split('\n').filter((line) => line === 'Received MCP POST request').length;
  return { child, port, posts };
}

describe('server-everything over Streamable HTTP on loopback', () => {
  let server: HttpEverything;
  let port = 0;

  beforeAll(async () => {
    server = await startHttpEverything();
    port = server.port;
  });
  afterAll(() => {
    server.child.kill('SIGKILL');
  });

  const postsSeen = () => server.posts();

  it('is refused before any request when the session’s allowlist does not name it; the turn goes on', async () => {
    writeMcpSettings(fixture.home, { web: { url: `http://127.0.0.1:${port}/mcp` } });
    const before = postsSeen();
    for (const log of [session('ask'), session('ask', ['example.com'])]) {
      const { outcome } = await turnWith(
        log,
        [{ name: 'mcp__web__echo', arguments: { message: 'x' } }],
        undefined,
        false,
      );
      expect(outcome).toEqual({ status: 'completed', text: 'done' });
      expect(resultOf(log, 'c1')?.content).toMatch(/unknown tool/);
      expect(listed(log).at(-1)?.servers[0]).toMatchObject({
        name: 'web',
        transport: 'http',
        state: 'failed',
        error: `127.0.0.1:${port} is not on this session's network allowlist (allow it with --allow-host 127.0.0.1:${port})`,
      });
    }
    expect(postsSeen()).toBe(before);
  });

  it('echoes, reports a failing tool, and keeps a long call alive on progress when the host is allowed', async () => {
    writeMcpSettings(fixture.home, { web: { url: `http://127.0.0.1:${port}/mcp`, timeoutMs: 1000 } });
    const log = session('ask', [`127.0.0.1:${port}`]);
    const { outcome, seen } = await turnWith(log, [
      { name: 'mcp__web__echo', arguments: { message: 'over http' } },
      { name: 'mcp__web__get-resource-reference', arguments: { resourceType: 'Text', resourceId: -1 } },
      { name: 'mcp__web__trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
    ]);
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
    expect(postsSeen()).toBeGreaterThan(0);
    expect(listed(log)[0]?.servers[0]).toMatchObject({ name: 'web', transport: 'http', state: 'ready' });
    expect(resultOf(log, 'c1')?.content).toBe('Echo: over http');
    expect(resultOf(log, 'c2')).toMatchObject({
      isError: true,
      content: expect.stringContaining('Invalid resourceId: -1') as unknown,
    });
    expect(resultOf(log, 'c3')?.content).toBe(
      'Long running operation completed. Duration: 2 seconds, Steps: 4.',
    );
    const steps = progressSteps(seen.output.get('c3'), 4);
    expect(steps).toEqual([1, 2, 3, 4].slice(0, steps.length));
    expect(steps.length).toBeGreaterThanOrEqual(2);
  });

  it('lists a kept server again at each turn start, its tools/list_changed lost over HTTP; the record is its list', async () => {
    writeMcpSettings(fixture.home, { web: { url: `http://127.0.0.1:${port}/mcp` } });
    const log = session('ask', [`127.0.0.1:${port}`]);
    const pool = new McpPool();
    try {
      // Its list_changed right after initialize goes to a GET stream not yet open, so it never reaches
      // Keel; the tools it announces (registered in oninitialized) are already in the first tools/list.
      const first = await turnWith(log, [{ name: 'mcp__web__echo', arguments: { message: 'one' } }], pool);
      expect(first.outcome.status).toBe('completed');
      expect(listed(log)).toHaveLength(1);
      expect(listed(log)[0]?.servers[0]).toMatchObject({ name: 'web', transport: 'http', state: 'ready' });
      expect(listed(log)[0]?.skipped).toEqual([
        expect.stringMatching(/^web\/simulate-research-query: it runs only as an MCP task/),
      ]);

      // The kept server is not restarted; the next turn's start lists its tools and its resources again (two
      // POSTs before the echo's).
      const before = postsSeen();
      const second = await turnWith(log, [{ name: 'mcp__web__echo', arguments: { message: 'two' } }], pool);
      expect(second.outcome.status).toBe('completed');
      expect(resultOf(log, 'c1')?.content).toBe('Echo: two');
      expect(postsSeen() - before).toBe(3);
      // The same list as recorded: nothing new on record (an unchanged list appends nothing).
      expect(listed(log)).toHaveLength(1);
    } finally {
      await pool.stop();
    }
  });

  it('fails the call in flight at once when the server dies, and reports the restart that did not work', async () => {
    const dying = await startHttpEverything();
    try {
      writeMcpSettings(fixture.home, {
        web: { url: `http://127.0.0.1:${dying.port}/mcp`, timeoutMs: 60_000 },
      });
      const log = session('ask', [`127.0.0.1:${dying.port}`]);
      const killer = setTimeout(() => dying.child.kill('SIGKILL'), 1500);
      const started = Date.now();
      const { outcome, seen } = await turnWith(log, [
        { name: 'mcp__web__trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
        { name: 'mcp__web__echo', arguments: { message: 'anyone?' } },
      ]);
      clearTimeout(killer);
      expect(outcome).toEqual({ status: 'completed', text: 'done' });
      // Not the 60 s bound: the broken stream and a failed ping end the call.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(resultOf(log, 'c1')).toMatchObject({
        isError: true,
        content: expect.stringMatching(
          /MCP server \\"web\\" stopped during the call: it stopped answering/,
        ) as unknown,
      });
      expect(resultOf(log, 'c2')).toMatchObject({
        isError: true,
        content: expect.stringMatching(/MCP server \\"web\\"/) as unknown,
      });
      const notices = seen.notices.join('\n');
      expect(notices).toMatch(
        /MCP server "web" the server stopped: it stopped answering .*; restarting in 250 ms/,
      );
      expect(notices).toMatch(/MCP server "web" did not restart: /);
    } finally {
      dying.child.kill('SIGKILL');
    }
  });
});
