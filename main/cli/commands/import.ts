import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { importSession, InvalidExportError, SessionExistsError } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { readInputFile } from '../files.js';

/**
 * `keel import FILE [--keep-id] [--project DIR]`: validates every line, then writes the session (or nothing);
 * prints its id. The session is a record: its grants are inactive, its endpoint needs a re-pin, and it runs
 * only on the folder `--project` names (see core/log/imported.ts).
 */
export function registerImport(program: Command, context: CliContext): void {
  program
    .command('import')
    .description('import a session from a JSON Lines export (- reads standard input); prints the session id')
    .argument('<file>', 'the export file')
    .option('--keep-id', "keep the file's session id instead of minting a new one (fails if it exists)")
    .option(
      '--project <dir>',
      "the project folder the session works on here (the file's own is never used; without it the session is read, not run)",
    )
    .action(async (file: string, options: { keepId?: boolean; project?: string }) => {
      const project = options.project === undefined ? undefined : projectFolder(options.project);
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

/** The real path of an existing folder named by --project, or a usage error. */
function projectFolder(dir: string): string {
  const resolved = path.resolve(dir);
  if (!fs.existsSync(resolved) || !fs.statSync(resolved).isDirectory()) {
    throw new CliError(`the project folder ${resolved} does not exist or is not a folder`, ExitCode.usage);
  }
  return fs.realpathSync(resolved);
}
