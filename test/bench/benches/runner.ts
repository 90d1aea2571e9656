import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runCommand } from '../../../main/runner/boxedCommand.js';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { searchWorkspace } from '../../../main/tools/grep.js';
import type { ToolContext } from '../../../main/tools/types.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

const NO_SANDBOX: SandboxInfo = {
  kind: 'none',
  reason: 'benchmark baseline',
  version: null,
  executable: null,
  socat: null,
};

/**
 * The box's costs: spawn-to-first-byte of a command with and without the OS sandbox (the difference is the
 * sandbox overhead), throughput and memory while a command floods output, and grep over a large tree with
 * ripgrep and with the built-in fallback.
 */
export const runnerBench: Bench = {
  name: 'runner',
  title: 'Runner and tools: sandbox overhead, output flood, grep',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('runner');
    const workspace = join(dir, 'ws');
    mkdirSync(workspace, { recursive: true });
    const root = realpathSync(workspace);
    const sandbox = await detectSandbox();
    const notes: string[] = [`OS sandbox here: ${sandbox.kind} (${sandbox.reason})`];
    const metrics = [];
    try {
      const firstByte = async (box: SandboxInfo, run: number) => {
        const t0 = performance.now();
        let first: number | undefined;
        await runCommand({
          command: 'echo ready',
          workspace: root,
          artifactPath: join(dir, `spawn-${box.kind}-${run}.log`),
          sandbox: box,
          unconfinedApproved: box.kind === 'none',
          onData: () => (first ??= performance.now()),
        });
        return (first ?? performance.now()) - t0;
      };
      const boxed: number[] = [];
      const bare: number[] = [];
      for (let run = 0; run < sizes.runnerSpawnRuns; run++) {
        progress(`runner: spawn ${run + 1}/${sizes.runnerSpawnRuns}`);
        if (sandbox.kind !== 'none') boxed.push(await firstByte(sandbox, run));
        bare.push(await firstByte(NO_SANDBOX, run));
      }
      const boxedMedian = boxed.length > 0 ? median(boxed) : null;
      metrics.push(
        makeMetric('run_command spawn → first byte, OS sandbox (median)', 'ms', 'lower', {
          keel: boxedMedian === null ? null : round(boxedMedian, 2),
        }),
        makeMetric('run_command spawn → first byte, no sandbox (median)', 'ms', 'lower', {
          keel: round(median(bare), 2),
        }),
        makeMetric('sandbox overhead per command (median difference)', 'ms', 'lower', {
          keel: boxedMedian === null ? null : round(boxedMedian - median(bare), 2),
        }),
      );

      progress(`runner: ${sizes.floodMb} MB flood`);
      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const t0 = performance.now();
      const flood = await runCommand({
        command: `head -c ${sizes.floodMb * 1024 * 1024} /dev/zero | tr '\\0' 'a' | fold -w 100`,
        workspace: root,
        artifactPath: join(dir, 'flood.log'),
        sandbox: sandbox.kind === 'none' ? NO_SANDBOX : sandbox,
        unconfinedApproved: sandbox.kind === 'none',
        timeoutMs: 600_000,
      });
      const seconds = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      metrics.push(
        makeMetric(`capture ${sizes.floodMb} MB of output: throughput`, 'MB/s', 'higher', {
          keel: round(flood.bytes / 1e6 / seconds, 1),
        }),
        makeMetric(`capture ${sizes.floodMb} MB of output: runner memory growth`, 'MB', 'lower', {
          keel: round((peak - baseline) / 1e6, 1),
        }),
      );
      notes.push(
        `Flood: ${flood.bytes} bytes captured to the artifact, excerpt ${flood.excerpt.length} characters.`,
      );

      progress(`runner: grep over ${sizes.grepFiles} files`);
      const tree = join(dir, 'tree');
      for (let i = 0; i < sizes.grepFiles; i++) {
        const folder = join(tree, `pkg${i % 100}`);
        if (i < 100) mkdirSync(folder, { recursive: true });
        const hit = i % 10 === 0 ? '\nexport const rateLimit = 100; // needle\n' : '\n';
        writeFileSync(
          join(folder, `file${i}.ts`),
          `// file ${i}\nexport function handler${i}() { return ${i}; }${hit}`,
        );
      }
      const ctx: ToolContext = {
        workspace: realpathSync(tree),
        sessionDir: dir,
        artifactsDir: dir,
        idempotencyKey: 'bench',
        redactor: { redact: (t) => t },
        sandbox,
        protectedGlobs: [],
      };
      const grepTimes = { ripgrep: [] as number[], builtin: [] as number[] };
      for (let run = 0; run < 3; run++) {
        for (const engine of ['ripgrep', 'builtin'] as const) {
          const g0 = performance.now();
          await searchWorkspace({ pattern: 'rateLimit' }, ctx, { engine, maxMatches: 100_000 });
          grepTimes[engine].push(performance.now() - g0);
        }
      }
      metrics.push(
        makeMetric(`grep over ${sizes.grepFiles} files, ripgrep (median)`, 'ms', 'lower', {
          keel: round(median(grepTimes.ripgrep), 1),
        }),
        makeMetric(`grep over ${sizes.grepFiles} files, built-in fallback (median)`, 'ms', 'lower', {
          keel: round(median(grepTimes.builtin), 1),
        }),
      );
    } finally {
      scratch.remove(dir);
    }
    return {
      name: this.name,
      title: this.title,
      params: {
        spawnRuns: sizes.runnerSpawnRuns,
        floodMb: sizes.floodMb,
        grepFiles: sizes.grepFiles,
        sandbox: sandbox.kind,
      },
      metrics,
      notes,
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
