import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRedactor } from '../../../main/sandbox/redact.js';
import { applyPatchTool } from '../../../main/tools/applyPatch.js';
import type { ToolContext } from '../../../main/tools/types.js';
import { writeFileTool } from '../../../main/tools/writeFile.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** Issue 38: the longest a call's preview (before any approval) may hold the event loop, in ms. */
export const BOUNDED_HOLD_MS = 100;

/** The two kinds of work a preview does on model-sized input. */
export const BOUNDED_KINDS = ['patch', 'diff'] as const;

type Case = { file: string; before: string; preview: (ctx: ToolContext) => Promise<unknown> };

/** Lines of `count` numbered words, each ending with a newline. */
const numbered = (count: number, word: string) =>
  Array.from({ length: count }, (_, i) => `${word} ${i}\n`).join('');

/** apply_patch shapes, each a patch of about `bytes` against a file that makes its hunk search hardest. */
function patchCases(bytes: number): Record<string, Case> {
  const wrap = (lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
  const update = (file: string, lines: string[]) => (ctx: ToolContext) =>
    applyPatchTool.preview({ input: wrap([`*** Update File: ${file}`, ...lines]) }, ctx);
  const lines = Math.floor(bytes / 3);
  const hunks = Math.floor(bytes / 40);
  const distinct = numbered(hunks * 2, 'line');
  return {
    'repeated lines, hunk not in the file': {
      file: 'same.txt',
      before: 'a\n'.repeat(lines * 2),
      preview: update('same.txt', ['@@', ...Array<string>(lines).fill(' a'), '-missing']),
    },
    'repeated lines, hunk at the end': {
      file: 'end.txt',
      before: `${'a\n'.repeat(lines * 2)}b\n`,
      preview: update('end.txt', ['@@', ...Array<string>(lines).fill(' a'), '-b', '+c']),
    },
    'many hunks, trailing spaces differ': {
      file: 'drift.txt',
      before: distinct,
      preview: update(
        'drift.txt',
        Array.from({ length: hunks }, (_, i) => [`@@`, ` line ${2 * i} `, `-line ${2 * i + 1}`, '+x']).flat(),
      ),
    },
    'many hunks, typographic quotes': {
      file: 'quotes.txt',
      before: Array.from({ length: hunks * 2 }, (_, i) => `say \u2018${i}\u2019\n`).join(''),
      preview: update(
        'quotes.txt',
        Array.from({ length: hunks }, (_, i) => [
          `@@`,
          ` say '${2 * i}'`,
          `-say '${2 * i + 1}'`,
          '+x',
        ]).flat(),
      ),
    },
  };
}

/** write_file shapes: new content of about `bytes` replacing a file of the same size. */
function diffCases(bytes: number): Record<string, Case> {
  const write = (file: string, content: string) => (ctx: ToolContext) =>
    writeFileTool.preview({ path: file, content }, ctx);
  const lines = Math.floor(bytes / 12);
  const old = numbered(lines, 'line');
  const every20 = old
    .split('\n')
    .map((line, i) => (i % 20 === 0 && line !== '' ? `${line} changed` : line))
    .join('\n');
  const long = 'x'.repeat(bytes);
  return {
    'every line rewritten': {
      file: 'rewrite.txt',
      before: old,
      preview: write('rewrite.txt', numbered(lines, 'other')),
    },
    'every 20th line changed': {
      file: 'scattered.txt',
      before: old,
      preview: write('scattered.txt', every20),
    },
    'lines reversed': {
      file: 'reversed.txt',
      before: old,
      preview: write('reversed.txt', `${old.trimEnd().split('\n').reverse().join('\n')}\n`),
    },
    'one long line, one character changed': {
      file: 'long.txt',
      before: long,
      preview: write('long.txt', `${long.slice(0, bytes / 2)}y${long.slice(bytes / 2 + 1)}`),
    },
  };
}

/** Runs `work` with a 1 ms timer beside it: its duration and the longest the event loop was held (ms). */
async function measure(work: () => Promise<unknown>): Promise<{ ms: number; holdMs: number }> {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 1);
  const started = performance.now();
  try {
    await work();
    tick();
    return { ms: performance.now() - started, holdMs: longest };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Issue 38: what a call's preview computes before anyone approves it (apply_patch's hunk search and diff,
 * write_file's diff), on the shapes that made it quadratic: median ms per MB of patch or of new content,
 * and the longest the event loop was held (target BOUNDED_HOLD_MS).
 */
export const boundedBench: Bench = {
  name: 'bounded',
  title: 'Work before approval: apply_patch search and approval diffs (ms per MB, longest hold)',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const bytes = sizes.pathologicalBytes;
    const megabytes = bytes / (1024 * 1024);
    const workspace = realpathSync(scratch.dir('bounded'));
    const sessionDir = join(workspace, '.session');
    mkdirSync(join(sessionDir, 'artifacts'), { recursive: true });
    const ctx: ToolContext = {
      workspace,
      sessionDir,
      artifactsDir: join(sessionDir, 'artifacts'),
      idempotencyKey: 'ev1-bench',
      redactor: createRedactor({ env: {} }),
      sandbox: { kind: 'none', reason: 'bench', version: null, executable: null, socat: null },
      protectedGlobs: [],
    };
    const metrics = [];
    for (const kind of BOUNDED_KINDS) {
      let worstPerMb = 0;
      let worstHold = 0;
      for (const [shape, test] of Object.entries(kind === 'patch' ? patchCases(bytes) : diffCases(bytes))) {
        writeFileSync(join(workspace, test.file), test.before);
        // One untimed run first: the first call of a shape compiles its code paths.
        await test.preview(ctx);
        const samples: number[] = [];
        let hold = 0;
        for (let run = 0; run < sizes.pathologicalRuns; run += 1) {
          const { ms, holdMs } = await measure(() => test.preview(ctx));
          samples.push(ms);
          hold = Math.max(hold, holdMs);
        }
        const perMb = Math.max(round(median(samples) / megabytes, 3), 0.001);
        worstPerMb = Math.max(worstPerMb, perMb);
        worstHold = Math.max(worstHold, hold);
        metrics.push(makeMetric(`${kind}: ${shape}`, 'ms/MB', 'lower', { keel: perMb }));
        metrics.push(makeMetric(`${kind}: ${shape}: longest hold`, 'ms', 'lower', { keel: round(hold, 1) }));
        progress(`bounded: ${kind}: ${shape}`);
      }
      metrics.push(makeMetric(`${kind}: worst shape`, 'ms/MB', 'lower', { keel: worstPerMb }));
      metrics.push(makeMetric(`${kind}: longest hold`, 'ms', 'lower', { keel: round(worstHold, 1) }));
    }
    scratch.remove(workspace);
    return {
      name: this.name,
      title: this.title,
      params: { bytes, runs: sizes.pathologicalRuns, targetHoldMs: BOUNDED_HOLD_MS },
      metrics,
      notes: [
        'Each preview as the approval gate calls it (tool.preview), on a file shaped for the worst case, after one untimed run; median per MB, longest event-loop hold over the runs.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
