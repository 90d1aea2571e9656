import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { runTurn, type TurnHost } from '../../../main/core/turn/engine.js';
import { startMcpSession, type McpSession } from '../../../main/mcp/session.js';
import type { McpServerPlan } from '../../../main/mcp/config.js';
import type { ModelProvider, StreamEvent } from '../../../main/providers/types.js';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** The MCP server of Keel's tests (the SDK's server API over stdio); the bench runs from the repository root. */
const SERVER = resolve('test/fixtures/mcp/server.mjs');

/** Answers the first request of a turn with one tool call and the second with text, at once. */
function callingProvider(call: { name: string; arguments: string }): ModelProvider {
  let requests = 0;
  return {
    kind: 'openai-compatible',
    async *stream(): AsyncGenerator<StreamEvent> {
      await Promise.resolve();
      const first = requests++ % 2 === 0;
      yield {
        type: 'done',
        message: {
          content: first ? '' : 'done',
          toolCalls: first ? [{ id: `c${requests}`, ...call }] : [],
          stopReason: first ? 'tool_calls' : 'stop',
          usage: { inputTokens: 10, outputTokens: 1 },
        },
      };
    },
  };
}

const plan = (): McpServerPlan => ({
  servers: [
    {
      name: 'bench',
      source: 'settings',
      config: { command: process.execPath, args: [SERVER, '--tools=echo'], env: {} },
    },
  ],
  project: { status: 'absent' },
  problems: [],
});

/**
 * What an MCP server costs: starting one stdio server in the box (spawn, bubblewrap, initialize, tools/list,
 * stop), and the turn time a read-only MCP call adds over a built-in read_file call (both turns: call, result,
 * answer, with an instant provider; the server already running).
 */
export const mcpBench: Bench = {
  name: 'mcp',
  title: 'MCP: server start in the box, added turn latency of an MCP call over a built-in tool',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('mcp');
    const project = join(dir, 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'a.txt'), 'hello\n');
    const root = realpathSync(project);
    const sandbox: SandboxInfo = await detectSandbox();
    const runs = Math.max(2, sizes.runnerSpawnRuns);
    const params = { runs, sandbox: sandbox.kind };
    if (sandbox.kind === 'none') {
      return {
        name: this.name,
        title: this.title,
        params,
        metrics: [
          makeMetric('stdio MCP server start in the box to tools listed (median)', 'ms', 'lower', {
            keel: null,
          }),
        ],
        notes: ['no OS sandbox here: MCP servers do not start'],
        skipped: {},
        durationMs: performance.now() - started,
      };
    }
    const box = { sandbox, projectRoot: root, scratchRoot: join(dir, 'scratch'), network: 'none' as const };
    const starts: number[] = [];
    for (let run = 0; run < runs + 1; run++) {
      progress(`mcp: server start ${run + 1}/${runs + 1}`);
      const t0 = performance.now();
      const session = await startMcpSession({ plan: plan(), box });
      if (session.servers[0]?.state.state !== 'ready') throw new Error('the bench MCP server did not start');
      const ready = performance.now() - t0;
      await session.close();
      if (run > 0) starts.push(ready);
    }

    const home = join(dir, 'home');
    const log = SessionLog.create(home, {
      projectFolder: root,
      provider: 'openai-compatible',
      model: 'bench',
      baseUrl: 'http://127.0.0.1:9/v1',
      contextWindow: 1_000_000,
      toolMode: 'write',
      policy: 'full-auto',
    });
    let session: McpSession | undefined;
    const builtIn: number[] = [];
    const viaMcp: number[] = [];
    try {
      session = await startMcpSession({ plan: plan(), box });
      const registry = createToolRegistry('write', { extra: session.tools });
      const hostFor = (provider: ModelProvider): TurnHost => ({
        log,
        createProvider: () => provider,
        registry,
        tools: {
          workspace: root,
          sessionDir: log.dir,
          artifactsDir: log.artifactsDir,
          redactor: { redact: (t) => t },
          sandbox,
          protectedGlobs: [],
        },
        sandboxAvailable: true,
        systemPrompt: 'You are Keel.',
      });
      const time = async (call: { name: string; arguments: string }, into: number[], run: number) => {
        const t0 = performance.now();
        const outcome = await runTurn(hostFor(callingProvider(call)), { prompt: `run ${run}` });
        if (outcome.status !== 'completed') throw new Error(`turn ended ${outcome.status}`);
        if (run > 0) into.push(performance.now() - t0);
      };
      for (let run = 0; run < runs * 3 + 1; run++) {
        progress(`mcp: turns ${run + 1}/${runs * 3 + 1}`);
        await time({ name: 'read_file', arguments: '{"path":"a.txt"}' }, builtIn, run);
        await time({ name: 'mcp__bench__echo', arguments: '{"text":"hello"}' }, viaMcp, run);
      }
    } finally {
      await session?.close();
      log.close();
    }
    return {
      name: this.name,
      title: this.title,
      params,
      metrics: [
        makeMetric('stdio MCP server start in the box to tools listed (median)', 'ms', 'lower', {
          keel: round(median(starts), 1),
        }),
        makeMetric('turn with one read_file call (median)', 'ms', 'lower', {
          keel: round(median(builtIn), 2),
        }),
        makeMetric('turn with one MCP call instead (median)', 'ms', 'lower', {
          keel: round(median(viaMcp), 2),
        }),
        // A ratio, not a difference: on a noisy machine the difference of two medians can be zero or less.
        makeMetric('turn with an MCP call over one with read_file (ratio of medians)', 'ratio', 'lower', {
          keel: round(median(viaMcp) / median(builtIn), 2),
        }),
      ],
      notes: [
        'servers start once per turn in a session (main/mcp/README.md), so the start time is paid by every turn that has MCP servers',
      ],
      skipped: {},
      durationMs: performance.now() - started,
    };
  },
};
