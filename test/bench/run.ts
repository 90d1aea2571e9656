import { accessSync, constants, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { appendLatencyBench } from './benches/appendLatency.js';
import { appendThroughputBench } from './benches/appendThroughput.js';
import { boundedBench } from './benches/bounded.js';
import { capCheckBench } from './benches/capCheck.js';
import { bytesPerStepBench } from './benches/bytesPerStep.js';
import { cliStartBench } from './benches/cliStart.js';
import { localBench } from './benches/local.js';
import { bigProjectBench } from './benches/bigProject.js';
import type { Bench } from './benches/context.js';
import { BENCH_SYSTEM_PROMPT } from './benches/context.js';
import { ftsSearchBench } from './benches/ftsSearch.js';
import { historyBench } from './benches/history.js';
import { historyImportBench } from './benches/historyImport.js';
import { listSessionsBench } from './benches/listSessions.js';
import { mcpBench } from './benches/mcp.js';
import { openProjectBench } from './benches/openProject.js';
import { pathologicalBench } from './benches/pathological.js';
import { reasoningBench } from './benches/reasoning.js';
import { runnerBench } from './benches/runner.js';
import { turnBench } from './benches/turn.js';
import type { BenchResult, Progress } from './harness.js';
import { Scratch, isOnTmpfs, round } from './harness.js';
import type { BenchReport } from './report.js';
import { sessionsBench } from './sessions.bench.js';
import { describeMachine, evaluateTargets, formatTable } from './report.js';
import { SIZE_PROFILES } from './sizes.js';
import type { SizeName } from './sizes.js';

/** Every benchmark, in the order they run and print. */
export const BENCHES: readonly Bench[] = [
  appendLatencyBench,
  bytesPerStepBench,
  appendThroughputBench,
  openProjectBench,
  listSessionsBench,
  ftsSearchBench,
  turnBench,
  runnerBench,
  sessionsBench,
  pathologicalBench,
  boundedBench,
  capCheckBench,
  reasoningBench,
  mcpBench,
  historyBench,
  historyImportBench,
  cliStartBench,
  localBench,
  // Issue 36: big projects.
  bigProjectBench,
];

/** Parsed command line of the bench runner. */
export type RunOptions = {
  json: boolean;
  only: string[] | undefined;
  size: SizeName;
  /** Parent of the run's scratch directory (default `.bench-tmp/` in the working directory). */
  scratchParent: string;
  /** Parent of big read-only fixtures (default /dev/shm when it is tmpfs, else scratchParent). */
  fixtureParent: string | undefined;
  /** Also write the JSON report to this file (npm prints its own banner on stdout unless run with -s). */
  outFile: string | undefined;
};

const USAGE = `usage: npm run -s bench -- [--json] [--out <file>] [--quick | --size full|quick|tiny] [--only <name>[,...]]
  --json         print the report as JSON on stdout (progress goes to stderr; -s keeps npm's banner off stdout)
  --out <file>   also write the JSON report to this file
  --quick        smaller workloads (same as --size quick), for a fast look
  --size <name>  full (default), quick or tiny
  --only <name>  run only these benchmarks: ${BENCHES.map((b) => b.name).join(', ')}
  --tmp <dir>    where durability is measured (default .bench-tmp/; must be a real disk, not tmpfs)
  --fixture-tmp <dir>  where the big list/search fixtures are built (default /dev/shm if tmpfs, else --tmp)`;

/** Parses argv (without node and script); returns the options, `help`, or a one-line error. */
export function parseArgs(argv: readonly string[]): RunOptions | { help: true } | { error: string } {
  const options: RunOptions = {
    json: false,
    only: undefined,
    size: 'full',
    scratchParent: resolve('.bench-tmp'),
    fixtureParent: undefined,
    outFile: undefined,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = (): string | undefined => {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) return undefined;
      i += 1;
      return next;
    };
    switch (arg) {
      case '--json':
        options.json = true;
        break;
      case '--quick':
        options.size = 'quick';
        break;
      case '--size': {
        const size = value();
        if (size === undefined || !(size in SIZE_PROFILES))
          return { error: '--size takes full, quick or tiny' };
        options.size = size as SizeName;
        break;
      }
      case '--only': {
        const names = value()
          ?.split(',')
          .filter((n) => n !== '');
        if (names === undefined || names.length === 0) return { error: '--only takes a benchmark name' };
        const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
        if (unknown.length > 0) {
          return {
            error: `unknown benchmark ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`,
          };
        }
        options.only = [...(options.only ?? []), ...names];
        break;
      }
      case '--tmp': {
        const dir = value();
        if (dir === undefined) return { error: '--tmp takes a directory' };
        options.scratchParent = resolve(dir);
        break;
      }
      case '--fixture-tmp': {
        const dir = value();
        if (dir === undefined) return { error: '--fixture-tmp takes a directory' };
        options.fixtureParent = resolve(dir);
        break;
      }
      case '--out': {
        const file = value();
        if (file === undefined) return { error: '--out takes a file name' };
        options.outFile = resolve(file);
        break;
      }
      case '--help':
      case '-h':
        return { help: true };
      default:
        return { error: `unknown option ${arg}` };
    }
  }
  return options;
}

