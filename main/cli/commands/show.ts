import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { formatEventLine } from '../format.js';
import { forEachEventPage, withSessionLog } from '../session.js';

/** `keel show SESSION [--json]`: the session's events, one readable line each (or JSON), page by page. */
export function registerShow(program: Command, context: CliContext): void {
  program
    .command('show')
    .description("print a session's events: seq, kind and a short summary per line")
    .argument('<session>', 'session id')
    .option('--json', 'print the events as a JSON array')
    .action((session: string, options: { json?: boolean }) => {
      withSessionLog(context.home(), session, (log) => {
        const seqWidth = String(log.lastSeq()).length;
        let first = true;
        if (options.json) context.io.stdout('[');
        forEachEventPage(log, (events) => {
          let text = '';
          for (const event of events) {
            if (!options.json) {
              text += `${formatEventLine(event, seqWidth)}\n`;
              continue;
            }
            const { seq, kind, at, ...rest } = event;
            text += `${first ? '\n' : ',\n'}${indent(JSON.stringify({ seq, kind, at, ...rest }, null, 2))}`;
            first = false;
          }
          context.io.stdout(text);
        });
        if (options.json) context.io.stdout(first ? ']\n' : '\n]\n');
      });
    });
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}
