import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOUNDED_KINDS } from './benches/bounded.js';
import { PATHOLOGICAL_STAGES } from './benches/pathological.js';
import { makeMetric, median, percentile } from './harness.js';
import type { BenchReport } from './report.js';
import { BENCHES, main, parseArgs } from './run.js';

// A tiny-size run of the real harness against the real store, so the bench cannot rot unnoticed.
// No timing is asserted: these machines are shared and noisy; only the shape and the cleanup are.

let scratchParent: string;
let outDir: string;

beforeAll(() => {
  scratchParent = mkdtempSync(join(tmpdir(), 'keel-bench-test-'));
  outDir = mkdtempSync(join(tmpdir(), 'keel-bench-out-'));
});

afterAll(() => {
  rmSync(scratchParent, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

/** Tiny sizes, everything scratch under this test's own temp dir. */
function tiny(...args: string[]): string[] {
  return ['--size', 'tiny', '--tmp', scratchParent, '--fixture-tmp', scratchParent, ...args];
}

describe('bench runner', () => {
  it('prints only a JSON report on stdout with --json, covering every benchmark and target', async () => {
    const { code, stdout, stderr } = await runCli(tiny('--json'));
    expect(stderr).toContain('[bench] running append');
    const report = JSON.parse(stdout) as BenchReport;
    expect(code, JSON.stringify(report.failures)).toBe(0);
    expect(report.schema).toBe('keel-bench/1');
    expect(report.size).toBe('tiny');
    expect(report.machine.cpus).toBeGreaterThan(0);
    expect(report.failures).toEqual([]);
    expect(report.benches.map((b) => b.name)).toEqual(BENCHES.map((b) => b.name));
    for (const bench of report.benches) {
      expect(bench.metrics.length, bench.name).toBeGreaterThan(0);
      for (const metric of bench.metrics) {
        const keel = metric.values.keel;
        expect(
          typeof keel === 'number' && Number.isFinite(keel) && keel > 0,
          `${bench.name}: ${metric.name}`,
        ).toBe(true);
      }
    }
    const byName = Object.fromEntries(report.benches.map((b) => [b.name, b]));
    const firstMetric = (name: string) => byName[name]?.metrics[0];
    expect(firstMetric('append')?.values.jsonl).toBeGreaterThan(0);
    expect(firstMetric('append')?.values.langgraph).toBeGreaterThan(0);
    expect(firstMetric('append')?.keelAdvantage.langgraph).toBeGreaterThan(0);
    expect(firstMetric('bytes')?.unit).toBe('B');
    expect(byName.list?.skipped.langgraph).toBeTruthy();
    expect(byName.project?.notes.join(' ')).not.toContain('WARNING');
    expect(byName.list?.notes.join(' ')).not.toContain('WARNING');
    // + issue 19's: JSONL / Keel uncompacted, the turn at 500 / at 50 events, the turn at 500 events;
    // + issue 18's: revert and fork; + issue 38's: the longest hold of a patch search and of a diff;
    // + issue 31's cap check per request.
    // + issue 34: the local model's speed through Keel and its second-request first token.
    // + issue 36: first request, disk, ended view sessions' storage, per-turn overhead (view, copy), the environment
    // block's status (view); the view's first request and disk; a continued one-turn-host turn's later requests; a
    // --commit direct turn's overhead.
    // + issue 35: the history import's rate, with the load it ran at.
    expect(report.targets).toHaveLength(
      6 + PATHOLOGICAL_STAGES.length + 3 + 2 + BOUNDED_KINDS.length + 1 + 1 + 2 + 8 + 2,
    );
    expect(report.targets.find((t) => t.name.startsWith('history import'))?.name).toMatch(
      /at load [\d.]+ → [\d.]+ on \d+ cores/,
    );
    for (const target of report.targets) expect(typeof target.pass).toBe('boolean');
  }, 120_000);

  it('leaves no scratch files behind, and writes the JSON report to --out', async () => {
    const out = join(outDir, 'report.json');
    const { code } = await runCli(tiny('--only', 'list', '--out', out));
    expect(code).toBe(0);
    expect(readdirSync(scratchParent)).toEqual([]);
    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
    expect(report.benches.map((b) => b.name)).toEqual(['list']);
  }, 120_000);

  it('prints a readable table with targets, and runs only the benchmarks named by --only', async () => {
    const { code, stdout } = await runCli(tiny('--only', 'search'));
    expect(code).toBe(0);
    expect(stdout).toContain('[search]');
    expect(stdout).not.toContain('[append]');
    expect(stdout).toMatch(/NOT RUN +durable single-event append p50/);
  });

  it('rejects an unknown flag or benchmark with a one-line error and exit code 2', async () => {
    const unknownFlag = await runCli(['--fast']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr.split('\n')[0]).toBe('bench: unknown option --fast');
    const unknownBench = await runCli(['--only', 'nope']);
    expect(unknownBench.code).toBe(2);
    expect(unknownBench.stderr).toContain('unknown benchmark nope');
    expect(parseArgs(['--quick'])).toMatchObject({ size: 'quick', json: false });
  });
});

describe('bench statistics', () => {
  it('takes nearest-rank percentiles and true medians', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 99)).toBe(10);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([3, 1, 2])).toBe(2);
  });

  it('states Keel’s advantage in the direction of the metric', () => {
    const latency = makeMetric('latency', 'ms', 'lower', { keel: 1, jsonl: 0.5, langgraph: 4 });
    expect(latency.keelAdvantage).toEqual({ jsonl: 0.5, langgraph: 4 });
    const throughput = makeMetric('throughput', 'events/s', 'higher', {
      keel: 1000,
      jsonl: 2000,
      langgraph: null,
    });
    expect(throughput.keelAdvantage).toEqual({ jsonl: 0.5, langgraph: null });
  });
});
