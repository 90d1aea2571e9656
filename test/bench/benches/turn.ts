import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SessionEvent } from '../../../main/common/events.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { createHarness } from '../../../main/core/harness/harness.js';
import { generateHarness } from '../../../main/core/harness/stream.js';
import { runTurn, type TurnHost } from '../../../main/core/turn/engine.js';
import type { ModelProvider, StreamEvent } from '../../../main/providers/types.js';
import { readGitFacts } from '../../../main/core/prompts/environment.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import { buildCodingSession } from '../conversation.js';
import { buildGitProject } from '../gitProject.js';
import { makeMetric, median, percentile, round } from '../harness.js';
import type { Bench } from './context.js';

/**
 * Files of the project the turns run in: a small repository, so what is measured is the harness's own cost. A
 * project's `git status` (the environment block's, each turn) grows with the project, not the session: the git facts
 * rows time it here and at 1,000 files (4-7 ms on the 2-core VM, turns there 9-12 ms).
 */
const TURN_PROJECT_FILES = 100;

/** A provider that answers at once, so a turn's time is the harness's own (projection, appends, fsync, trace). */
function instantProvider(deltas = 1, sentAt: number[] = []): ModelProvider {
  return {
    kind: 'openai-compatible',
    async *stream(): AsyncGenerator<StreamEvent> {
      await Promise.resolve();
      for (let i = 0; i < deltas; i++) {
        sentAt.push(performance.now());
        yield { type: 'text', text: 'x' };
      }
      yield {
        type: 'done',
        message: {
          content: 'x'.repeat(deltas),
          toolCalls: [],
          stopReason: 'stop',
          usage: { inputTokens: 10, outputTokens: 1 },
        },
      };
    },
  };
}

/** A session of `count` events shaped like a coding session: prompt, tool call, result, answer. */
function sessionEvents(id: string, project: string, count: number): SessionEvent[] {
  return buildCodingSession({
    sessionId: id,
    projectFolder: project,
    eventCount: count,
    // The count of events before the call's start, as this bench has always keyed it.
    idempotencyKey: (_block, seq) => `ev${seq - 1}-read_file`,
    toolOutput: '1  package limit\n2  // token bucket, 100 req/s\n',
    answer: () => 'The limiter allows 100 requests per second; I lowered the burst.',
    wholeBlocks: true,
  });
}

/**
 * Harness overhead per turn (everything but model and tool time: read and fold the log, append the user
 * and assistant messages durably, project, validate, trace) at several session lengths, and the time from
 * a provider delta to the subscriber callback. No peer: the targets are absolute (< 5 ms at 1k events,
 * < 1 ms p99 per delta).
 */
