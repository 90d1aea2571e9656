import { decideApproval } from '../../core/harness/index.js';
import type { Command } from 'commander';
import { ApprovalScope } from '../../common/events.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { withWritableSession } from '../session.js';
import { cliHarness, driveTurn } from '../turn.js';

type DecisionOptions = {
  request?: number;
  scope?: string;
  reason?: string;
  resume?: boolean;
  json?: boolean;
  always?: boolean;
};

/**
 * `keel approve SESSION [--request SEQ] --scope once|session|tool|path:GLOB|prefix:CMD|domain:HOST [--resume]` and
 * `keel deny SESSION [--request SEQ] [--reason TEXT] [--resume]`: the only way an approval request moves
 * (an event in the log). With --resume the turn continues in this process, through the session API (its
 * auto checkouts are committed when it stops, as after keel run). `tool` (MCP tools) also keeps the grant as
 * the project's rule in the home (keel mcp rules lists and revokes them).
 */
export function registerApproval(program: Command, context: CliContext): void {
  program
    .command('approve')
    .description('grant a pending approval request (an event in the log)')
    .argument('<session>', 'session id')
    .option(
      '--request <seq>',
      'the approval request to answer (needed when several are pending)',
      parsePositiveInteger,
    )
    .requiredOption(
      '--scope <scope>',
      'once | session | tool (an MCP tool, in later sessions of the project too) | path:GLOB | prefix:COMMAND | domain:HOST (web_fetch)',
    )
    .option(
      '--always',
      'also keep the grant as a permission rule of the project (keel rules lists and removes it)',
    )
    .option('--resume', 'continue the turn right away')
    .option('--json', 'with --resume: print JSON lines')
    .action((session: string, options: DecisionOptions) => decide(context, session, options, 'grant'));
  program
    .command('deny')
    .description('deny a pending approval request; the model gets the reason as the tool result')
    .argument('<session>', 'session id')
    .option(
      '--request <seq>',
      'the approval request to answer (needed when several are pending)',
      parsePositiveInteger,
    )
    .option('--reason <text>', 'why, for the model')
    .option('--resume', 'continue the turn right away')
    .option('--json', 'with --resume: print JSON lines')
    .action((session: string, options: DecisionOptions) => decide(context, session, options, 'deny'));
}

async function decide(
  context: CliContext,
  session: string,
  options: DecisionOptions,
  decision: 'grant' | 'deny',
) {
  // The decision is appended under the lease, which is released before the turn takes it again.
  let scope: ApprovalScope | undefined;
  if (decision === 'grant') {
    const parsed = ApprovalScope.safeParse(options.scope);
    if (!parsed.success) {
      throw new CliError(
        `--scope must be once, session, tool, path:GLOB, prefix:COMMAND or domain:HOST (got "${options.scope ?? ''}")`,
      );
    }
    scope = parsed.data;
  }
  const id = await withWritableSession(context.home(), session, (log) => {
    // The core's approval front door decides; the CLI only words the outcome.
    const result = decideApproval(
      context.home(),
      log,
      {
        ...(options.request !== undefined ? { requestSeq: options.request } : {}),
        ...(scope !== undefined
          ? { decision: 'grant' as const, scope }
          : { decision: 'deny' as const, ...(options.reason ? { reason: options.reason } : {}) }),
      },
      'keel approve',
      { always: options.always === true },
    );
    const { rule, always } = result;
    if (always) {
      context.io.stderr(
        `keel: kept the rule ${always.action} ${always.rule} for ${always.project} (keel rules rm "${always.rule}" to undo)\n`,
      );
    }
    context.io.stderr(
      scope !== undefined
        ? `keel: granted request ${result.request.seq} (${result.request.tool}, ${scope})\n`
        : `keel: denied request ${result.request.seq} (${result.request.tool})\n`,
    );
    if (rule) {
      context.io.stderr(
        `keel: ${rule.tool} now runs without asking in every session of ${rule.project} (keel mcp rules --revoke ${rule.tool} to undo)\n`,
      );
    }
    return log.id;
  });
  if (options.resume) await driveTurn(context, cliHarness(context), id, {}, { json: options.json });
  else context.io.stderr(`keel: continue with keel resume ${id}\n`);
}
