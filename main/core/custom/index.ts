import type { CommandUse } from '../../common/customEvents.js';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { agentCatalogue, type CustomAgent } from './agents.js';
import { commandCatalogue, type CustomCommand } from './commands.js';
import { skillCatalogue, type Skill } from './skills.js';
import type { CustomFile, CustomOrigin, CustomProblem } from './types.js';

export type { CustomAgent } from './agents.js';
export type { CustomCommand } from './commands.js';
export type { Skill } from './skills.js';
export type { CustomFile, CustomOrigin, CustomProblem } from './types.js';

/** The files of each kind a loader found (user files, and project files once approved). */
export type CustomFiles = { skills: CustomFile[]; commands: CustomFile[]; agents: CustomFile[] };

/** What a session may use: the valid definitions of each kind, and every file ignored with its line. */
export type CustomSetup = {
  skills: Skill[];
  commands: CustomCommand[];
  agents: CustomAgent[];
  problems: CustomProblem[];
};

export const EMPTY_SETUP: CustomSetup = Object.freeze({ skills: [], commands: [], agents: [], problems: [] });

/** Parses every file (pure): a malformed file is a problem and nothing of it is used. */
export function customSetup(files: CustomFiles): CustomSetup {
  const skills = skillCatalogue(files.skills);
  const commands = commandCatalogue(files.commands);
  const agents = agentCatalogue(files.agents);
  return {
    skills: skills.items,
    commands: commands.items,
    agents: agents.items,
    problems: [...skills.problems, ...commands.problems, ...agents.problems],
  };
}

/** What a `custom_listed` event records of a setup: names, descriptions and origins (no bodies), and problems. */
export function listingOf(
  setup: CustomSetup,
): Pick<EventOf<'custom_listed'>, 'skills' | 'agents' | 'problems'> {
  const origin = (item: CustomOrigin): CustomOrigin => ({
    scope: item.scope,
    layout: item.layout,
    shown: item.shown,
    sha256: item.sha256,
  });
  return {
    skills: setup.skills.map((skill) => ({
      ...origin(skill),
      name: skill.name,
      description: skill.description,
    })),
    agents: setup.agents.map((agent) => ({
      ...origin(agent),
      name: agent.name,
      description: agent.description,
      ...(agent.tools ? { tools: agent.tools } : {}),
      ...(agent.model ? { model: agent.model } : {}),
    })),
    ...(setup.problems.length > 0 ? { problems: setup.problems } : {}),
  };
}

/** The custom command of the newest user message (its `allowed-tools` bound the turn it started), if any. */
export function commandOfLastMessage(log: {
  lastSeqOfKind(kind: 'user_message'): number | undefined;
  read(options: { fromSeq: number; limit: number }): readonly SessionEvent[];
}): CommandUse | undefined {
  const seq = log.lastSeqOfKind('user_message');
  const event = seq === undefined ? undefined : log.read({ fromSeq: seq, limit: 1 })[0];
  return event?.kind === 'user_message' ? event.command : undefined;
}