export const turnBench: Bench = {
  name: 'turn',
  title: 'Turn engine: harness overhead per turn, delta to subscriber',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('turn');
    // A repository of its own: the environment block's `git status` is then of a small project's tree, not of
    // whichever tree the bench's scratch folder lies in (by default `.bench-tmp` in Keel's checkout).
    const project = join(dir, 'project');
    buildGitProject(project, TURN_PROJECT_FILES, { aged: true });
    const sandbox = await detectSandbox();
    const metrics = [];
    const params: Record<string, number | string | boolean> = {
      runs: sizes.turnRuns,
      deltas: sizes.deltaCount,
    };
    const hostFor = (log: SessionLog, provider: ModelProvider, hooks: TurnHost['hooks'] = {}): TurnHost => ({
      log,
      createProvider: () => provider,
      registry: createToolRegistry('write'),
      tools: {
        workspace: realpathSync(project),
        sessionDir: log.dir,
        artifactsDir: log.artifactsDir,
        redactor: { redact: (t) => t },
        sandbox,
        protectedGlobs: [],
      },
      sandboxAvailable: sandbox.kind !== 'none',
      systemPrompt: 'You are Keel.',
      hooks,
    });
    try {
      for (const count of sizes.turnEventCounts) {
        progress(`turn: ${count}-event session`);
        const home = join(dir, `home-${count}`);
        const id = SessionLog.importEvents(
          home,
          sessionEvents(`bench-${count}`, realpathSync(project), count),
        );
        const log = SessionLog.open(home, id, { write: true });
        const times: number[] = [];
        try {
          for (let run = 0; run < sizes.turnRuns + 1; run++) {
            const t0 = performance.now();
            const outcome = await runTurn(hostFor(log, instantProvider()), { prompt: `question ${run}` });
            const elapsed = performance.now() - t0;
            if (outcome.status !== 'completed') throw new Error(`turn ended ${outcome.status}`);
            if (run > 0) times.push(elapsed); // the first run warms the JIT and the page cache
          }
        } finally {
          log.close();
        }
        // A host that opens the session for each turn (the app's handlers do) also pays the open, the lease
        // and one decode of the tail.
        const reopened: number[] = [];
        for (let run = 0; run < sizes.turnRuns + 1; run++) {
          const t0 = performance.now();
          const fresh = SessionLog.open(home, id, { write: true });
          try {
            await runTurn(hostFor(fresh, instantProvider()), { prompt: `again ${run}` });
          } finally {
            fresh.close();
          }
          if (run > 0) reopened.push(performance.now() - t0);
        }
        // The app's and the CLI's path: the session API (streamHarness) opens the session, checks policy and
        // staging, builds the turn host (tools, box, redactor) and records the harness_turn trace.
        const harness = createHarness({ home, createProvider: () => instantProvider() });
        const viaApi: number[] = [];
        const viaApiCpu: number[] = [];
        for (let run = 0; run < sizes.turnRuns + 1; run++) {
          const cpu0 = process.cpuUsage();
          const t0 = performance.now();
          const result = await generateHarness({
            harness,
            session: id,
            messages: [{ role: 'user', content: `through the API ${run}` }],
          });
          if (result.outcome.status !== 'completed') throw new Error(`turn ended ${result.outcome.status}`);
          if (run > 0) {
            viaApi.push(performance.now() - t0);
            const cpu = process.cpuUsage(cpu0);
            viaApiCpu.push((cpu.user + cpu.system) / 1000);
          }
        }
        const sorted = [...times].sort((a, b) => a - b);
        metrics.push(
          makeMetric(`harness overhead per turn at ${count} events (median)`, 'ms', 'lower', {
            keel: round(median(times), 3),
          }),
          makeMetric(`harness overhead per turn at ${count} events (p95)`, 'ms', 'lower', {
            keel: round(percentile(sorted, 95), 3),
          }),
          makeMetric(`… with the session reopened for the turn, at ${count} events (median)`, 'ms', 'lower', {
            keel: round(median(reopened), 3),
          }),
          makeMetric(
            `… through the session API (streamHarness), at ${count} events (median)`,
            'ms',
            'lower',
            {
              keel: round(median(viaApi), 3),
            },
          ),
          // CPU time is what a loaded machine's waits (fsync, other jobs) leave out: how flat the work itself is.
          makeMetric(`… the same, CPU time of this process, at ${count} events (median)`, 'ms', 'lower', {
            keel: round(median(viaApiCpu), 3),
          }),
        );
      }
      progress('turn: delta latency');
      const home = join(dir, 'home-delta');
      const id = SessionLog.importEvents(home, sessionEvents('bench-delta', realpathSync(project), 10));
      const log = SessionLog.open(home, id, { write: true });
      const sentAt: number[] = [];
      const latencies: number[] = [];
      try {
        await runTurn(
          hostFor(log, instantProvider(sizes.deltaCount, sentAt), {
            onDelta: () => {
              const sent = sentAt[latencies.length];
              if (sent !== undefined) latencies.push(performance.now() - sent);
            },
          }),
          { prompt: 'stream' },
        );
      } finally {
        log.close();
      }
      const sorted = [...latencies].sort((a, b) => a - b);
      metrics.push(
        makeMetric('provider delta → subscriber callback (p50)', 'ms', 'lower', {
          keel: round(percentile(sorted, 50), 4),
        }),
        makeMetric('provider delta → subscriber callback (p99)', 'ms', 'lower', {
          keel: round(percentile(sorted, 99), 4),
        }),
      );
      // What the environment block's git facts cost each turn grows with the project, not the session: the
      // turn project's, and a 1,000-file one's for scale (readGitFacts as the turn host calls it).
      progress('turn: git facts');
      const larger = join(dir, 'project-1000');
      buildGitProject(larger, 1_000, { aged: true });
      for (const [label, folder] of [
        [`${TURN_PROJECT_FILES}-file`, project],
        ['1,000-file', larger],
      ] as const) {
        const real = realpathSync(folder);
        const times: number[] = [];
        for (let run = 0; run < sizes.turnRuns + 1; run++) {
          const t0 = performance.now();
          const facts = await readGitFacts({ projectFolder: real, projectRoot: real });
          if (facts.status === undefined) throw new Error(`git status of ${folder} could not be read`);
          if (run > 0) times.push(performance.now() - t0);
        }
        metrics.push(
          makeMetric(`the environment block's git facts, ${label} project (median)`, 'ms', 'lower', {
            keel: round(median(times), 3),
          }),
        );
      }
    } finally {
      scratch.remove(dir);
    }
    return {
      name: this.name,
      title: this.title,
      params,
      metrics,
      notes: [
        'The provider answers in-process at once, so each turn time is harness overhead: loading the state, two durable appends (synchronous=FULL), projection, validation, trace. The first rows keep the log open across turns (a host holding the session); the "reopened" row opens it (lease, index catch-up, one decode of the tail) for every turn; the "session API" row is the path the app and the CLI take (streamHarness: open, policy and staging checks, the turn host with its tools, box and redactor, the harness_turn trace).',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
