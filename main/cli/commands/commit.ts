import type { Command } from 'commander';
import type { LocalHarnessSession } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { describeCommit } from '../format.js';
import { cliHarness, cliSession } from '../turn.js';

type DirOptions = { dir?: string[] };

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `keel commit SESSION [--dir NAME]...` applies the uncommitted changes of a session's manual Persistent
 * Dirs to their folders (three-way merged; on a conflict nothing is written and the session's version is
 * kept as a patch artifact). `keel discard SESSION [--dir NAME]...` drops them.
 */
export function registerCommit(program: Command, context: CliContext): void {
  program
    .command('commit')
    .description("apply a session's uncommitted changes (manual Persistent Dirs) to their folders")
    .argument('<session>', 'session id')
    .option('--dir <name>', 'only this Persistent Dir (repeatable; default: every manual one)', collect)
    .action(async (id: string, options: DirOptions) => {
      const session = await checkoutSession(context, id);
      const reports = await session.commit(options.dir);
      if (reports.length === 0)
        context.io.stderr(`keel: session ${id} has no manual Persistent Dir to commit\n`);
      for (const report of reports) context.io.stderr(`${describeCommit(report)}\n`);
      if (reports.some((r) => r.status === 'conflict')) context.setExitCode(ExitCode.failure);
    });
  program
    .command('discard')
    .description("drop a session's uncommitted changes (manual Persistent Dirs)")
    .argument('<session>', 'session id')
    .option('--dir <name>', 'only this Persistent Dir (repeatable; default: every manual one)', collect)
    .action(async (id: string, options: DirOptions) => {
      const session = await checkoutSession(context, id);
      const dirs = await session.discard(options.dir);
      context.io.stderr(
        dirs.length === 0
          ? `keel: session ${id} has no manual Persistent Dir\n`
          : `keel: discarded the uncommitted changes of ${dirs.join(', ')}\n`,
      );
    });
}

async function checkoutSession(context: CliContext, id: string): Promise<LocalHarnessSession> {
  const session = await cliSession(cliHarness(context), id);
  if (session.persistentDirs().length === 0) {
    throw new CliError(
      `session ${id} works on its project folder directly (keel run --commit direct): there is nothing to commit`,
    );
  }
  return session;
}
