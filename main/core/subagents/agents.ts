import type { AgentUse } from '../../common/customEvents.js';
import type { ModelPin } from '../../common/events.js';
import { MODEL_CATALOGUE } from '../../providers/catalogue.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { SPAWN_SUBAGENT } from '../../tools/spawnSubagent.js';
import type { CustomAgent } from '../custom/index.js';
import { resolveModelName } from '../custom/expand.js';
import { modeOfTools, type ChildTools } from './spec.js';

/**
 * A custom agent's tools among the parent's (issue #30): its `tools:` (Keel names) that the parent has, or,
 * without `tools:`, every tool of the parent (Claude Code's agents inherit them); never spawn_subagent (no
 * nesting), never more than the parent. `dropped`: what it named that the parent lacks (said in a notice).
 */
export function chooseAgentTools(
  parent: ToolRegistry,
  agent: CustomAgent,
): ChildTools & { dropped: string[] } {
  const own = parent.names().filter((name) => name !== SPAWN_SUBAGENT);
  const wanted = agent.tools ?? own;
  const tools = own.filter((name) => wanted.includes(name));
  const dropped = [
    ...wanted.filter((name) => !own.includes(name) && name !== SPAWN_SUBAGENT),
    ...(agent.unknownTools ?? []),
  ];
  return { tools, mode: modeOfTools(parent, tools), dropped };
}

/** What subagent_started records of the agent: enough to create the child after a crash, whatever the file became. */
export function agentUse(agent: CustomAgent): AgentUse {
  return {
    scope: agent.scope,
    layout: agent.layout,
    shown: agent.shown,
    sha256: agent.sha256,
    name: agent.name,
    prompt: agent.prompt,
    ...(agent.model ? { model: agent.model } : {}),
  };
}

/** The child's system prompt: Keel's (where it works, the box, the subagent note) and then the agent's own. */
export function agentSystemPrompt(base: string, agent: AgentUse): string {
  return `${base}\n\n# Your role: the ${agent.name} agent (${agent.shown})\n\n${agent.prompt}`;
}

/**
 * The child's model: the parent's pin, or the agent's `model:` on the parent's provider and endpoint (an
 * alias resolved in the catalogue, whose window it takes; an id Keel does not know keeps the parent's
 * window). `note`: why the agent's model was not used (an alias the provider has no meaning for).
 */
export function agentPin(parent: ModelPin, agent: AgentUse): { pin: ModelPin; note?: string } {
  if (agent.model === undefined) return { pin: parent };
  const model = resolveModelName(agent.model, parent.provider);
  if (model === undefined) {
    return {
      pin: parent,
      note: `agent ${agent.name} asks for model "${agent.model}", which ${parent.provider} has no meaning for; it runs on ${parent.model}`,
    };
  }
  if (model === parent.model) return { pin: parent };
  const known = MODEL_CATALOGUE.find((info) => info.provider === parent.provider && info.id === model);
  const { reasoningEffort: _effort, ...rest } = parent;
  return { pin: { ...rest, model, contextWindow: known?.contextWindow ?? parent.contextWindow } };
}
