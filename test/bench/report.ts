import { cpus, totalmem } from 'node:os';
import { BOUNDED_HOLD_MS, BOUNDED_KINDS } from './benches/bounded.js';
import { CAP_CHECK_TARGET_MS } from './benches/capCheck.js';
import { LOCAL_SPEED_TARGET, LOCAL_TTFT_TARGET } from './benches/local.js';
import { PATHOLOGICAL_MS_PER_MB, PATHOLOGICAL_STAGES } from './benches/pathological.js';
import { FORK_TARGET_MS, REVERT_TARGET_MS } from './benches/history.js';
import { IMPORT_TARGET_PER_SECOND } from './benches/historyImport.js';
import type { BenchResult, Metric, Peer } from './harness.js';
import { PEERS, PEER_LABELS, round } from './harness.js';
import type { SizeName } from './sizes.js';

/** A target from the issue, checked against the run; a miss is reported, never a failed exit. */
export type TargetResult = {
  name: string;
  target: string;
  actual: number | null;
  unit: string;
  /** null when the benchmark that measures it did not run (or Keel was skipped). */
  pass: boolean | null;
};

/** The machine a run happened on: quote it next to every number. */
export type MachineInfo = {
  node: string;
  platform: string;
  arch: string;
  cpus: number;
  cpuModel: string;
  totalMemGiB: number;
  scratchOnTmpfs: boolean;
  /** The list and search fixtures were built on tmpfs (reads come from the page cache either way). */
  fixturesOnTmpfs: boolean;
};

/** The whole machine-readable output of `npm run bench -- --json`. */
export type BenchReport = {
  schema: 'keel-bench/1';
  date: string;
  command: string;
  size: SizeName;
  machine: MachineInfo;
  durationMs: number;
  benches: BenchResult[];
  targets: TargetResult[];
  /** Benchmarks that threw: the run went on without them, and the exit code is 1. */
  failures: { bench: string; message: string }[];
};

/** Describes this machine (CPU count and model, memory, Node) for the report. */
export function describeMachine(scratchOnTmpfs: boolean, fixturesOnTmpfs: boolean): MachineInfo {
  const list = cpus();
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    totalMemGiB: round(totalmem() / 2 ** 30, 1),
    scratchOnTmpfs,
    fixturesOnTmpfs,
  };
}

function findMetric(benches: readonly BenchResult[], bench: string, prefix: string): Metric | undefined {
  return benches.find((b) => b.name === bench)?.metrics.find((m) => m.name.startsWith(prefix));
}

