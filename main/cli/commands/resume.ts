import type { Command } from 'commander';
import { foldSession, needsModel, pendingApprovals, unansweredCalls } from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exitCodes.js';
import { withSessionLog } from '../session.js';
import { cliHarness, cliSession, describeApproval, driveTurn } from '../turn.js';

/**
 * `keel resume SESSION`: continues a turn that was interrupted, crashed, failed or waited on an approval
 * that has since been decided, through the session API (no reset of checkouts: the turn goes on where it
 * stopped). Reads the log first: a still-undecided approval is printed (exit 3), a finished turn is said so.
 */
export function registerResume(program: Command, context: CliContext): void {
  program
    .command('resume')
    .description('continue an interrupted, crashed or approved turn from the log')
    .argument('<session>', 'session id')
    .option('--max-steps <n>', 'model requests this turn may make (default 50)', parsePositiveInteger)
    .option('--show-reasoning', "print the model's reasoning, dimmed, on stderr as it streams")
    .option('--json', 'print deltas, events, commits and the outcome as JSON lines')
    .action(async (id: string, options: { json?: boolean; maxSteps?: number; showReasoning?: boolean }) => {
      const harness = cliHarness(context);
      const session = await cliSession(harness, id);
      // A commit a crash cut off after writing the folder is recorded first, even when no turn is left to run.
      for (const notice of await session.recoverCommits()) context.io.stderr(`keel: ${notice}\n`);
      const next = withSessionLog(harness.home, session.id, (log) => {
        const events = log.read();
        const pending = pendingApprovals(events);
        if (pending.length > 0) return { pending };
        const state = foldSession(events);
        return { pending, done: !needsModel(state) && unansweredCalls(state).length === 0 };
      });
      if (next.pending.length > 0) {
        for (const request of next.pending)
          for (const line of describeApproval(session.id, request)) context.io.stderr(`${line}\n`);
        context.setExitCode(ExitCode.awaitingApproval);
        return;
      }
      if (next.done) {
        context.io.stderr(`keel: nothing to resume: the last turn of ${session.id} completed\n`);
        return;
      }
      await driveTurn(context, harness, session.id, {}, options);
    });
}
