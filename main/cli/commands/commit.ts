import type { Command } from 'commander';
import type { SessionLog } from '../../core/log/sessionLog.js';
import { finishTurn, prepareTurn, uncommittedDirs } from '../../core/sessions/checkouts.js';
import { createHarness, type LocalHarnessSession } from '../../core/sessions/harness.js';
import {
  makeSessionFolders,
  readPersistentConfig,
  writePersistentConfig,
} from '../../core/sessions/layout.js';
import { CommitModel, type CommitReport } from '../../core/persistent/types.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';

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
  const session = (await createHarness({ home: context.home(), env: context.io.env }).sessions.get(id)) as
    LocalHarnessSession | undefined;
  if (!session) throw new CliError(`no session ${id} (see keel sessions)`);
  if (session.persistentDirs().length === 0) {
    throw new CliError(
      `session ${id} works on its project folder directly (it was started without --commit): there is nothing to commit`,
    );
  }
  return session;
}

/** One line for the terminal about one commit. */
export function describeCommit(report: CommitReport): string {
  switch (report.status) {
    case 'unchanged':
      return `keel: nothing to commit in ${report.dir}`;
    case 'committed': {
      const merged = report.files.filter((f) => f.merged).length;
      return (
        `keel: committed ${report.files.length} file${report.files.length === 1 ? '' : 's'} to ${report.dir}` +
        (merged > 0 ? ` (${merged} merged with changes made there meanwhile)` : '') +
        ` (diff: artifact ${report.diffArtifact})`
      );
    }
    case 'conflict':
      return (
        `keel: nothing committed to ${report.dir}: ${report.conflicts.join(', ')} changed there too and cannot be merged; ` +
        `the session's version is kept in artifact ${report.patchArtifact}`
      );
  }
}

/** Checks `--commit` before anything is created: auto, manual, or not given. */
export function parseCommitOption(mode: string | undefined): CommitModel | undefined {
  if (mode === undefined) return undefined;
  const parsed = CommitModel.safeParse(mode);
  if (!parsed.success) throw new CliError(`--commit must be auto or manual (got "${mode}")`);
  return parsed.data;
}

/**
 * `keel run --commit auto|manual`: a new session works on a checkout of its project folder
 * (`persistent/project/`) instead of the folder itself; on a continued session it switches the commit model.
 */
export function applyCommitOption(
  log: SessionLog,
  mode: CommitModel | undefined,
  options: { newSession: boolean },
): void {
  if (mode === undefined) return;
  const config = readPersistentConfig(log.dir);
  if (config) {
    writePersistentConfig(log.dir, {
      ...config,
      dirs: config.dirs.map((dir) => (dir.name === 'project' ? { ...dir, commit: mode } : dir)),
    });
    return;
  }
  const [created] = log.read({ fromSeq: 1, limit: 1 });
  if (!options.newSession || created?.kind !== 'session_created') {
    throw new CliError(
      `session ${log.id} works on its project folder directly; --commit applies to new sessions (keel run --project DIR --commit ${mode})`,
    );
  }
  makeSessionFolders(log.dir);
  writePersistentConfig(log.dir, {
    version: 1,
    dirs: [{ name: 'project', path: created.projectFolder, commit: mode }],
    readOnly: [],
  });
}

/**
 * Before a new turn of a session with Persistent Dirs: refuses when manual dirs hold uncommitted changes
 * the reset would discard (the warning comes before anything is lost), then commits auto leftovers and
 * resets the checkouts.
 */
export async function prepareCliTurn(
  context: CliContext,
  log: SessionLog,
  options: { json?: boolean },
): Promise<void> {
  if (!readPersistentConfig(log.dir)) return;
  const pending = (await uncommittedDirs(log.dir)).filter((d) => d.commit === 'manual' && !d.readOnly);
  if (pending.length > 0) {
    const what = pending
      .map((d) => `${d.dir} (${d.files.length} file${d.files.length === 1 ? '' : 's'})`)
      .join(', ');
    throw new CliError(
      `session ${log.id} has uncommitted changes in ${what} that a new turn would discard: ` +
        `keel commit ${log.id} applies them, keel discard ${log.id} drops them`,
    );
  }
  const preparation = await prepareTurn(log, { newTurn: true });
  reportCommits(context, preparation.commits, options);
}

/** When the turn stopped: commits the auto dirs and says what reached the project folder. */
export async function finishCliTurn(
  context: CliContext,
  log: SessionLog,
  options: { json?: boolean },
): Promise<void> {
  if (!readPersistentConfig(log.dir)) return;
  reportCommits(context, await finishTurn(log), options);
}

function reportCommits(
  context: CliContext,
  reports: readonly CommitReport[],
  options: { json?: boolean },
): void {
  for (const report of reports) {
    if (options.json) context.io.stdout(`${JSON.stringify({ type: 'commit', report })}\n`);
    else if (report.status !== 'unchanged') context.io.stderr(`${describeCommit(report)}\n`);
  }
}
