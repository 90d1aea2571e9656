import {
  completeMentions,
  listCommands,
  sessionPromptCommands,
  sessionResourceMentions,
} from '../../core/harness/index.js';
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
    // The user's command files, the project's approved ones (issue 30) and the MCP servers' prompts (issue 33),
    // after Keel's own.
    'commands.list': async (args) => {
      projectOf(args.sessionId);
      return { commands: listCommands(await sessionPromptCommands(ctx.home, args.sessionId)) };
    },
    // The project's files, then the MCP servers' resources (issue 33) matching the same text.
    'mentions.complete': async (args) => {
      const [files, resources] = await Promise.all([
        completeMentions(projectOf(args.sessionId), args.query, args.limit),
        sessionResourceMentions(ctx.home, args.sessionId, args.query, args.limit),
      ]);
      // A full list of files leaves room for the resources that match (a few at most).
      const room = Math.max(0, args.limit - Math.min(resources.length, 10));
      return { mentions: [...files.slice(0, room), ...resources].slice(0, args.limit) };
    },
  };
}
