import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import {
  IMPORT_TOOLS,
  importHistory,
  importSession,
  InvalidExportError,
  SessionExistsError,
  type HistoryImportReport,
  type ImportTool,
} from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { readInputFile } from '../files.js';

type ImportOptions = {
  keepId?: boolean;
  project?: string;
  from?: string;
  since?: string;
  dryRun?: boolean;
  json?: boolean;
};

/**
 * `keel import FILE [--keep-id] [--project DIR]`: validates every line, then writes the session (or nothing);
 * prints its id. The session is a record: its grants are inactive, its endpoint needs a re-pin, and it runs
 * only on the folder `--project` names (see core/log/imported.ts).
 * `keel import --from claude-code|codex [PATH…] [--project DIR] [--since DATE] [--dry-run]` (issue 35): another
 * tool's sessions, from its default location or the files and folders named (harness/historyImport.ts).
 */
export function registerImport(program: Command, context: CliContext): void {
  program
    .command('import')
    .description(
      'import a session from a JSON Lines export (- reads standard input; prints the session id), or with --from the history of Claude Code or Codex',
    )
    .argument(
      '[files...]',
      'the export file; with --from, session files or folders (default: the tool’s own)',
    )
    .option('--keep-id', "keep the file's session id instead of minting a new one (fails if it exists)")
    .option(
      '--project <dir>',
      "the project folder the session works on here (the file's own is never used; without it the session is read, not run); with --from, only that project's sessions",
    )
    .option('--from <tool>', `import another tool's history: ${IMPORT_TOOLS.join(' or ')}`)
    .option('--since <date>', 'with --from: only session files changed on or after this date (YYYY-MM-DD)')
    .option('--dry-run', 'with --from: show what would be imported, per project, and write nothing')
    .option('--json', 'with --from: print the report as JSON')
    .action(async (files: string[], options: ImportOptions) => {
      const project = options.project === undefined ? undefined : projectFolder(options.project);
      if (options.from !== undefined) return importFrom(context, files, options, project);
      for (const flag of ['since', 'dryRun', 'json'] as const) {
        if (options[flag] !== undefined) {
          throw new CliError(`--${flag === 'dryRun' ? 'dry-run' : flag} goes with --from`, ExitCode.usage);
        }
      }
      const [file, ...extra] = files;
      if (file === undefined || extra.length > 0) {
        throw new CliError(
          'keel import takes one export file (or --from claude-code|codex [PATH…])',
          ExitCode.usage,
        );
      }
      const text = file === '-' ? await context.io.readStdin() : readInputFile(file);
      const name = file === '-' ? 'standard input' : file;
      try {
        const { id, droppedDirs } = importSession(context.home(), text, {
          keepId: options.keepId === true,
          ...(project !== undefined ? { project } : {}),
        });
        for (const name of droppedDirs) {
          context.io.stderr(
            `keel: the Persistent Dir "${name}" was not imported: its folder comes from the file, and only the project folder (--project) is chosen here\n`,
          );
        }
        context.io.stdout(`${id}\n`);
      } catch (error) {
        if (error instanceof InvalidExportError) {
          const [first, ...more] = error.problems;
          if (first && more.length === 0) {
            throw new CliError(
              `cannot import ${name}, nothing was written: line ${first.line}: ${first.message}`,
            );
          }
          throw new CliError(
            `cannot import ${name}, nothing was written (${error.problems.length} problems):`,
            ExitCode.usage,
            error.problems.map((problem) => `line ${problem.line}: ${problem.message}`),
          );
        }
        if (error instanceof SessionExistsError) {
          throw new CliError(
            `session ${error.sessionId} already exists in this home; import without --keep-id to get a new id`,
          );
        }
        throw error;
      }
    });
}

const TOOL_NAMES: Record<ImportTool, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