/** Checks the three targets against the results that ran. */
export function evaluateTargets(benches: readonly BenchResult[]): TargetResult[] {
  const projectBench = benches.find((b) => b.name === 'project');
  const projection = projectBench?.metrics.find(
    (m) => m.name.startsWith('open + project') && m.name.includes('compacted'),
  );
  const events = projectBench?.params.events ?? 100_000;
  const atStep = benches.find((b) => b.name === 'bytes')?.params.atStep ?? 200;
  const projectionMs = projection?.values.keel ?? null;
  const appendP50Metric = findMetric(benches, 'append', 'append latency p50');
  const appendP50 = appendP50Metric?.values.keel ?? null;
  const floorP50 = appendP50Metric?.values.jsonl ?? null;
  const appendOverFloor =
    appendP50 === null || floorP50 === null || floorP50 <= 0 ? null : round(appendP50 / floorP50, 2);
  const overPayload = findMetric(benches, 'bytes', 'bytes written / payload')?.values.keel ?? null;
  const bytes = findMetric(benches, 'bytes', 'bytes written per step');
  const bytesRatio = bytes?.keelAdvantage.langgraph ?? null;
  const check = (value: number | null, ok: (v: number) => boolean) => (value === null ? null : ok(value));
  const stable = findMetric(
    benches,
    'reasoning',
    'requests whose prefix is the previous request, byte for byte',
  );
  return [
    {
      name: `open + project a compacted ${events}-event session (median)`,
      target: '< 20 ms',
      actual: projectionMs,
      unit: 'ms',
      pass: check(projectionMs, (v) => v < 20),
    },
    ...projectionTargets(benches),
    {
      name: 'durable single-event append p50 (synchronous=FULL)',
      target: '< 1 ms',
      actual: appendP50,
      unit: 'ms',
      pass: check(appendP50, (v) => v < 1),
    },
    {
      name: 'durable single-event append p50, Keel / JSON-lines+fsync floor (side by side)',
      target: '<= 1.25x',
      actual: appendOverFloor,
      unit: 'x',
      pass: check(appendOverFloor, (v) => v <= 1.25),
    },
    {
      name: `bytes written per step at step ${atStep}, LangGraph / Keel (write syscalls)`,
      target: '>= 100x',
      actual: bytesRatio,
      unit: 'x',
      pass: check(bytesRatio, (v) => v >= 100),
    },
    {
      name: `bytes written per step at step ${atStep}, Keel / its payload (write syscalls, synchronous=FULL)`,
      target: '<= 4x',
      actual: overPayload,
      unit: 'x',
      pass: check(overPayload, (v) => v <= 4),
    },
    {
      name: 'reasoning replayed: requests whose prefix is the previous request, byte for byte',
      target: '= 1',
      actual: stable?.values.keel ?? null,
      unit: 'ratio',
      pass: check(stable?.values.keel ?? null, (v) => v === 1),
    },
    ...historyTargets(benches),
    ...PATHOLOGICAL_STAGES.map((stage) => {
      const worst = findMetric(benches, 'pathological', `${stage}: worst shape`)?.values.keel ?? null;
      return {
        name: `${stage} of pathological text, worst shape`,
        target: `< ${PATHOLOGICAL_MS_PER_MB} ms/MB`,
        actual: worst,
        unit: 'ms/MB',
        pass: check(worst, (v) => v < PATHOLOGICAL_MS_PER_MB),
      };
    }),
    ...BOUNDED_KINDS.map((kind) => {
      const hold = findMetric(benches, 'bounded', `${kind}: longest hold`)?.values.keel ?? null;
      return {
        name: `${kind === 'patch' ? "apply_patch's hunk search" : 'an approval diff'} before approval, longest event-loop hold, worst shape`,
        target: `< ${BOUNDED_HOLD_MS} ms`,
        actual: hold,
        unit: 'ms',
        pass: check(hold, (v) => v < BOUNDED_HOLD_MS),
      };
    }),
    capCheckTarget(benches),
    importTarget(benches),
    ...localTargets(benches),
    ...bigProjectTargets(benches),
  ];
}

/** Issue 34: the local model's generation speed through Keel, and the second request's first token with reuse. */
function localTargets(benches: readonly BenchResult[]): TargetResult[] {
  const speed =
    findMetric(benches, 'local', 'generation speed, Keel / node-llama-cpp alone')?.values.keel ?? null;
  const ttft =
    findMetric(benches, 'local', "second request's time to first token, reused / not reused")?.values.keel ??
    null;
  return [
    {
      name: 'local model: tokens per second through Keel / node-llama-cpp alone (tiny GGUF)',
      target: `>= ${LOCAL_SPEED_TARGET}x`,
      actual: speed,
      unit: 'x',
      pass: speed === null ? null : speed >= LOCAL_SPEED_TARGET,
    },
    {
      name: "local model: a turn's second request, time to first token with prefix reuse / without",
      target: `<= ${LOCAL_TTFT_TARGET}x`,
      actual: ttft,
      unit: 'x',
      pass: ttft === null ? null : ttft <= LOCAL_TTFT_TARGET,
    },
  ];
}

