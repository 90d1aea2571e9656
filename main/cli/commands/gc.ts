import { InvalidArgumentError, type Command } from 'commander';
import { type CheckoutStorageReport, collectCheckouts } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { formatTable } from '../format.js';

type GcOptions = { dryRun?: boolean; json?: boolean; idleMinutes?: number };

/** Commander parser of --idle-minutes: a number ≥ 0 (a bad one is a usage error naming what to give). */
function parseMinutes(value: string): number {
  const minutes = Number(value);
  if (value.trim() === '' || !Number.isFinite(minutes) || minutes < 0) {
    throw new InvalidArgumentError('Expected a number of minutes, 0 or more.');
  }
  return minutes;
}

/**
 * `keel gc [--dry-run] [--idle-minutes N] [--json]` (issue #36): reclaims the checkouts of idle sessions
 * (their next turn makes them again); never a log, an artifact or a project file.
 */
export function registerGc(program: Command, context: CliContext): void {
  program
    .command('gc')
    .description("reclaim idle sessions' checkouts of their project (made again on their next turn)")
    .option('--dry-run', 'list what would be reclaimed and its size; remove nothing')
    .option(
      '--idle-minutes <n>',
      'only sessions idle at least this long (default: settings, 60)',
      parseMinutes,
    )
    .option('--json', 'print the report as JSON')
    .action(async (options: GcOptions) => {
      const idle = options.idleMinutes;
      const report = await collectCheckouts(context.home(), {
        measure: true,
        ...(options.dryRun ? { dryRun: true } : {}),
        ...(idle !== undefined ? { idleMs: idle * 60_000 } : {}),
      });
      context.io.stdout(
        options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, options),
      );
    });
}

/** Megabytes with one decimal. */
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function formatReport(report: CheckoutStorageReport, options: GcOptions): string {
  if (report.entries.length === 0) return 'no checkouts to reclaim\n';
  const rows = report.entries.map((entry) => [
    entry.sessionId,
    entry.dir,
    mb(entry.bytes),
    entry.action,
    entry.reason ?? '',
  ]);
  const table = formatTable(['session', 'dir', 'size', 'action', 'why kept'], rows);
  const verb = options.dryRun ? 'would reclaim' : 'reclaimed';
  return (
    `${table}\n${verb} ${mb(report.reclaimedBytes)} of ${mb(report.totalBytes)} ` +
    `(bound ${mb(report.limitBytes)})\n`
  );
}
