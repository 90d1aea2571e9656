import type { Command } from 'commander';
import {
  listUserSnapshots,
  type RestoreReport,
  restoreUserSnapshot,
  RevertTargetError,
  SessionLog,
  withWritableSession,
} from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { cliHarness, cliSession } from '../turn.js';

/**
 * `keel snapshots SESSION [--restore SEQ] [--json]`: lists the snapshots of your work Keel kept before it wrote
 * into the session's folders (a revert, a rewind with --files, a restore); `--restore SEQ` writes one back
 * (what the folder holds there now is kept first as a new snapshot).
 */
export function registerSnapshots(program: Command, context: CliContext): void {
  program
    .command('snapshots')
    .description('list (or --restore) the snapshots of your work Keel kept before writing into the project')
    .argument('<session>', 'session id')
    .option('--restore <seq>', 'write the snapshot with this seq back into its folder', parsePositiveInteger)
    .option('--json', 'print the list or the report as JSON')
    .action(async (id: string, options: { restore?: number; json?: boolean }) => {
      // Resolves the id (an unknown one is a clear error) before any folder is read.
      await cliSession(cliHarness(context), id);
      if (options.restore === undefined) {
        const log = SessionLog.open(context.home(), id, { write: false });
        let listed: ReturnType<typeof listUserSnapshots>;
        try {
          listed = listUserSnapshots(log.readKinds(['user_snapshot', 'user_snapshot_restored']));
        } finally {
          log.close();
        }
        if (options.json) context.io.stdout(`${JSON.stringify(listed, null, 2)}\n`);
        else if (listed.length === 0) context.io.stderr('keel: no snapshots of your work in this session\n');
        else
          for (const { event, restoredAt } of listed) {
            const files = event.files.map((f) => f.path).join(', ');
            context.io.stdout(
              `${event.seq}\t${event.at}\t${event.dir}\t${event.reason}\t${event.files.length} files (${files})` +
                `${event.omitted ? `, ${event.omitted} more not kept` : ''}` +
                `${restoredAt === undefined ? '' : `\trestored at event ${restoredAt}`}\n`,
            );
          }
        return;
      }
      const seq = options.restore;
      let report: RestoreReport;
      try {
        report = await withWritableSession(context.home(), id, (log) => restoreUserSnapshot(log, seq));
      } catch (error) {
        if (error instanceof RevertTargetError) throw new CliError(error.message);
        throw error;
      }
      if (options.json) context.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else if (report.status === 'unchanged')
        context.io.stderr(`keel: the folder already holds snapshot ${seq}'s files\n`);
      else if (report.status === 'refused')
        context.io.stderr(
          [
            `keel: nothing was restored: ${report.conflicts.length} file(s) cannot be`,
            ...report.conflicts.map((c) => `  ${c.path}: ${c.reason}`),
          ].join('\n') + '\n',
        );
      else
        context.io.stderr(
          `keel: restored snapshot ${seq}: ${report.files.length} file(s) (${report.files.join(', ')}); ` +
            (report.snapshot
              ? `what the folder held there is snapshot ${report.snapshot.seq} (keel snapshots ${id} --restore ${report.snapshot.seq})\n`
              : '\n'),
        );
      if (report.status === 'refused') context.setExitCode(ExitCode.failure);
    });
}
