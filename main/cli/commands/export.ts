import type { Command } from 'commander';
import { exportSession } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { writeFileAtomically } from '../files.js';

/** `keel export SESSION [-o FILE]`: the session's events as JSON Lines, to stdout or a file. */
export function registerExport(program: Command, context: CliContext): void {
  program
    .command('export')
    .description('write a session as JSON Lines, one event per line (see "Session export format")')
    .argument('<session>', 'session id')
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .action((session: string, options: { output?: string }) => {
      const home = context.home();
      if (options.output === undefined) {
        exportSession(home, session, context.io.stdout);
        return;
      }
      writeFileAtomically(options.output, (write) => exportSession(home, session, write));
    });
}
