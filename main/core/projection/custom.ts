import type { EventOf } from '../../common/events.js';

/** First line of the message that lists the skills and custom agents. */
export const CUSTOM_HEADING = '# Skills and custom agents';

const SKILLS_PREAMBLE =
  'Skills are folders of instructions for particular tasks, set up by the user or the project. When a task ' +
  "matches a skill's description, call load_skill with its name before you start and follow what it says; " +
  'load_skill with a path reads one of the files it names. Load only the skills the task needs.';

const AGENTS_PREAMBLE =
  'Custom agents are subagents with instructions and tools of their own: call spawn_subagent with `agent` set ' +
  'to the name (and the task) when a sub-task matches its description.';

/**
 * The message of a `custom_listed` event (names and descriptions only; bodies are loaded on use), or undefined
 * when it lists nothing. Byte-stable for the same event: it sits in the cached prefix after the instructions.
 */
export function formatCustomListed(event: EventOf<'custom_listed'>): string | undefined {
  if (event.skills.length === 0 && event.agents.length === 0) return undefined;
  const parts = [CUSTOM_HEADING];
  if (event.skills.length > 0) {
    parts.push(
      `## Skills\n\n${SKILLS_PREAMBLE}\n\n` +
        event.skills.map((skill) => `- ${skill.name}: ${skill.description} (${skill.shown})`).join('\n'),
    );
  }
  if (event.agents.length > 0) {
    parts.push(
      `## Custom agents\n\n${AGENTS_PREAMBLE}\n\n` +
        event.agents
          .map((agent) => {
            const tools = agent.tools ? ` [tools: ${agent.tools.join(', ')}]` : '';
            return `- ${agent.name}: ${agent.description}${tools}`;
          })
          .join('\n'),
    );
  }
  return parts.join('\n\n');
}
