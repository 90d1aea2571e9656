import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { openSessionIndex, STOP_REQUEST_FILE } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { withSessionLog } from '../session.js';

/** `keel stop SESSION`: asks a turn running in another process to stop (it records the interruption). */
export function registerStop(program: Command, context: CliContext): void {
  program
    .command('stop')
    .description('stop the turn a session is running in another terminal or in the app')
    .argument('<session>', 'session id')
    .action((session: string) => {
      const home = context.home();
      const dir = withSessionLog(home, session, (log) => log.dir);
      const index = openSessionIndex(home);
      const status = (() => {
        try {
          return index.get(session)?.status;
        } finally {
          index.close();
        }
      })();
      if (status !== 'running') {
        context.io.stderr(`keel: session ${session} is not running a turn (status ${status ?? 'unknown'})\n`);
        return;
      }
      fs.writeFileSync(path.join(dir, STOP_REQUEST_FILE), `${process.pid}\n`);
      context.io.stderr(`keel: asked session ${session} to stop\n`);
    });
}