/** Issue 36's targets, on the large generated project (80,000 files at full size). */
function bigProjectTargets(benches: readonly BenchResult[]): TargetResult[] {
  const bench = benches.find((b) => b.name === 'bigproject');
  if (!bench) return [];
  const large = Number(bench.params.large);
  const small = Number(bench.params.small);
  const value = (prefix: string) => findMetric(benches, 'bigproject', prefix)?.values.keel ?? null;
  const ratio = (a: number | null, b: number | null) =>
    a === null || b === null || b <= 0 ? null : round(a / b, 2);
  const first = ratio(
    value(`first request, new session, ${large} files, checkout`),
    value(`first request, new session, ${large} files, --commit direct`),
  );
  const disk = value(`disk added by a one-turn 10-file session besides its log, ${large} files`);
  const viewFirst = ratio(
    value(`first request, new session, ${large} files, view`),
    value(`first request, new session, ${large} files, --commit direct`),
  );
  const viewDisk = value(`disk added by a one-turn 10-file view session besides its log, ${large} files`);
  const storage = value(`checkout storage of ${Number(bench.params.sessions)} ended view sessions`);
  const turn = ratio(
    value(`per-turn overhead (reset + 10-file auto commit), ${large} files, view`),
    value(`per-turn overhead (reset + 10-file auto commit), ${small} files, view`),
  );
  const status = ratio(
    value(`environment block git status after 10 edits, ${large} files, view`),
    value(`environment block git status after 10 edits, ${small} files, view`),
  );
  const continued = ratio(
    value(`later request of a continued keel run --session turn, ${large} files, view`),
    value(`later request of a continued keel run --session turn, ${small} files, view`),
  );
  const directTurn = ratio(
    value(`per-turn overhead (segment start + 10 edits + end and record), ${large} files, --commit direct`),
    value(`per-turn overhead (segment start + 10 edits + end and record), ${small} files, --commit direct`),
  );
  const copyTurn = ratio(
    value(`per-turn overhead (reset + 10-file auto commit), ${large} files`),
    value(`per-turn overhead (reset + 10-file auto commit), ${small} files`),
  );
  return [
    {
      name: `first request of a new session with a checkout / --commit direct, ${large} files`,
      target: '≤ 1.3x',
      actual: first,
      unit: 'ratio',
      pass: first === null ? null : first <= 1.3,
    },
    {
      name: `first request of a new session with a copy-on-write view / --commit direct, ${large} files`,
      target: '≤ 1.3x',
      actual: viewFirst,
      unit: 'ratio',
      pass: viewFirst === null ? null : viewFirst <= 1.3,
    },
    {
      name: `disk added by a one-turn 10-file view session besides its log, ${large} files`,
      target: '< 1 MB',
      actual: viewDisk,
      unit: 'MB',
      pass: viewDisk === null ? null : viewDisk < 1,
    },
    {
      name: `disk added by a one-turn 10-file session besides its log, ${large} files`,
      target: '< 1 MB',
      actual: disk,
      unit: 'MB',
      pass: disk === null ? null : disk < 1,
    },
    {
      name: `checkout storage of ${Number(bench.params.sessions)} ended view sessions, ${large} files, default bound`,
      target: '< 100 MB',
      actual: storage,
      unit: 'MB',
      pass: storage === null ? null : storage < 100,
    },
    {
      name: `per-turn overhead with a view at ${large} files / at ${small} files`,
      target: '≤ 1.5x',
      actual: turn,
      unit: 'ratio',
      pass: turn === null ? null : turn <= 1.5,
    },
    {
      name: `environment block's git status with a view at ${large} files / at ${small} files`,
      target: '≤ 1.5x',
      actual: status,
      unit: 'ratio',
      pass: status === null ? null : status <= 1.5,
    },
    {
      name: `later request of a continued one-turn-host turn with a view at ${large} files / at ${small} files`,
      target: '≤ 1.5x',
      actual: continued,
      unit: 'ratio',
      pass: continued === null ? null : continued <= 1.5,
    },
    {
      name: `per-turn overhead of --commit direct (its change recorded) at ${large} files / at ${small} files`,
      target: '≤ 1.5x',
      actual: directTurn,
      unit: 'ratio',
      pass: directTurn === null ? null : directTurn <= 1.5,
    },
    {
      name: `per-turn overhead with a full copy at ${large} files / at ${small} files`,
      target: '≤ 1.5x',
      actual: copyTurn,
      unit: 'ratio',
      pass: copyTurn === null ? null : copyTurn <= 1.5,
    },
  ];
}

