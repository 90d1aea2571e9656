import type { Command } from 'commander';
import {
  type ForkReport,
  forkSession,
  type RevertReport,
  type RevertTarget,
  RevertTargetError,
  type RewindReport,
} from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { cliHarness, cliSession } from '../turn.js';

type RevertOptions = { turn?: number; change?: number; json?: boolean };

/**
 * `keel revert SESSION --turn N | --change SEQ [--json]`: undoes what a turn changed in the project (or one
 * recorded change: a persistent_commit, or a changes_reverted to undo a revert) onto the folder as it is now.
 * Edits made since are merged; on a conflict nothing is written, each file is named with why, exit 1.
 */
export function registerRevert(program: Command, context: CliContext): void {
  registerRewind(program, context);
  registerFork(program, context);
  program
    .command('revert')
    .description(
      "undo a turn's changes to the project (three-way: your edits since are kept; a conflict writes nothing)",
    )
    .argument('<session>', 'session id')
    .option('--turn <n>', 'the turn whose changes to undo (1 is the first)', parsePositiveInteger)
    .option(
      '--change <seq>',
      'one recorded change to undo: a persistent_commit or changes_reverted seq',
      parsePositiveInteger,
    )
    .option('--json', 'print the report as JSON')
    .action(async (id: string, options: RevertOptions) => {
      const target = targetOf(options);
      const session = await cliSession(cliHarness(context), id);
      let report: RevertReport;
      try {
        report = await session.revert(target);
      } catch (error) {
        if (error instanceof RevertTargetError) throw new CliError(error.message);
        throw error;
      }
      if (options.json) context.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else context.io.stderr(`${describeRevert(report, target)}\n`);
      if (report.status === 'conflict') context.setExitCode(ExitCode.failure);
    });
}

type RewindOptions = { to: number; files?: boolean; json?: boolean };

/**
 * `keel rewind SESSION --to SEQ [--files] [--json]`: the conversation continues from SEQ (the last event before
 * one of your messages); later events stay in the log, set aside. `--files` also reverts what the turns after
 * it changed in the project (a conflict: nothing is done, exit 1).
 */
function registerRewind(program: Command, context: CliContext): void {
  program
    .command('rewind')
    .description(
      'continue a session from an earlier point (later events are kept, set aside); --files also undoes their changes',
    )
    .argument('<session>', 'session id')
    .requiredOption(
      '--to <seq>',
      'the last event to keep: the one just before a message of yours',
      parsePositiveInteger,
    )
    .option('--files', "also revert the project's changes made after that point")
    .option('--json', 'print the report as JSON')
    .action(async (id: string, options: RewindOptions) => {
      const session = await cliSession(cliHarness(context), id);
      let report: RewindReport;
      try {
        report = await session.rewind({ toSeq: options.to, files: options.files === true });
      } catch (error) {
        if (error instanceof RevertTargetError) throw new CliError(error.message);
        throw error;
      }
      if (options.json) context.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else if (report.status === 'conflict')
        context.io.stderr(
          `${describeRevert(report.revert, { after: options.to }).replace('nothing was reverted', 'nothing was rewound')}\n`,
        );
      else {
        const files =
          report.revert?.status === 'reverted'
            ? `; ${report.revert.files.length} files put back as they were`
            : '';
        context.io.stderr(
          `keel: session ${id} continues from event ${options.to} (rewound at event ${report.event.seq}; the later events are kept, set aside)${files}\n`,
        );
      }
      if (report.status === 'conflict') context.setExitCode(ExitCode.failure);
    });
}

/**
 * `keel fork SESSION [--at SEQ] [--json]`: a new session starting with SESSION's events up to SEQ (default: all;
 * else the event just before one of your messages), same model and folders, its own checkout; prints its id.
 */
function registerFork(program: Command, context: CliContext): void {
  program
    .command('fork')
    .description(
      "start a new session from another's conversation up to a point (the parent is untouched); prints its id",
    )
    .argument('<session>', 'session id')
    .option(
      '--at <seq>',
      'the last event to copy: the one just before a message of yours (default: all)',
      parsePositiveInteger,
    )
    .option('--json', 'print the report as JSON')
    .action((id: string, options: { at?: number; json?: boolean }) => {
      let report: ForkReport;
      try {
        report = forkSession(context.home(), id, options.at === undefined ? {} : { at: options.at });
      } catch (error) {
        if (error instanceof RevertTargetError) throw new CliError(error.message);
        throw error;
      }
      if (options.json) context.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else {
        context.io.stdout(`${report.id}\n`);
        context.io.stderr(
          `keel: forked ${id} at event ${report.at} as ${report.id} (${report.events} events copied); continue it with keel run --session ${report.id}\n`,
        );
        if (report.notice) context.io.stderr(`keel: ${report.notice}\n`);
      }
    });
}

function targetOf(options: RevertOptions): RevertTarget {
  if ((options.turn === undefined) === (options.change === undefined))
    throw new CliError(
      "name what to revert: --turn N (a turn's changes) or --change SEQ (one recorded change)",
    );
  return options.turn !== undefined ? { turn: options.turn } : { seq: options.change as number };
}

function describeRevert(report: RevertReport, target: RevertTarget): string {
  const what =
    'turn' in target
      ? `turn ${target.turn}`
      : 'seq' in target
        ? `change ${target.seq}`
        : `event ${target.after}`;
  switch (report.status) {
    case 'unchanged':
      return `keel: nothing to revert: the folder already holds the files as they were before ${what}`;
    case 'reverted': {
      const seqs = report.events.map((e) => e.seq).join(', ');
      const files = report.files.map((f) => f.path).join(', ');
      const kept = report.snapshots.map((s) => s.seq).join(', ');
      return (
        `keel: reverted ${what}: ${report.files.length} file${report.files.length === 1 ? '' : 's'} (${files}); ` +
        `recorded as event ${seqs} (keel revert SESSION --change ${report.events[0]?.seq ?? seqs} puts them back)` +
        (kept === '' ? '' : `; your work there was kept first as snapshot ${kept} (keel snapshots SESSION)`)
      );
    }
    case 'conflict':
      return [
        `keel: nothing was reverted: ${report.conflicts.length} file${report.conflicts.length === 1 ? '' : 's'} cannot be reverted onto the folder as it is now`,
        ...report.conflicts.map((c) => `  ${c.dir}/${c.path}: ${c.reason}`),
      ].join('\n');
  }
}
