import { z } from 'zod';
import { eventBase } from './eventBase.js';

/*
 * Issue #30: the event vocabulary of skills, custom commands and custom agents (main/core/custom), kept out
 * of events.ts, which imports it: where a definition came from, a command's or an agent's use, and the
 * `custom_listed` event.
 */

const { base } = eventBase;

/** Where a skill, command or agent was defined: the user's home or the (approved) project, in which layout. */
export const CustomOrigin = z.object({
  scope: z.enum(['user', 'project']),
  layout: z.enum(['claude', 'agents', 'keel']),
  /** The file as people see it: `~/.claude/commands/review.md`, `.agents/skills/release/SKILL.md`. */
  shown: z.string().min(1),
  /** sha256 (hex) of the file's bytes as read. */
  sha256: z.string().min(1),
});

/** A custom command the user's message came from (`/review src/`): the message's content is its expanded prompt. */
export const CommandUse = z.object({
  ...CustomOrigin.shape,
  name: z.string().min(1),
  /** The text after the command's name, as typed. */
  arguments: z.string(),
  /** The Keel tools the command's `allowed-tools` leaves this turn (absent: the session's own). */
  allowedTools: z.array(z.string().min(1)).optional(),
  /** The model its `model:` asked for (applied at creation, or the session's pin already). */
  model: z.string().optional(),
});
export type CommandUse = z.infer<typeof CommandUse>;

/** A custom agent a spawn_subagent call ran: its system prompt and model are the child's. */
export const AgentUse = z.object({
  ...CustomOrigin.shape,
  name: z.string().min(1),
  prompt: z.string(),
  model: z.string().optional(),
});
export type AgentUse = z.infer<typeof AgentUse>;

/**
 * The skills (SKILL.md folders) and custom agents a turn found for the session (the user's, and the project's
 * once approved), appended when they differ from the newest such event. The newest is projected right after
 * the project instructions: names and descriptions only, so the model knows what `load_skill` and
 * spawn_subagent's `agent` can give it; the prefix moves only when the list does.
 */
export const CustomListed = z.object({
  ...base,
  kind: z.literal('custom_listed'),
  skills: z.array(z.object({ ...CustomOrigin.shape, name: z.string().min(1), description: z.string() })),
  agents: z.array(
    z.object({
      ...CustomOrigin.shape,
      name: z.string().min(1),
      description: z.string(),
      tools: z.array(z.string()).optional(),
      model: z.string().optional(),
    }),
  ),
  /** Files ignored whole, each with its line and why. */
  problems: z
    .array(z.object({ path: z.string(), line: z.number().int().positive(), message: z.string() }))
    .optional(),
});