/**
 * Issue 35: 1,000 sessions with 1M messages imported in under a minute, as a rate (the smaller sizes are held to
 * it too), named with the load average at the import's start and end: on a shared machine a time needs it.
 */
function importTarget(benches: readonly BenchResult[]): TargetResult {
  const bench = benches.find((b) => b.name === 'import');
  const actual = findMetric(benches, 'import', 'messages per second')?.values.keel ?? null;
  const p = bench?.params;
  const what = p
    ? `${p.sessions} sessions, ${p.messages} messages, at load ${p.loadStart} → ${p.loadEnd} on ${p.cores} cores`
    : 'not run';
  return {
    name: `history import, messages per second (1M in < 60 s): ${what}`,
    target: `>= ${IMPORT_TARGET_PER_SECOND}`,
    actual,
    unit: 'msg/s',
    pass: actual === null ? null : actual >= IMPORT_TARGET_PER_SECOND,
  };
}

/** Issue 31: the spend-cap check, input estimate included, per model request. */
function capCheckTarget(benches: readonly BenchResult[]): TargetResult {
  const metric = findMetric(benches, 'capcheck', 'per request, with the input estimate over 400 messages');
  const actual = metric?.values.keel ?? null;
  return {
    name: 'spend cap check per model request (input estimate included)',
    target: `< ${CAP_CHECK_TARGET_MS} ms`,
    actual,
    unit: 'ms',
    pass: actual === null ? null : actual < CAP_CHECK_TARGET_MS,
  };
}

/** Issue 18's targets: revert of a 10-file turn in a 10k-file git project, fork of a 10k-event session. */
function historyTargets(benches: readonly BenchResult[]): TargetResult[] {
  const revert = findMetric(benches, 'history', 'revert of a')?.values.keel ?? null;
  const fork = findMetric(benches, 'history', 'fork of a')?.values.keel ?? null;
  const check = (value: number | null, ok: (v: number) => boolean) => (value === null ? null : ok(value));
  return [
    {
      name: 'revert of a 10-file turn in a 10k-file git project (median)',
      target: `< ${REVERT_TARGET_MS} ms`,
      actual: revert,
      unit: 'ms',
      pass: check(revert, (v) => v < REVERT_TARGET_MS),
    },
    {
      name: 'fork of a 10k-event session (median)',
      target: `< ${FORK_TARGET_MS} ms`,
      actual: fork,
      unit: 'ms',
      pass: check(fork, (v) => v < FORK_TARGET_MS),
    },
  ];
}

