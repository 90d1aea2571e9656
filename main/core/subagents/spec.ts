import { z } from 'zod';
import type { EventOf, Policy, ToolMode } from '../../common/events.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { SPAWN_SUBAGENT, subagentLimits, type SpawnSubagentArgs } from '../../tools/spawnSubagent.js';

/** A child's budget with every limit filled in. Turns are model requests; tokens are input plus output. */
export const SubagentBudget = z.object({
  maxTurns: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  wallTimeMs: z.number().int().positive(),
});
export type SubagentBudget = z.infer<typeof SubagentBudget>;

/**
 * What a child session records about itself in `session_created.metadata.subagent`: whose call it answers,
 * the tools it may use (a subset of the parent's) and its budget. Any host that runs the child reads it, so a
 * child resumed on its own (`keel resume CHILD`) keeps its restricted tool set.
 */
export const SubagentSpec = z.object({
  parentId: z.string().min(1),
  toolCallId: z.string().min(1),
  tools: z.array(z.string().min(1)),
  budget: SubagentBudget,
});
export type SubagentSpec = z.infer<typeof SubagentSpec>;

/** The key of the spec in session_created.metadata. */
export const SUBAGENT_METADATA_KEY = 'subagent';

/**
 * The subagent spec of a session, or undefined for a session that is not a child. Throws (naming the
 * session) when the metadata is there but malformed: a child must never run with the full tool set.
 */
export function readSubagentSpec(created: EventOf<'session_created'>): SubagentSpec | undefined {
  const raw = created.metadata?.[SUBAGENT_METADATA_KEY];
  if (raw === undefined) return undefined;
  const parsed = SubagentSpec.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `session ${created.sessionId} is a subagent whose metadata is invalid (${z.prettifyError(parsed.error)}); ` +
        'it cannot run',
    );
  }
  return parsed.data;
}

/** The budget a call asked for, with the defaults of `subagentLimits` where it named none. */
export function resolveBudget(requested: SpawnSubagentArgs['budget']): SubagentBudget {
  return {
    maxTurns: requested?.maxTurns ?? subagentLimits.defaultMaxTurns,
    maxTokens: requested?.maxTokens ?? subagentLimits.defaultMaxTokens,
    wallTimeMs: requested?.wallTimeMs ?? subagentLimits.defaultWallTimeMs,
  };
}

/** A child's tool set: names in the parent's registration order and the mode whose registry holds them. */
export type ChildTools = { tools: string[]; mode: ToolMode };

/**
 * Chooses a child's tools from the parent's registry: the ones asked for (default: the parent's read tools).
 * Refuses, with a message for the model, any name the parent lacks, and spawn_subagent itself (no nesting).
 * The mode is read-only when every chosen tool only reads.
 */
export function chooseChildTools(
  parent: ToolRegistry,
  requested: readonly string[] | undefined,
): ({ ok: true } & ChildTools) | { ok: false; error: string } {
  const own = parent.names().filter((name) => name !== SPAWN_SUBAGENT);
  if (requested?.includes(SPAWN_SUBAGENT)) {
    return { ok: false, error: `a subagent cannot spawn subagents: leave ${SPAWN_SUBAGENT} out of tools` };
  }
  const missing = [...new Set(requested ?? [])].filter((name) => !own.includes(name));
  if (missing.length > 0) {
    return {
      ok: false,
      error:
        `a subagent may only use tools you have; you do not have ${missing.map((m) => `"${m}"`).join(', ')} ` +
        `(your tools: ${own.join(', ')}). No subagent was started.`,
    };
  }
  const wanted = new Set(
    requested ?? own.filter((name) => parent.get(name)?.kind === 'read' && !BACKGROUND_TOOLS.has(name)),
  );
  const tools = own.filter((name) => wanted.has(name));
  return { ok: true, tools, mode: modeOfTools(parent, tools) };
}

/** Read tools that serve only run_command's background commands: a child without run_command has none to read. */
const BACKGROUND_TOOLS = new Set(['command_output', 'stop_command']);

/** The mode a set of the parent's tools needs: read-only unless one of them edits or runs commands. */
export function modeOfTools(parent: ToolRegistry, tools: readonly string[]): ToolMode {
  return tools.every((name) => parent.get(name)?.kind === 'read') ? 'read-only' : 'write';
}

/** A child's policy: the parent's, or read-only (stricter) when the child only reads. */
export function childPolicy(parentPolicy: Policy, mode: ToolMode): Policy {
  return mode === 'read-only' ? 'read-only' : parentPolicy;
}
