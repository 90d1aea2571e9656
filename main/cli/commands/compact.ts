import type { Command } from 'commander';
import { buildCompaction, measureNextRequest } from '../../core/compaction/compact.js';
import { COMPACTION_TRACE_STAGE } from '../../core/compaction/hook.js';
import { inspectSessionCompactions, type CompactionRecord } from '../../core/compaction/inspect.js';
import { resolveCompactionSettings } from '../../core/compaction/settings.js';
import { loadEstimator } from '../../core/compaction/tokens.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../core/prompts/system.js';
import { foldSession } from '../../core/turn/state.js';
import { createProvider } from '../../providers/index.js';
import { readSettings } from '../../store/settings.js';
import { createToolRegistry } from '../../tools/registry.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { clip } from '../format.js';
import { withSessionLog, withWritableSession } from '../session.js';

type CompactOptions = { rerun?: number; json?: boolean };

/**
 * `keel compact SESSION [--rerun SEQ] [--json]`: compacts now, as the turn would at the threshold (or
 * re-runs compaction SEQ over the same range, both kept); `keel compactions SESSION [--json]`: every
 * compaction with its summary, pinned goal, replaced events, tokens and whether it is in effect.
 */
export function registerCompact(program: Command, context: CliContext): void {
  program
    .command('compact')
    .description(
      'summarize the older part of a session now (from its original events), keeping the newest verbatim',
    )
    .argument('<session>', 'session id')
    .option(
      '--rerun <seq>',
      're-run the compaction at this seq over the same range (a new event supersedes it)',
      parsePositiveInteger,
    )
    .option('--json', 'print the outcome as JSON')
    .action(async (session: string, options: CompactOptions) => compact(context, session, options));

  program
    .command('compactions')
    .description(
      "list a session's compactions: summary, pinned goal, replaced events, tokens, in effect or superseded",
    )
    .argument('<session>', 'session id')
    .option('--json', 'print them as JSON, with the replaced events and the payload rebuilt without each')
    .action((session: string, options: { json?: boolean }) => {
      const records = withSessionLog(context.home(), session, (log) => inspectSessionCompactions(log));
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ compactions: records }, null, 2)}\n`);
        return;
      }
      if (records.length === 0) {
        context.io.stdout(`session ${session} has no compactions (keel compact ${session} makes one)\n`);
        return;
      }
      for (const record of records) context.io.stdout(`${formatRecord(session, record)}\n`);
    });
}

async function compact(context: CliContext, session: string, options: CompactOptions): Promise<void> {
  const home = context.home();
  const settings = readSettings(home);
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on('SIGINT', onSigint);
  try {
    await withWritableSession(home, session, async (log) => {
      const events = log.read();
      const created = events[0];
      if (created?.kind !== 'session_created')
        throw new CliError(`session ${session} has no session_created event`);
      if (options.rerun !== undefined && events.find((e) => e.seq === options.rerun)?.kind !== 'compaction') {
        throw new CliError(
          `event ${options.rerun} of session ${session} is not a compaction; see keel compactions ${session}`,
        );
      }
      const state = foldSession(events);
      let provider;
      try {
        provider = createProvider(state.pin, {}, context.io.env);
      } catch (error) {
        throw new CliError(
          `this session is pinned to ${state.pin.provider}:${state.pin.model}, which cannot be used here: ${(error as Error).message}`,
          ExitCode.failure,
        );
      }
      const compaction = resolveCompactionSettings(settings.compaction, created);
      const systemPrompt = created.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
      const tools = createToolRegistry(created.toolMode).definitions();
      const estimator = await loadEstimator(state.pin);
      const started = Date.now();
      const measure = measureNextRequest({
        view: log.projectionView(),
        ...(state.lastUsage ? { lastUsage: state.lastUsage } : {}),
        ...(state.lastUsageSeq !== undefined ? { lastUsageSeq: state.lastUsageSeq } : {}),
        systemPrompt,
        tools,
        estimator,
      });
      const outcome = await buildCompaction({
        events,
        pin: state.pin,
        provider,
        estimator,
        systemPrompt,
        tools,
        keepRecent: compaction.keepRecent,
        mode: 'manual',
        tokensBefore: measure.tokens,
        signal: controller.signal,
        ...(options.rerun !== undefined ? { rerun: options.rerun } : {}),
      });
      const trace = (detail: Record<string, unknown>) =>
        log.appendTrace({
          turn: state.turns,
          stage: COMPACTION_TRACE_STAGE,
          startedAt: new Date(started).toISOString(),
          durationMs: Date.now() - started,
          detail: {
            trigger: options.rerun !== undefined ? 'rerun' : 'manual',
            measuredBy: measure.source,
            ...detail,
          },
        });
      if (outcome.status === 'failed') {
        trace({ ...outcome, tokensBefore: measure.tokens });
        if (outcome.aborted) {
          context.io.stderr('keel: compaction stopped; the log is unchanged\n');
          context.setExitCode(ExitCode.interrupted);
          return;
        }
        throw new CliError(`${outcome.reason}; the log is unchanged`, ExitCode.failure);
      }
      if (outcome.status === 'skipped') {
        trace({ ...outcome, tokensBefore: measure.tokens });
        if (options.json) context.io.stdout(`${JSON.stringify(outcome)}\n`);
        else context.io.stderr(`keel: nothing compacted: ${outcome.reason}\n`);
        return;
      }
      const appended = log.append(outcome.event, { expectedLastSeq: events[events.length - 1]?.seq ?? 0 });
      if (!appended.ok)
        throw new CliError(
          'the session changed while it was being compacted; run keel compact again',
          ExitCode.failure,
        );
      const event = appended.events[0];
      if (event?.kind !== 'compaction') throw new Error('the compaction event was not appended');
      trace({
        status: 'compacted',
        seq: event.seq,
        fromSeq: event.fromSeq,
        through: event.through,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
        requests: outcome.requests,
        chunks: outcome.chunks,
      });
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ status: 'compacted', event, requests: outcome.requests })}\n`);
        return;
      }
      const rerun = event.supersedes !== undefined ? ` (re-runs #${event.supersedes}; both are kept)` : '';
      context.io.stdout(
        `compaction #${event.seq} replaces events #${event.fromSeq ?? 1}–#${event.through}${rerun}: ${event.tokensBefore ?? '?'} → ${event.tokensAfter ?? '?'} tokens, ${outcome.requests} summary request${outcome.requests === 1 ? '' : 's'}\n`,
      );
    });
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function formatRecord(session: string, record: CompactionRecord): string {
  const count = record.replaced.events.length;
  const lines = [
    `#${record.seq} compaction  ${record.status === 'in_effect' ? 'in effect' : `superseded by #${record.supersededBy ?? '?'}`}  events #${record.fromSeq}–#${record.through} (${count} event${count === 1 ? '' : 's'})  ${record.tokensBefore ?? '?'} → ${record.tokensAfter ?? '?'} tokens${record.model ? `  model ${record.model}` : ''}  ${record.at}`,
  ];
  if (record.supersedes !== undefined) lines.push(`  re-run of #${record.supersedes}`);
  lines.push(`  pinned: ${clip(record.pinned, 100)}`);
  lines.push('  summary:');
  for (const line of record.summary.split('\n')) lines.push(`    ${line}`.trimEnd());
  lines.push(
    `  without it: ${record.payloadWithout.messages.length} messages (keel payload ${session} --without-compaction ${record.seq}; keel show ${session} for events #${record.fromSeq}–#${record.through})`,
  );
  return lines.join('\n');
}
