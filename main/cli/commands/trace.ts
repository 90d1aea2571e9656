import type { Command } from 'commander';
import type { TraceEntry } from '../../core/log/sessionLog.js';
import type { CliContext } from '../context.js';
import { withSessionLog } from '../session.js';

type UsageDetail = {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  costUsd?: number | null;
};

/** Sums the usage records of trace entries. */
export function totalsOf(entries: readonly TraceEntry[]) {
  const totals = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    costKnown: true,
  };
  for (const entry of entries) {
    if (entry.stage !== 'usage') continue;
    const usage = (entry.detail ?? {}) as UsageDetail;
    totals.inputTokens += usage.inputTokens ?? 0;
    totals.outputTokens += usage.outputTokens ?? 0;
    totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
    totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    if (typeof usage.costUsd === 'number') totals.costUsd += usage.costUsd;
    else totals.costKnown = false;
  }
  return totals;
}

/** `keel trace SESSION [--json]`: each turn's stages with durations, and tokens with cost. */
export function registerTrace(program: Command, context: CliContext): void {
  program
    .command('trace')
    .description(
      "show each turn's stages (projection, request, first token, stream, tools, retries) and tokens with cost",
    )
    .argument('<session>', 'session id')
    .option('--json', 'print the trace records as JSON')
    .action((session: string, options: { json?: boolean }) => {
      const entries = withSessionLog(context.home(), session, (log) => log.readTrace());
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ entries, totals: totalsOf(entries) }, null, 2)}\n`);
        return;
      }
      const turns = new Map<number, TraceEntry[]>();
      for (const entry of entries) turns.set(entry.turn, [...(turns.get(entry.turn) ?? []), entry]);
      for (const [turn, list] of turns) {
        const totals = totalsOf(list);
        context.io.stdout(
          `turn ${turn}: ${totals.inputTokens} in, ${totals.outputTokens} out, ${totals.cacheReadTokens} cache read, ${totals.cacheWriteTokens} cache write${totals.costKnown ? `, $${totals.costUsd.toFixed(4)}` : ''}\n`,
        );
        for (const entry of list) {
          if (entry.stage === 'usage') continue;
          const duration =
            entry.durationMs === undefined ? '' : `${entry.durationMs.toFixed(0).padStart(7)} ms`;
          const detail = entry.detail === undefined ? '' : `  ${JSON.stringify(entry.detail)}`;
          context.io.stdout(`  ${entry.stage.padEnd(24)}${duration}${detail}\n`);
        }
      }
      if (turns.size === 0) context.io.stdout('no trace records yet\n');
    });
}
