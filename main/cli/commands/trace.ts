import type { Command } from 'commander';
import type {
  SessionTraceSummary,
  TimelineStage,
  TokensAndCost,
  TurnTraceSummary,
} from '../../common/traceSchema.js';
import { DEFAULT_TRACE_DEPTH, readTraceSummary } from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { clip } from '../../common/text.js';
import { withSessionLog } from '../session.js';

/** `keel trace SESSION [--json] [--depth N]`: each turn's timeline, tokens and cost; totals; subagents nested. */
export function registerTrace(program: Command, context: CliContext): void {
  program
    .command('trace')
    .description(
      "show each turn's timeline (projection, request, first token, stream, tools, approval waits, retries), tokens and cost, with subagents nested",
    )
    .argument('<session>', 'session id')
    .option('--json', 'print the summary and the raw trace records as JSON')
    .option(
      '--depth <n>',
      `levels of subagents to nest (default ${DEFAULT_TRACE_DEPTH})`,
      parsePositiveInteger,
    )
    .action((session: string, options: { json?: boolean; depth?: number }) => {
      const home = context.home();
      const entries = withSessionLog(home, session, (log) => log.readTrace());
      const summary = readTraceSummary(home, session, {
        now: new Date(),
        ...(options.depth === undefined ? {} : { maxDepth: options.depth }),
      });
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ ...summary, entries }, null, 2)}\n`);
        return;
      }
      context.io.stdout(formatSummary(summary, ''));
    });
}

/** The whole summary as indented text; nested subagents are indented further. */
function formatSummary(summary: SessionTraceSummary, indent: string): string {
  const { totals } = summary;
  const lines = [
    `${indent}session ${summary.sessionId} (${summary.model})`,
    `${indent}${totals.turns} turn${totals.turns === 1 ? '' : 's'}, ${totals.requests} request${totals.requests === 1 ? '' : 's'}: ${formatTokens(totals)}` +
      `; cache hit ${totals.cacheHitRate === null ? 'n/a' : `${(totals.cacheHitRate * 100).toFixed(1)}%`}` +
      `; waited ${formatDuration(totals.approvalWaitMs)} for approvals`,
  ];
  const subagents = summary.turns.some((turn) => turn.subagents.length > 0);
  if (subagents) lines.push(`${indent}with subagents: ${formatTokens(summary.totalsWithSubagents)}`);
  if (summary.turns.length === 0) lines.push(`${indent}no trace records yet`);
  let text = `${lines.join('\n')}\n`;
  for (const turn of summary.turns) text += formatTurn(turn, indent);
  return text;
}

function formatTurn(turn: TurnTraceSummary, indent: string): string {
  const prompt = turn.prompt === undefined ? '' : `  "${clip(turn.prompt, 60)}"`;
  let text =
    `\n${indent}turn ${turn.turn}${prompt}  ${formatDuration(turn.durationMs)}, ` +
    `${turn.requests} request${turn.requests === 1 ? '' : 's'}, ${formatTokens(turn)}\n`;
  for (const stage of turn.stages) {
    const offset = `+${formatDuration(stage.startOffsetMs)}`.padEnd(10);
    text += `${indent}  ${offset} ${stageLabel(stage).padEnd(44)} ${formatDuration(stage.durationMs).padStart(9)}\n`;
  }
  for (const child of turn.subagents) {
    const call = child.toolCallId === undefined ? '' : ` (${child.toolCallId})`;
    const state = child.finished ? '' : ', not finished';
    text += `${indent}  subagent ${child.childId}${call}  "${clip(child.task, 60)}"${state}\n`;
    if (child.summary) text += formatSummary(child.summary, `${indent}    `);
    else if (child.missing === 'not_found') text += `${indent}    (its session is not in this home)\n`;
    else if (child.missing === 'depth_limit')
      text += `${indent}    (deeper than --depth; keel trace ${child.childId})\n`;
  }
  return text;
}

function stageLabel(stage: TimelineStage): string {
  const call = stage.toolCallId === undefined ? '' : ` ${stage.toolCallId}`;
  const detail = (stage.detail ?? {}) as Record<string, unknown>;
  switch (stage.kind) {
    case 'tool':
      return `tool ${stage.tool ?? ''}${call}${detail['isError'] === true ? ' (error)' : ''}`;
    case 'approval_wait':
      return `approval ${stage.tool ?? ''}${call} (request ${stage.requestSeq ?? '?'}, ${stage.pending ? 'pending' : (stage.decision ?? 'decided')})`;
    case 'retry':
      return `retry #${typeof detail['attempt'] === 'number' ? detail['attempt'] : '?'}${typeof detail['reason'] === 'string' ? `: ${clip(detail['reason'], 30)}` : ''}`;
    case 'request':
      return typeof detail['failed'] === 'string' ? `request (failed: ${detail['failed']})` : 'request';
    case 'compaction':
      return `compaction${typeof detail['status'] === 'string' ? ` (${detail['status']})` : ''}`;
    default:
      return stage.name;
  }
}

function formatTokens(tokens: TokensAndCost): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const cost = tokens.costKnown
    ? `$${tokens.costUsd.toFixed(4)}`
    : tokens.costUsd > 0
      ? `$${tokens.costUsd.toFixed(4)} + unpriced`
      : 'cost unknown';
  return (
    `${n(tokens.inputTokens)} in, ${n(tokens.outputTokens)} out` +
    (tokens.reasoningTokens ? ` (${n(tokens.reasoningTokens)} reasoning)` : '') +
    `, ${n(tokens.cacheReadTokens)} cache read, ` +
    `${n(tokens.cacheWriteTokens)} cache write, ${cost}`
  );
}

/** 850 ms, 12.3 s, 4m 05s, 2h 03m. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}