function formatNumber(value: number | null | undefined, unit: string): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (unit === 'B') {
    if (value >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(2)} MiB`;
    if (value >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
    return `${value} B`;
  }
  if (unit === 'events/s') return `${Math.round(value).toLocaleString('en-US')}/s`;
  if (unit === 'ms')
    return value >= 100
      ? `${value.toFixed(0)} ms`
      : value >= 1
        ? `${value.toFixed(2)} ms`
        : `${value.toFixed(3)} ms`;
  return `${value} ${unit}`;
}

function formatAdvantage(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value >= 10 ? `${value.toFixed(0)}x` : `${value.toFixed(2)}x`;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** Renders the report as a plain-text table per benchmark plus the targets, for people. */
export function formatTable(report: BenchReport): string {
  const lines: string[] = [];
  const m = report.machine;
  lines.push(`Keel benchmarks — ${report.date} — size ${report.size}`);
  lines.push(`${m.cpus} cores (${m.cpuModel}), ${m.totalMemGiB} GiB, Node ${m.node} ${m.platform}-${m.arch}`);
  if (m.scratchOnTmpfs)
    lines.push(
      'WARNING: scratch directory is on tmpfs: fsync is free there, durability numbers are meaningless.',
    );
  lines.push(
    '"Keel vs X" = how many times better Keel is than X on that row (direction-aware; <1x means X is better).',
  );
  const headers = ['metric', ...PEERS.map((p) => PEER_LABELS[p]), 'Keel vs JSONL', 'Keel vs LangGraph'];
  for (const bench of report.benches) {
    lines.push('');
    lines.push(`## ${bench.title} [${bench.name}] (${(bench.durationMs / 1000).toFixed(1)} s)`);
    const rows = bench.metrics.map((metric) => [
      metric.name,
      ...PEERS.map((peer: Peer) => formatNumber(metric.values[peer], metric.unit)),
      formatAdvantage(metric.keelAdvantage.jsonl),
      formatAdvantage(metric.keelAdvantage.langgraph),
    ]);
    const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    lines.push(headers.map((h, i) => pad(h, widths[i] ?? 0, i > 0)).join('  '));
    for (const row of rows) lines.push(row.map((c, i) => pad(c, widths[i] ?? 0, i > 0)).join('  '));
    for (const [peer, reason] of Object.entries(bench.skipped))
      lines.push(`  ${PEER_LABELS[peer as Peer]}: ${reason}`);
    for (const note of bench.notes) lines.push(`  - ${note}`);
  }
  lines.push('');
  lines.push('## Targets');
  for (const t of report.targets) {
    const verdict = t.pass === null ? 'NOT RUN' : t.pass ? 'PASS' : 'FAIL';
    const actual = t.actual === null ? '—' : `${t.actual} ${t.unit}`;
    lines.push(`${pad(verdict, 7)}  ${t.name}: ${actual} (target ${t.target})`);
  }
  for (const failure of report.failures) lines.push(`FAILED  ${failure.bench}: ${failure.message}`);
  lines.push('');
  lines.push(
    `Total ${(report.durationMs / 1000).toFixed(1)} s. These machines are noisy: quote medians and ratios.`,
  );
  return lines.join('\n');
}

/**
 * Issue 19's projection targets: an uncompacted session opens and projects at least 2x faster than the JSONL
 * floor; a turn through streamHarness at every size measured (10x the smallest or more) costs at most 1.5x
 * what it costs at the smallest, and under 10 ms at the largest size up to 10k events (on a quiet machine).
 */
function projectionTargets(benches: readonly BenchResult[]): TargetResult[] {
  const project = benches.find((b) => b.name === 'project');
  const plain = project?.metrics.find(
    (m) => m.name.startsWith('open + project') && m.name.includes('no compaction'),
  );
  const events = project?.params.events ?? 100_000;
  const viaApi = (benches.find((b) => b.name === 'turn')?.metrics ?? [])
    .filter((m) => m.name.includes('streamHarness'))
    .map((m) => ({ events: Number(/at (\d+) events/.exec(m.name)?.[1]), ms: m.values.keel ?? null }))
    .filter((row) => Number.isFinite(row.events))
    .sort((a, b) => a.events - b.events);
  const smallest = viaApi[0];
  const check = (value: number | null, ok: (v: number) => boolean) => ({
    actual: value,
    pass: value === null ? null : ok(value),
  });
  const ratios = viaApi
    .filter((row) => smallest !== undefined && row.events >= 10 * smallest.events)
    .map((row) => {
      const ratio = row.ms !== null && smallest?.ms ? Math.round((row.ms / smallest.ms) * 100) / 100 : null;
      return {
        name: `turn through streamHarness at ${row.events} events / at ${smallest?.events} events`,
        target: '<= 1.5x',
        unit: 'x',
        ...check(ratio, (v) => v <= 1.5),
      };
    });
  const absolute = viaApi.filter((row) => row.events <= 10_000).at(-1);
  return [
    {
      name: `open + project an uncompacted ${events}-event session, JSONL / Keel`,
      target: '>= 2x',
      unit: 'x',
      ...check(plain?.keelAdvantage.jsonl ?? null, (v) => v >= 2),
    },
    ...ratios,
    {
      name: `turn through streamHarness at ${absolute?.events ?? 10_000} events (quiet machine)`,
      target: '< 10 ms',
      unit: 'ms',
      ...check(absolute?.ms ?? null, (v) => v < 10),
    },
  ];
}
