import type { Command } from 'commander';
import {
  DEFAULT_SYSTEM_PROMPT,
  formatPayloadText,
  projectView,
  systemPromptFor,
} from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { withSessionLog } from '../session.js';

type PayloadOptions = { json?: boolean; withoutCompaction?: number; system?: string };

/** `keel payload SESSION [--json] [--without-compaction SEQ] [--system TEXT]`: what the next turn would send. */
export function registerPayload(program: Command, context: CliContext): void {
  program
    .command('payload')
    .description('print the provider-neutral payload the next turn would send (the projection of the log)')
    .argument('<session>', 'session id')
    .option('--json', 'print the payload as JSON')
    .option(
      '--without-compaction <seq>',
      'rebuild the payload as if the compaction at this seq had not happened',
      parsePositiveInteger,
    )
    .option('--system <text>', "system prompt to use (default: the session's pinned prompt, else Keel's)")
    .action((session: string, options: PayloadOptions) => {
      const payload = withSessionLog(context.home(), session, (log) => {
        const skip = options.withoutCompaction;
        if (skip !== undefined) {
          const [event] = log.read({ fromSeq: skip, toSeq: skip });
          if (event?.kind !== 'compaction') {
            throw new CliError(
              event === undefined
                ? `session ${session} has no event ${skip} (it has ${log.lastSeq()}); see keel show ${session}`
                : `event ${skip} of session ${session} is ${event.kind}, not a compaction; see keel show ${session}`,
            );
          }
        }
        const [created] = log.read({ fromSeq: 1, limit: 1 });
        // The same system text a turn sends: the pinned prompt plus the workspace paragraph of checkout sessions.
        const pinned = created?.kind === 'session_created' ? systemPromptFor(log.dir, created) : undefined;
        const system = options.system ?? pinned ?? DEFAULT_SYSTEM_PROMPT;
        const view = log.projectionView(skip === undefined ? {} : { withoutCompaction: skip });
        return projectView(view, { system });
      });
      context.io.stdout(
        options.json ? `${JSON.stringify(payload, null, 2)}\n` : `${formatPayloadText(payload)}\n`,
      );
    });
}
