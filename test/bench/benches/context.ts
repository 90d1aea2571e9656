import type { BenchResult, Progress, Scratch } from '../harness.js';
import type { Sizes } from '../sizes.js';

/** What every benchmark gets from the runner. */
export type BenchContext = {
  sizes: Sizes;
  scratch: Scratch;
  progress: Progress;
  /** The system prompt every projection uses (fixed: it heads the cached prefix). */
  system: string;
};

/** A named benchmark; `--only <name>` selects it. */
export type Bench = {
  name: string;
  title: string;
  run(context: BenchContext): BenchResult | Promise<BenchResult>;
};

/** The system prompt of every bench projection. */
export const BENCH_SYSTEM_PROMPT =
  'You are a coding agent working in a sandboxed workspace. Use the tools to inspect and edit files.';
