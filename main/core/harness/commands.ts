/*
 * The composer's `/` commands (issue 37): Keel's own, each an action the harness already has (compact, switch
 * the model or its effort, fork, stop, resume, rename…). Every host lists them from here
 * (the app through `commands.list`); a host runs the action behind a name with its own calls. Project command
 * files and MCP prompts join this list as `source: 'project' | 'mcp'` (they expand to a prompt, not an action).
 */

/**
 * Where a command comes from: Keel itself (an action), the project's (approved) command files, the user's own
 * command files in their home, an MCP server's prompts.
 */
export type CommandSource = 'keel' | 'project' | 'user' | 'mcp';

/** One `/` command as a menu shows it. */
export type SlashCommand = {
  /** Typed after the slash: `compact`, `model`… (lowercase, no spaces). */
  name: string;
  /** One line: what it does, in the user's terms. */
  description: string;
  /** What may follow the name (`<new title>`), when it takes something. */
  argument?: string;
  source: CommandSource;
};

/** Keel's own commands, in the order a menu lists them. */
const KEEL_COMMANDS: readonly SlashCommand[] = [
  {
    name: 'compact',
    description: 'Summarize the conversation so far to free the context window',
    source: 'keel',
  },
  { name: 'model', description: 'Switch this session to another model', source: 'keel' },
  { name: 'effort', description: 'Change how much the model reasons before it answers', source: 'keel' },
  { name: 'fork', description: 'Start a new session with this conversation so far', source: 'keel' },
  { name: 'stop', description: 'Stop the running turn', source: 'keel' },
  { name: 'resume', description: 'Continue a stopped or interrupted turn', source: 'keel' },
  { name: 'rename', description: 'Give this session a new title', argument: '<new title>', source: 'keel' },
  { name: 'trace', description: 'Show the trace and cost of this session', source: 'keel' },
  {
    name: 'terminal',
    description: 'Show the terminal: the commands run and a shell in this session’s box',
    source: 'keel',
  },
  { name: 'archive', description: 'Move this session out of the list (restore it any time)', source: 'keel' },
];

/**
 * The commands a session's composer offers: Keel's own first, then `extra` (project command files, MCP
 * prompts) whose names do not shadow Keel's (a project cannot redefine /stop).
 */
export function listCommands(extra: readonly SlashCommand[] = []): SlashCommand[] {
  const taken = new Set(KEEL_COMMANDS.map((command) => command.name));
  return [...KEEL_COMMANDS, ...extra.filter((command) => !taken.has(command.name))];
}
