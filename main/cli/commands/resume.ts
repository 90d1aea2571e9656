import type { Command } from 'commander';
import { foldSession, needsModel, unansweredCalls } from '../../core/turn/state.js';
import { pendingApprovals } from '../../core/approvals/state.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exitCodes.js';
import { withWritableSession } from '../session.js';
import { describeApproval, driveTurn } from '../turn.js';
import { finishCliTurn } from './commit.js';

/**
 * `keel resume SESSION`: continues a turn that was interrupted, crashed, failed or waited on an approval
 * that has since been decided. Reads the log, finds the last committed event, continues.
 */
export function registerResume(program: Command, context: CliContext): void {
  program
    .command('resume')
    .description('continue an interrupted, crashed or approved turn from the log')
    .argument('<session>', 'session id')
    .option('--max-steps <n>', 'model requests this turn may make (default 50)', parsePositiveInteger)
    .option('--json', 'print deltas, events and the outcome as JSON lines')
    .action(async (session: string, options: { json?: boolean; maxSteps?: number }) => {
      await withWritableSession(context.home(), session, async (log) => {
        const events = log.read();
        const pending = pendingApprovals(events);
        if (pending.length > 0) {
          for (const request of pending)
            for (const line of describeApproval(log.id, request)) context.io.stderr(`${line}\n`);
          context.setExitCode(ExitCode.awaitingApproval);
          return;
        }
        const state = foldSession(events);
        if (!needsModel(state) && unansweredCalls(state).length === 0) {
          context.io.stderr(`keel: nothing to resume: the last turn of ${log.id} completed\n`);
          return;
        }
        await driveTurn(context, log, {}, options);
        await finishCliTurn(context, log, options);
      });
    });
}