async function importFrom(
  context: CliContext,
  paths: readonly string[],
  options: ImportOptions,
  project: string | undefined,
): Promise<void> {
  const tool = options.from as ImportTool;
  if (!(IMPORT_TOOLS as readonly string[]).includes(tool)) {
    throw new CliError(`--from takes ${IMPORT_TOOLS.join(' or ')}, not "${options.from}"`, ExitCode.usage);
  }
  if (options.keepId)
    throw new CliError('--keep-id does not go with --from (ids come from the source)', ExitCode.usage);
  let since: Date | undefined;
  if (options.since !== undefined) {
    since = new Date(options.since);
    if (Number.isNaN(since.getTime())) {
      throw new CliError(`--since takes a date like 2025-06-01, not "${options.since}"`, ExitCode.usage);
    }
  }
  for (const entry of paths) {
    if (!fs.existsSync(entry)) throw new CliError(`${path.resolve(entry)} does not exist`, ExitCode.usage);
  }
  const tty = context.io.stderrIsTTY === true;
  let shown = -1;
  const report = await importHistory(context.home(), {
    tool,
    paths,
    ...(project !== undefined ? { project } : {}),
    ...(since ? { since } : {}),
    dryRun: options.dryRun === true,
    env: context.io.env,
    onProgress: ({ done, total }) => {
      if (options.json || total === 0) return;
      // A terminal gets one line redrawn in place; a log gets a line per tenth.
      const tenth = Math.floor((done * 10) / total);
      if (tty)
        context.io.stderr(`\rkeel: reading ${done}/${total} session files${done === total ? '\n' : ''}`);
      else if (tenth !== shown) {
        shown = tenth;
        context.io.stderr(`keel: reading ${done}/${total} session files\n`);
      }
    },
  });
  if (options.json) {
    context.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  context.io.stdout(formatReport(report));
}

/** The report as lines: per project, what was (or would be) imported; then what was skipped and why. */
export function formatReport(report: HistoryImportReport): string {
  const name = TOOL_NAMES[report.tool];
  const lines: string[] = [];
  const fresh = report.imported.filter((s) => s.status === 'new').length;
  const grown = report.imported.length - fresh;
  lines.push(
    report.dryRun
      ? `would import from ${name} (${report.root}): ${report.found} session files found`
      : `imported ${report.imported.length} sessions from ${name} (${fresh} new, ${grown} with a new part); ${report.found} session files found in ${report.root}`,
  );
  for (const project of report.projects) {
    lines.push(
      `  ${project.project || '(no folder recorded)'}: ${project.sessions} sessions, ${project.messages} messages` +
        ` (${project.new} new, ${project.grown} grown, ${project.unchanged} already here` +
        (project.records > 0
          ? `, ${project.records} of them read-only records: --project makes them runnable)`
          : ')'),
    );
  }
  const reasons = new Map<string, number>();
  for (const skip of report.skipped) reasons.set(skip.reason, (reasons.get(skip.reason) ?? 0) + 1);
  if (report.skipped.length > 0) {
    lines.push(`skipped ${report.skipped.length}:`);
    for (const [reason, count] of reasons) {
      const example = report.skipped.find((s) => s.reason === reason)?.file ?? '';
      lines.push(`  ${count} × ${reason}${count === 1 ? ` (${example})` : ''}`);
    }
  }
  if (report.problems.length > 0) {
    const total = report.problems.length + report.moreProblems;
    lines.push(`${total} lines could not be read and were skipped:`);
    for (const problem of report.problems.slice(0, 20))
      lines.push(`  ${problem.file}:${problem.line}: ${problem.message}`);
    if (total > 20) lines.push(`  … and ${total - 20} more (--json lists the first 200)`);
  }
  if (!report.chosen && report.imported.length > 0) {
    lines.push(
      'these sessions can be read, searched, exported and forked; to continue them here, import them again with --project DIR (the folder is never taken from the files)',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The real path of an existing folder named by --project, or a usage error. */
function projectFolder(dir: string): string {
  const resolved = path.resolve(dir);
  if (!fs.existsSync(resolved) || !fs.statSync(resolved).isDirectory()) {
    throw new CliError(`the project folder ${resolved} does not exist or is not a folder`, ExitCode.usage);
  }
  return fs.realpathSync(resolved);
}
