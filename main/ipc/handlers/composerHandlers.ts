import { completeMentions, listCommands, promptCommands } from '../../core/harness/index.js';
import type { composerChannels } from '../contract/composerChannels.js';
import { IpcFailure } from '../errors.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** Issue 37: the composer's `/` commands and `@` mentions, thin adapters over main/core/harness. */
export function composerHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof composerChannels> {
  const { readLog } = ctx;
  const projectOf = (sessionId: string): string =>
    readLog(sessionId, (log) => {
      const [created] = log.read({ fromSeq: 1, limit: 1 });
      if (created?.kind !== 'session_created') throw new IpcFailure('not_found', `no session ${sessionId}`);
      return created.projectFolder;
    });
  return {
    'commands.list': (args) => {
      // The user's command files and the project's approved ones (issue 30), after Keel's own.
      const custom = promptCommands({ home: ctx.home, project: projectOf(args.sessionId) });
      return {
        commands: listCommands(
          custom.map((command) => ({
            name: command.name,
            description: command.description,
            ...(command.argumentHint ? { argument: command.argumentHint } : {}),
            source: command.scope,
          })),
        ),
      };
    },
    'mentions.complete': async (args) => ({
      mentions: await completeMentions(projectOf(args.sessionId), args.query, args.limit),
    }),
  };
}
