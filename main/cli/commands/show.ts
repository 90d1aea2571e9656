import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { formatEventLines } from '../format.js';
import { readAllEvents, withSessionLog } from '../session.js';

/** `keel show SESSION [--json]`: the session's events, one readable line each (or JSON). */
export function registerShow(program: Command, context: CliContext): void {
  program
    .command('show')
    .description("print a session's events: seq, kind and a short summary per line")
    .argument('<session>', 'session id')
    .option('--json', 'print the events as a JSON array')
    .action((session: string, options: { json?: boolean }) => {
      const events = withSessionLog(context.home(), session, readAllEvents);
      context.io.stdout(
        options.json ? `${JSON.stringify(events, null, 2)}\n` : `${formatEventLines(events)}\n`,
      );
    });
}