/**
 * Runs the selected benchmarks one after another in this process, in a scratch directory that is
 * removed afterwards (also when a benchmark throws), and returns the report.
 */
export async function runBenches(options: RunOptions, progress: Progress): Promise<BenchReport> {
  const started = performance.now();
  const scratch = new Scratch(
    options.scratchParent,
    options.fixtureParent ?? defaultFixtureParent(options.scratchParent),
  );
  const benches: BenchResult[] = [];
  const failures: BenchReport['failures'] = [];
  const selected = BENCHES.filter((b) => options.only === undefined || options.only.includes(b.name));
  try {
    const machine = describeMachine(scratch.isTmpfs(), scratch.fixturesOnTmpfs());
    for (const bench of selected) {
      progress(`running ${bench.name}: ${bench.title}`);
      try {
        benches.push(
          await bench.run({
            sizes: SIZE_PROFILES[options.size],
            scratch,
            progress,
            system: BENCH_SYSTEM_PROMPT,
          }),
        );
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        failures.push({ bench: bench.name, message });
        progress(`${bench.name} failed: ${message}`);
      }
    }
    const report: BenchReport = {
      schema: 'keel-bench/1',
      date: new Date().toISOString(),
      command: ['npm run bench --', ...commandFlags(options)].join(' ').replace(/ --$/, ''),
      size: options.size,
      machine,
      durationMs: round(performance.now() - started, 0),
      benches,
      targets: evaluateTargets(benches),
      failures,
    };
    return report;
  } finally {
    scratch.dispose();
  }
}

/** /dev/shm when it is a writable tmpfs (fixtures build without fsync cost), else the scratch parent. */
function defaultFixtureParent(scratchParent: string): string {
  const shm = '/dev/shm';
  try {
    accessSync(shm, constants.W_OK);
    return isOnTmpfs(shm) ? shm : scratchParent;
  } catch {
    return scratchParent;
  }
}

function commandFlags(options: RunOptions): string[] {
  const flags: string[] = [];
  if (options.json) flags.push('--json');
  if (options.size !== 'full') flags.push('--size', options.size);
  if (options.only) flags.push('--only', options.only.join(','));
  return flags;
}

/** Where the runner writes: stdout gets only the report, stderr gets progress and errors. */
export type RunnerIo = { stdout: (text: string) => void; stderr: (text: string) => void };

/** The CLI: parses argv, runs, prints. Returns the exit code (a missed target is not a failure). */
export async function main(argv: readonly string[], io: RunnerIo): Promise<number> {
  const parsed = parseArgs(argv);
  if ('help' in parsed) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  if ('error' in parsed) {
    io.stderr(`bench: ${parsed.error}\n${USAGE}\n`);
    return 2;
  }
  const report = await runBenches(parsed, (message) => io.stderr(`[bench] ${message}\n`));
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (parsed.outFile !== undefined) writeFileSync(parsed.outFile, json);
  io.stdout(parsed.json ? json : `${formatTable(report)}\n`);
  return report.failures.length === 0 ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  process.exitCode = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
