import type { Command } from 'commander';
import { decidePlan, foldSession, pendingPlans, withWritableSession } from '../../core/harness/index.js';
import { PlanPolicy } from '../../common/planEvents.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { withSessionLog } from '../session.js';
import { cliHarness, driveTurn } from '../turn.js';

type PlanOptions = {
  approve?: boolean;
  reject?: string;
  policy?: string;
  request?: number;
  resume?: boolean;
  json?: boolean;
};

/**
 * `keel plan SESSION` (issue #30): prints the plan waiting (exit 3 while one waits, 0 when none);
 * `--approve [--policy ask|auto-edit|full-auto]` approves it (plan mode ends; the session continues in that
 * policy, by default the one it had), `--reject "comments"` sends it back (the model revises it). With
 * --resume the turn goes on in this process. The decision is the harness's (`decidePlan`); this only words it.
 */
export function registerPlan(program: Command, context: CliContext): void {
  program
    .command('plan')
    .description('show, approve or send back the plan a plan-mode turn presented (keel run --plan)')
    .argument('<session>', 'session id')
    .option('--approve', 'approve the plan: plan mode ends and the model implements it')
    .option('--policy <policy>', 'with --approve: ask | auto-edit | full-auto (default: the session policy)')
    .option('--reject <comments>', 'send the plan back with these comments; the model revises it')
    .option('--request <seq>', 'the plan to answer (when several wait)', parsePositiveInteger)
    .option('--resume', 'continue the turn right away')
    .option('--json', 'with --resume: print JSON lines')
    .action(async (session: string, options: PlanOptions) => {
      if (options.approve && options.reject !== undefined)
        throw new CliError('choose one: --approve or --reject "comments"');
      if (options.policy !== undefined && !options.approve)
        throw new CliError('--policy goes with --approve (the policy the session continues in)');
      const home = context.home();
      if (!options.approve && options.reject === undefined) {
        const plans = withSessionLog(home, session, (log) => pendingPlans(log.read()));
        if (plans.length === 0) {
          context.io.stderr(`keel: no plan is waiting in ${session}\n`);
          return;
        }
        for (const { request, plan } of plans) {
          context.io.stdout(`${plan}\n`);
          context.io.stderr(`keel: plan ${request.seq} waits for your decision\n`);
        }
        context.setExitCode(ExitCode.awaitingApproval);
        return;
      }
      let policy: PlanPolicy | undefined;
      if (options.policy !== undefined) {
        const parsed = PlanPolicy.safeParse(options.policy);
        if (!parsed.success)
          throw new CliError(`--policy must be ask, auto-edit or full-auto (got "${options.policy}")`);
        policy = parsed.data;
      }
      await withWritableSession(home, session, (log) => {
        const current = PlanPolicy.safeParse(foldSession(log.read()).policy);
        const request = options.request !== undefined ? { requestSeq: options.request } : {};
        const decided = options.approve
          ? decidePlan(log, {
              ...request,
              decision: 'approve',
              policy: policy ?? (current.success ? current.data : 'ask'),
            })
          : decidePlan(log, { ...request, decision: 'reject', comments: options.reject ?? '' });
        const { recorded } = decided;
        context.io.stderr(
          recorded.kind === 'plan_approved'
            ? `keel: approved plan ${decided.request.seq}; ${session} continues in policy ${recorded.policy}\n`
            : `keel: sent plan ${decided.request.seq} back; the model revises it\n`,
        );
        return Promise.resolve();
      });
      if (options.resume) await driveTurn(context, cliHarness(context), session, {}, { json: options.json });
      else context.io.stderr(`keel: continue with keel resume ${session}\n`);
    });
}
