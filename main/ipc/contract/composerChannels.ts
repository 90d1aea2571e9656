import { z } from 'zod';
import { sessionId, type ChannelSpec } from './schemas.js';

/*
 * Issue 37: the composer's channels, one block. `/` commands (core harness/commands.ts) and `@` mentions of the
 * project's files and folders (core harness/mentions.ts: confined to the project, gitignore-aware).
 */

/** The longest prompt the contract carries (keel serve's WebSocket takes 8 MB a message); the model's window is checked in the core. */
export const PROMPT_MAX_CHARS = 4_000_000;

export const SlashCommand = z.object({
  name: z.string(),
  description: z.string(),
  argument: z.string().optional(),
  source: z.enum(['keel', 'project', 'user', 'mcp']),
});
export type SlashCommand = z.infer<typeof SlashCommand>;

// Issue 33: an MCP server's resource (`mcp:server:uri`, its title beside it) is mentioned as a file is.
export const Mention = z.object({
  path: z.string(),
  kind: z.enum(['file', 'folder', 'resource']),
  title: z.string().optional(),
});
export type Mention = z.infer<typeof Mention>;

export const composerChannels = {
  'commands.list': {
    doc: "The `/` commands a session's composer offers: Keel's own actions, then the project's and MCP prompts.",
    input: z.object({ sessionId }),
    output: z.object({ commands: z.array(SlashCommand) }),
  },
  'mentions.complete': {
    doc: "The session project's files and folders matching `query` (best first), for `@` mentions; gitignored ones left out.",
    input: z.object({
      sessionId,
      query: z.string().max(1000),
      limit: z.number().int().min(1).max(200).default(30),
    }),
    output: z.object({ mentions: z.array(Mention) }),
  },
} as const satisfies Record<string, ChannelSpec>;
