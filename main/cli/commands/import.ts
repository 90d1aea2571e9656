import type { Command } from 'commander';
import { SessionExistsError } from '../../core/log/sessionLog.js';
import { InvalidExportError, importSession } from '../../core/log/transfer.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { readInputFile } from '../files.js';

/** `keel import FILE [--keep-id]`: validates every line, then writes the session (or nothing); prints its id. */
export function registerImport(program: Command, context: CliContext): void {
  program
    .command('import')
    .description('import a session from a JSON Lines export (- reads standard input); prints the session id')
    .argument('<file>', 'the export file')
    .option('--keep-id', "keep the file's session id instead of minting a new one (fails if it exists)")
    .action(async (file: string, options: { keepId?: boolean }) => {
      const text = file === '-' ? await context.io.readStdin() : readInputFile(file);
      const name = file === '-' ? 'standard input' : file;
      try {
        const { id } = importSession(context.home(), text, { keepId: options.keepId === true });
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
