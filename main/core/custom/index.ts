import { agentCatalogue, type CustomAgent } from './agents.js';
import { commandCatalogue, type CustomCommand } from './commands.js';
import { skillCatalogue, type Skill } from './skills.js';
import type { CustomFile, CustomProblem } from './types.js';

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
