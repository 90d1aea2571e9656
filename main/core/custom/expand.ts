import type { CommandUse } from '../../common/customEvents.js';
import type { ModelPin } from '../../common/events.js';
import { MODEL_CATALOGUE } from '../../providers/catalogue.js';
import { substituteArguments, type CustomCommand } from './commands.js';

/** A `/name` the user typed that no command answers, or answers ambiguously: said, never sent as a prompt. */
export class UnknownCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownCommandError';
  }
}

/** What a prompt that names a command becomes: the expanded prompt (what is recorded) and the command's use. */
export type CommandExpansion = { prompt: string; command: CommandUse; notes: string[] };

/** `/name rest`: the name (letters, digits, `_ - . :`) and the rest; undefined when the text is not a command. */
export function splitCommandLine(text: string): { name: string; args: string } | undefined {
  const match = /^\/([A-Za-z0-9_.:-]+)(?:[ \t\n]+([\s\S]*))?$/.exec(text.replace(/\s+$/, ''));
  if (!match) return undefined; // `/src/x.ts fails` is a prompt about a path, not a command
  return { name: match[1] as string, args: match[2] ?? '' };
}

/**
 * The command `text` names, expanded (`$ARGUMENTS`, `$1`…`$9`), or undefined when `text` does not start with
 * `/name`. A namespaced command answers to its full name (`/frontend:component`) and, when no other command
 * ends so, to its last part (`/component`), as Claude Code's two generations of the format do. Throws
 * UnknownCommandError naming the commands there are.
 */
export function expandCommand(
  commands: readonly CustomCommand[],
  text: string,
): CommandExpansion | undefined {
  const line = splitCommandLine(text);
  if (!line) return undefined;
  const exact = commands.find((command) => command.name === line.name);
  const byLastPart = line.name.includes(':')
    ? []
    : commands.filter((command) => command.name.endsWith(`:${line.name}`));
  if (!exact && byLastPart.length > 1) {
    throw new UnknownCommandError(
      `/${line.name} is ambiguous: ${byLastPart.map((c) => `/${c.name}`).join(', ')}; type the full name`,
    );
  }
  const command = exact ?? byLastPart[0];
  if (!command) {
    const known = commands.map((c) => `/${c.name}`).join(', ');
    throw new UnknownCommandError(
      `there is no command /${line.name} (${known ? `commands: ${known}` : 'no custom commands are set up'}; ` +
        "a project's commands count once approved with keel trust). To send text starting with / as it is, start it with a space.",
    );
  }
  const notes = command.unknownTools?.length
    ? [
        `/${command.name}: allowed-tools entries Keel has no tool for were left out: ${command.unknownTools.join(', ')}`,
      ]
    : [];
  return {
    prompt: substituteArguments(command.template, line.args),
    command: {
      scope: command.scope,
      layout: command.layout,
      shown: command.shown,
      sha256: command.sha256,
      name: command.name,
      arguments: line.args.trim(),
      ...(command.allowedTools ? { allowedTools: command.allowedTools } : {}),
      ...(command.model ? { model: command.model } : {}),
    },
    notes,
  };
}

const FAMILIES = ['opus', 'sonnet', 'haiku'] as const;

/**
 * The model id a command's or agent's `model:` means for a provider: an id as it is; Claude Code's aliases
 * (`opus`, `sonnet`, `haiku`) the newest of that family in Keel's catalogue, for Anthropic only. Undefined
 * when it means nothing for that provider (an alias elsewhere).
 */
export function resolveModelName(model: string, provider: ModelPin['provider']): string | undefined {
  if (!(FAMILIES as readonly string[]).includes(model)) return model;
  if (provider !== 'anthropic') return undefined;
  return MODEL_CATALOGUE.find(
    (info) =>
      info.provider === 'anthropic' && info.id.startsWith(`claude-${model}-`) && info.status === 'current',
  )?.id;
}
