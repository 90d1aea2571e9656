import type { Command } from 'commander';
import {
  type CompactionRecord,
  compactNow,
  createProvider,
  homeStoredKeys,
  foldSession,
  inspectSessionCompactions,
  readSettings,
  type SessionLog,
  systemPromptFor,
  unconfirmedEndpoint,
} from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { clip } from '../../common/text.js';
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
      const records = withSessionLog(context.home(), session, (log) =>
        inspectSessionCompactions(log, systemOf(log)),
      );
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

/** The system text a turn of this session sends (with the workspace paragraph of a checkout session), as keel payload shows it. */
function systemOf(log: SessionLog): { system?: string } {
  const [created] = log.read({ fromSeq: 1, limit: 1 });
  return created?.kind === 'session_created' ? { system: systemPromptFor(log.dir, created) } : {};
}

async function compact(context: CliContext, session: string, options: CompactOptions): Promise<void> {
  const home = context.home();
  const settings = readSettings(home);
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on('SIGINT', onSigint);
  try {
    await withWritableSession(home, session, async (log) => {
      const outcome = await compactNow(log, {
        settings: settings.compaction,
        provider: (pin) => {
          const state = foldSession(log.read());
          const unconfirmed = unconfirmedEndpoint({
            sessionId: session,
            mark: state.imported,
            pin,
            pinSeq: state.pinSeq,
          });
          if (unconfirmed) throw new CliError(unconfirmed, ExitCode.failure);
          try {
            return createProvider(pin, homeStoredKeys(context.home()), context.io.env);
          } catch (error) {
            throw new CliError(
              `this session is pinned to ${pin.provider}:${pin.model}, which cannot be used here: ${(error as Error).message}`,
              ExitCode.failure,
            );
          }
        },
        signal: controller.signal,
        // Issue #30: the user's PreCompact hooks (trigger manual) run first, in the session's box.
        hooks: { env: context.io.env, onNotice: (text) => context.io.stderr(`${text}\n`) },
        ...(options.rerun !== undefined ? { rerun: options.rerun } : {}),
      });
      switch (outcome.status) {
        case 'invalid_session':
          throw new CliError(outcome.reason);
        case 'not_a_compaction':
          throw new CliError(`${outcome.reason}; see keel compactions ${session}`);
        case 'conflict':
          throw new CliError(
            'the session changed while it was being compacted; run keel compact again',
            ExitCode.failure,
          );
        case 'failed':
          if (outcome.aborted) {
            context.io.stderr('keel: compaction stopped; the log is unchanged\n');
            context.setExitCode(ExitCode.interrupted);
            return;
          }
          throw new CliError(`${outcome.reason}; the log is unchanged`, ExitCode.failure);
        case 'skipped':
          if (options.json) context.io.stdout(`${JSON.stringify(outcome)}\n`);
          else context.io.stderr(`keel: nothing compacted: ${outcome.reason}\n`);
          return;
      }
      const { event, requests } = outcome;
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ status: 'compacted', event, requests })}\n`);
        return;
      }
      const rerun = event.supersedes !== undefined ? ` (re-runs #${event.supersedes}; both are kept)` : '';
      context.io.stdout(
        `compaction #${event.seq} replaces events #${event.fromSeq ?? 1}–#${event.through}${rerun}: ${event.tokensBefore ?? '?'} → ${event.tokensAfter ?? '?'} tokens, ${requests} summary request${requests === 1 ? '' : 's'}\n`,
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
