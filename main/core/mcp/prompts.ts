import type { McpPromptInfo, McpPromptMessages } from '../../mcp/resources.js';

/*
 * MCP prompts as `/` commands (issues 30 and 33): a server's prompt is `/mcp__<server>__<prompt>` in every
 * host's `/` menu, its arguments typed after the name. Pure: the name's parts, the typed text as the prompt's
 * arguments, the filled messages as the one user message a turn records. A server name has no `__`
 * (McpServerName), so the name splits one way.
 */

const PREFIX = 'mcp__';

/** The `/` name of a server's prompt. */
export function mcpPromptCommandName(server: string, prompt: string): string {
  return `${PREFIX}${server}__${prompt}`;
}

/** The server and prompt a `/` name stands for, or undefined when it is not an MCP prompt's name. */
export function parseMcpPromptCommandName(name: string): { server: string; prompt: string } | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const rest = name.slice(PREFIX.length);
  const cut = rest.indexOf('__');
  if (cut <= 0 || cut + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, cut), prompt: rest.slice(cut + 2) };
}

/** What may follow a prompt's name, as a menu shows it: `<file> [focus]`. */
export function mcpPromptArgumentHint(prompt: McpPromptInfo): string | undefined {
  if (prompt.arguments.length === 0) return undefined;
  return prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ');
}

/** Text typed after a prompt's name that does not fit its arguments; the message says how to type them. */
export class McpPromptArgumentsError extends Error {}

/**
 * The typed text as the prompt's arguments. `name=value` (quotes keep spaces: `focus="error handling"`) sets
 * one by name; other words fill the arguments not named, in the prompt's order. A prompt with one argument
 * takes the whole text, spaces and all (`/mcp__s__ask why does the build fail`). Missing required arguments
 * are the server call's refusal (fillPrompt), so that message is the same everywhere.
 */
export function mcpPromptArguments(prompt: McpPromptInfo, text: string): Record<string, string> {
  const declared = prompt.arguments.map((a) => a.name);
  const usage =
    `/${mcpPromptCommandName(prompt.server, prompt.name)} ${mcpPromptArgumentHint(prompt) ?? ''}`.trim();
  const trimmed = text.trim();
  if (trimmed === '') return {};
  const words = splitWords(trimmed);
  const named = words.flatMap((word) => {
    const match = /^([A-Za-z0-9_.-]+)=([\s\S]*)$/.exec(word.raw);
    return match && declared.includes(match[1] as string) ? [match[1] as string] : [];
  });
  if (declared.length === 1 && named.length === 0) return { [declared[0] as string]: trimmed };
  const args: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of words) {
    const match = /^([A-Za-z0-9_.-]+)=/.exec(word.raw);
    if (match && declared.includes(match[1] as string)) {
      args[match[1] as string] = unquote(word.raw.slice((match[1] as string).length + 1));
    } else positional.push(word.value);
  }
  const open = declared.filter((name) => !(name in args));
  if (positional.length > open.length) {
    throw new McpPromptArgumentsError(
      declared.length === 0
        ? `${usage} takes no arguments`
        : `${usage}: too many words for its arguments (${declared.join(', ')}); quote a value with spaces, or name it: ${declared[0]}="…"`,
    );
  }
  positional.forEach((value, index) => {
    args[open[index] as string] = value;
  });
  return args;
}

/** Words split at spaces outside quotes: `raw` as typed, `value` without its quotes. */
function splitWords(text: string): { raw: string; value: string }[] {
  const words = text.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
  return words.map((raw) => ({ raw, value: unquote(raw) }));
}

function unquote(text: string): string {
  return text.replace(/"([^"]*)"|'([^']*)'/g, (_m, double: string | undefined, single: string | undefined) =>
    double !== undefined ? double : (single ?? ''),
  );
}

/**
 * A filled prompt as the one user message a turn records: the messages' text in order, an assistant message
 * marked as such (the turn has one user message; the server's example reply stays visible as its words).
 */
export function mcpPromptMessageText(filled: McpPromptMessages): string {
  return filled.messages
    .map((message) => (message.role === 'assistant' ? `[assistant]\n${message.text}` : message.text))
    .join('\n\n');
}
