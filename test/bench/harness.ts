import { mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** The systems every benchmark runs side by side, in one process. */
export const PEERS = ['keel', 'jsonl', 'langgraph'] as const;
export type Peer = (typeof PEERS)[number];

/** Human names for the peers, used in the table and the README. */
export const PEER_LABELS: Record<Peer, string> = {
  keel: 'Keel store',
  jsonl: 'JSONL+fsync',
  langgraph: 'LangGraph SqliteSaver',
};

/** One measured quantity of a benchmark, with a value per peer (null: not applicable or skipped). */
export type Metric = {
  name: string;
  unit: string;
  better: 'lower' | 'higher';
  values: Partial<Record<Peer, number | null>>;
  /** How many times better Keel is than each peer (>1 Keel better, <1 peer better), direction-aware. */
  keelAdvantage: Partial<Record<Exclude<Peer, 'keel'>, number | null>>;
};

/** The outcome of one benchmark: its parameters, metrics and anything a reader must know to trust it. */
export type BenchResult = {
  name: string;
  title: string;
  params: Record<string, number | string | boolean>;
  metrics: Metric[];
  notes: string[];
  /** Peers that could not run, with the reason (e.g. Keel's store not built yet). */
  skipped: Partial<Record<Peer, string>>;
  durationMs: number;
};

/** Builds a metric and derives Keel's advantage over the other peers from its values. */
export function makeMetric(
  name: string,
  unit: string,
  better: 'lower' | 'higher',
  values: Partial<Record<Peer, number | null>>,
): Metric {
  const keelAdvantage: Metric['keelAdvantage'] = {};
  const keel = values.keel;
  for (const peer of PEERS) {
    if (peer === 'keel' || !(peer in values)) continue;
    const other = values[peer];
    keelAdvantage[peer] =
      keel == null || other == null || keel <= 0 || other <= 0
        ? null
        : round(better === 'lower' ? other / keel : keel / other, 3);
  }
  return { name, unit, better, values, keelAdvantage };
}

/** Summary statistics of a sample of durations or sizes; every field is in the sample's unit. */
export type Summary = {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
};

/** Nearest-rank percentile of an ascending-sorted sample (q in 0..100); NaN for an empty sample. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

/** Median of an unsorted sample (mean of the two middle values for an even count). */
export function median(sample: readonly number[]): number {
  if (sample.length === 0) return Number.NaN;
  const sorted = [...sample].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

/** Summarises a sample without mutating it. */
export function summarize(sample: readonly number[]): Summary {
  const sorted = [...sample].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? NaN,
    p50: median(sorted),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}

/** Rounds to a fixed number of decimals, keeping JSON output short and stable. */
export function round(value: number, decimals = 3): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/** Milliseconds elapsed while `fn` runs (awaited when it returns a promise). */
export async function timeMs(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Milliseconds elapsed while a synchronous `fn` runs. */
export function timeSyncMs(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/**
 * Bytes this process has passed to write(2)-family syscalls so far (Linux `wchar`), or null where
 * /proc/self/io does not exist. It counts every byte SQLite or a file append hands the kernel
 * (WAL frames, checkpointed pages, journal), which is what "bytes written" means for durability.
 */
export function readWrittenBytes(): number | null {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    const match = /^wchar:\s*(\d+)/m.exec(io);
    return match?.[1] === undefined ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/** True when /proc/self/io is readable, i.e. write-syscall byte counts are available. */
export function canCountWrittenBytes(): boolean {
  return readWrittenBytes() !== null;
}

const TMPFS_MAGIC = 0x01021994;

/** True when `path` is on tmpfs (fsync is free there). */
export function isOnTmpfs(path: string): boolean {
  try {
    return statfsSync(path).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/**
 * Scratch directories for one bench run. Durability measurements go under `parent` (a real disk);
 * big read-only fixtures may go under `fixtureParent` (tmpfs such as /dev/shm builds them without
 * fsync cost; they are read from the page cache either way). Everything handed out is removed by
 * `dispose()`, also on SIGINT/SIGTERM, so an interrupted run leaves nothing behind.
 */
export class Scratch {
  readonly root: string;
  readonly fixtureRoot: string;
  private disposed = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.dispose();
    process.kill(process.pid, signal);
  };

  constructor(parent: string, fixtureParent: string = parent) {
    mkdirSync(parent, { recursive: true });
    this.root = mkdtempSync(join(parent, 'run-'));
    if (fixtureParent === parent) {
      this.fixtureRoot = this.root;
    } else {
      mkdirSync(fixtureParent, { recursive: true });
      this.fixtureRoot = mkdtempSync(join(fixtureParent, 'keel-bench-fixtures-'));
    }
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  /** A fresh empty directory for measurements that must hit the real disk. */
  dir(name: string): string {
    return mkdtempSync(join(this.root, `${name}-`));
  }

  /** A fresh empty directory for a big fixture that is only read back (may be on tmpfs). */
  fixtureDir(name: string): string {
    return mkdtempSync(join(this.fixtureRoot, `${name}-`));
  }

  /** Removes a directory handed out here (fixtures are big; free them as soon as a bench ends). */
  remove(path: string): void {
    rmSync(path, { recursive: true, force: true });
  }

  /** True when the durable root is on tmpfs, where fsync costs nothing and durability numbers lie. */
  isTmpfs(): boolean {
    return isOnTmpfs(this.root);
  }

  /** True when fixtures are built on tmpfs. */
  fixturesOnTmpfs(): boolean {
    return isOnTmpfs(this.fixtureRoot);
  }

  /** Removes every directory of the run; safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
    rmSync(this.root, { recursive: true, force: true });
    rmSync(this.fixtureRoot, { recursive: true, force: true });
  }
}

/** Where progress goes: stderr in the CLI, so `--json` keeps stdout machine-readable. */
export type Progress = (message: string) => void;

/** Deterministic PRNG (mulberry32) so every run and every peer sees the same conversation. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
