import type { Command } from 'commander';
import type { CostReport, Spent } from '../../common/costSchema.js';
import { formatUsd, sessionCost, setBudget, type BudgetChange } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

/** A cap flag's value: a number of 0 or more, or `none` to remove the cap. */
function parseCap(value: string, flag: string, integer: boolean): number | null {
  if (value === 'none') return null;
  const number = Number(value.replace(/^\$/, ''));
  if (value.trim() === '' || !Number.isFinite(number) || number < 0 || (integer && !Number.isInteger(number)))
    throw new CliError(
      `${flag} takes ${integer ? 'a whole number of tokens' : 'an amount in USD'} of 0 or more, or none (got "${value}")`,
    );
  return number;
}

/** A new session's cap from `keel run`'s flags; undefined when neither is given. */
export function budgetFromFlags(options: {
  budgetUsd?: string;
  budgetTokens?: string;
}): { usd?: number; tokens?: number } | undefined {
  if (options.budgetUsd === undefined && options.budgetTokens === undefined) return undefined;
  const usd =
    options.budgetUsd === undefined ? undefined : parseCap(options.budgetUsd, '--budget-usd', false);
  const tokens =
    options.budgetTokens === undefined ? undefined : parseCap(options.budgetTokens, '--budget-tokens', true);
  return { ...(usd == null ? {} : { usd }), ...(tokens == null ? {} : { tokens }) };
}

/**
 * `keel budget SESSION [--usd X|none] [--tokens N|none]`: changes the session's spend caps (an event), or, with
 * no flag, prints them with what was spent. `keel cost SESSION [--json]`: where the money went.
 */
export function registerBudget(program: Command, context: CliContext): void {
  program
    .command('budget')
    .description(
      "set or show a session's spend caps (USD and tokens); keel resume continues a turn a cap stopped",
    )
    .argument('<session>', 'session id')
    .option('--usd <amount>', 'the USD cap, or none to remove it')
    .option('--tokens <count>', 'the token cap (input, cache and output tokens), or none to remove it')
    .action(async (session: string, options: { usd?: string; tokens?: string }) => {
      const home = context.home();
      if (options.usd === undefined && options.tokens === undefined) {
        const report = sessionCost(home, session);
        context.io.stdout(`${capsLine(report)}\nspent ${formatSpent(report.total)}\n`);
        return;
      }
      const change: BudgetChange = {
        ...(options.usd === undefined ? {} : { usd: parseCap(options.usd, '--usd', false) }),
        ...(options.tokens === undefined ? {} : { tokens: parseCap(options.tokens, '--tokens', true) }),
      };
      await setBudget(home, session, change);
      const report = sessionCost(home, session);
      context.io.stdout(`${capsLine(report)}; spent ${formatSpent(report.total)}\n`);
    });
  program
    .command('cost')
    .description(
      "show where a session's money went: by turn, model, subagent and kind, with the cache hit rate",
    )
    .argument('<session>', 'session id')
    .option('--json', 'print the report as JSON')
    .action((session: string, options: { json?: boolean }) => {
      const report = sessionCost(context.home(), session);
      context.io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatCost(report));
    });
}

function capsLine(report: CostReport): string {
  const { usd, tokens } = report.caps;
  const parts = [
    usd === undefined ? 'no USD cap' : `USD cap ${formatUsd(usd)}`,
    tokens === undefined ? 'no token cap' : `token cap ${tokens.toLocaleString('en-US')}`,
  ];
  return `session ${report.sessionId}: ${parts.join(', ')}`;
}

function formatSpent(spent: Spent): string {
  const usd = `${formatUsd(spent.usd)}${spent.usdKnown ? '' : ' (some prices unknown: at least)'}`;
  return `${usd}, ${spent.tokens.toLocaleString('en-US')} tokens`;
}

function formatCost(report: CostReport): string {
  const row = (label: string, spent: Spent) => `  ${label.padEnd(22)} ${formatSpent(spent)}`;
  const lines = [
    capsLine(report),
    `total ${formatSpent(report.total)} (list prices as of ${report.pricesAsOf})`,
    `cache hit rate ${report.cacheHitRate === null ? 'n/a' : `${(report.cacheHitRate * 100).toFixed(1)}%`}; ` +
      `${report.requests} requests` +
      (report.estimatedRequests > 0
        ? `, ${report.estimatedRequests} with estimated usage (server reported none)`
        : '') +
      (report.unpricedRequests > 0 ? `, ${report.unpricedRequests} of models without a price` : ''),
    'by kind:',
    row('input', report.byKind.input),
    row('cache read', report.byKind.cacheRead),
    row('cache write', report.byKind.cacheWrite),
    row('output', report.byKind.output),
    row('  of which reasoning', report.byKind.reasoning),
    row('compaction summaries', report.byKind.compaction),
    'by turn:',
    ...report.byTurn.map((turn) => row(`turn ${turn.turn} (${turn.requests} req)`, turn)),
    'by model:',
    ...report.byModel.map((model) => row(`${model.model} (${model.requests} req)`, model)),
  ];
  if (report.bySubagent.length > 0) {
    lines.push('by subagent:');
    for (const child of report.bySubagent) lines.push(row(child.childId, child));
  }
  return `${lines.join('\n')}\n`;
}
