import { z } from 'zod';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolModule } from './types.js';

/** The model-facing name of the tool that delegates a sub-task to a child session. */
export const SPAWN_SUBAGENT = 'spawn_subagent';

/** Bounds and defaults of a subagent's budget and answer; units are in the names. */
export const subagentLimits = {
  /** Model requests a child makes when the call names no budget. */
  defaultMaxTurns: 20,
  /** The most model requests a call may give a child (a turn's own default budget). */
  maxTurns: 50,
  /** Input plus output tokens (summed over the child's requests) when the call names no budget. */
  defaultMaxTokens: 500_000,
  /** The smallest token budget a call may give (one request of a small window). */
  minTokens: 1_000,
  /** Wall time a child may run, per run (a resume after an approval starts a new run). */
  defaultWallTimeMs: 600_000,
  minWallTimeMs: 1_000,
  maxWallTimeMs: 1_800_000,
  /** Longest task text, in characters. */
  maxTaskChars: 20_000,
  /** Bytes (UTF-8) of the child's answer that enter the parent; the rest stays in the child's log. */
  resultMaxBytes: 4_096,
} as const;

const budget = z.strictObject({
  maxTurns: z
    .number()
    .int()
    .min(1)
    .max(subagentLimits.maxTurns)
    .optional()
    .describe(`Model requests the subagent may make (default ${subagentLimits.defaultMaxTurns}).`),
  maxTokens: z
    .number()
    .int()
    .min(subagentLimits.minTokens)
    .optional()
    .describe(
      `Input plus output tokens it may use over all its requests (default ${subagentLimits.defaultMaxTokens}).`,
    ),
  wallTimeMs: z
    .number()
    .int()
    .min(subagentLimits.minWallTimeMs)
    .max(subagentLimits.maxWallTimeMs)
    .optional()
    .describe(`Milliseconds it may run (default ${subagentLimits.defaultWallTimeMs}).`),
});

const parameters = z.strictObject({
  task: z
    .string()
    .min(1)
    .max(subagentLimits.maxTaskChars)
    .describe(
      'The sub-task, self-contained: the subagent sees nothing of this conversation, only this text.',
    ),
  tools: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe(
      'Names of your own tools the subagent may use (never more than yours; it cannot spawn subagents). ' +
        'Default: your read-only tools.',
    ),
  budget: budget.optional().describe('Limits; a subagent that reaches one returns what it has, marked so.'),
  agent: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'A custom agent listed under "Custom agents": the subagent gets its instructions, tools and model (leave tools out).',
    ),
});

/** Arguments of spawn_subagent as validated by its schema. */
export type SpawnSubagentArgs = z.infer<typeof parameters>;

/**
 * spawn_subagent: runs a sub-task in a child session with its own window, a subset of the caller's tools and
 * its own budget; only its final answer (at most 4 KiB, with the child's id) comes back. The turn engine
 * routes calls of kind `subagent` to the subagent runner (main/core/subagents), so `execute` only answers
 * a caller that runs the tool outside a turn.
 */
export const spawnSubagentTool: ToolModule<typeof parameters> = {
  name: SPAWN_SUBAGENT,
  description:
    'Delegate a self-contained sub-task (search a large codebase, read many files to answer one question) to ' +
    'a subagent: a fresh session with its own context window, a subset of your tools and its own budget. ' +
    'Only its final answer comes back to you (at most 4 KiB, with the id of its session, whose log keeps the ' +
    'details), so its tool output never fills your window. Ask it for a concise answer with file paths.',
  parameters,
  mode: 'read-only',
  kind: 'subagent',
  execute: () =>
    Promise.resolve(
      errorOutcome(`${SPAWN_SUBAGENT} runs only inside a turn, where the subagent runner answers it`),
    ),
  preview: () => previewSubject(),
  resume: { rule: 'child_session' },
};
