import { listMcpPrompts, listMcpResources } from '../mcp/admin.js';
import { matchResources, mcpResourceMentionText } from '../mcp/resourceMentions.js';
import type { McpResourceInfo } from '../../mcp/resources.js';
import { mcpPromptArgumentHint, mcpPromptCommandName } from '../mcp/prompts.js';
import type { SlashCommand } from './commands.js';
import { promptCommands, readSessionPlace } from './customCommands.js';

/*
 * The `/` commands a session's composer adds to Keel's own (issues 30 and 33), for every host (the app's
 * commands.list, the editor agent's available commands): the user's and the project's approved command files,
 * then the configured MCP servers' prompts (`/mcp__server__prompt`, started once in the box to ask). Sending
 * one expands it through expandSessionPrompt.
 */

/** The configured MCP servers' prompts as `/` commands; a server that does not start lists none. */
export async function mcpPromptCommands(place: {
  home: string;
  project?: string;
  env?: NodeJS.ProcessEnv;
  networkAllow?: readonly string[];
}): Promise<SlashCommand[]> {
  const prompts = await listMcpPrompts(place.home, place.project, {
    ...(place.env ? { env: place.env } : {}),
    ...(place.networkAllow?.length ? { networkAllow: place.networkAllow } : {}),
  }).catch(() => []);
  return prompts.map((prompt) => {
    const hint = mcpPromptArgumentHint(prompt);
    const said = prompt.description ?? prompt.title ?? prompt.name;
    return {
      name: mcpPromptCommandName(prompt.server, prompt.name),
      // The server's words: one line, bounded (untrusted text shown as text).
      description: `${said.replace(/\s+/g, ' ').trim().slice(0, 160)} (MCP ${prompt.server})`,
      ...(hint ? { argument: hint } : {}),
      source: 'mcp' as const,
    };
  });
}

/** A session's command files and MCP prompts as `/` commands (Keel's own are added by listCommands). */
export async function sessionPromptCommands(
  home: string,
  sessionId: string,
  env?: NodeJS.ProcessEnv,
): Promise<SlashCommand[]> {
  const place = readSessionPlace(home, sessionId);
  const files = promptCommands({ home, project: place.project, ...(env ? { env } : {}) }).map((command) => ({
    name: command.name,
    description: command.description,
    ...(command.argumentHint ? { argument: command.argumentHint } : {}),
    source: command.scope,
  }));
  const mcp = await listedOnce(`prompts\u0000${home}\u0000${sessionId}`, () =>
    mcpPromptCommands({
      home,
      project: place.project,
      networkAllow: place.networkAllow,
      ...(env ? { env } : {}),
    }),
  );
  return [...files, ...mcp];
}

/**
 * What a session's servers list, asked once a minute at most: listing starts them in the box, and the `@`
 * menu asks at each keystroke, the `/` menu at each session opened.
 */
const LISTED_FOR_MS = 60_000;
const listed = new Map<string, { at: number; value: Promise<unknown> }>();

function listedOnce<T>(key: string, list: () => Promise<T>): Promise<T> {
  const entry = listed.get(key);
  if (entry && Date.now() - entry.at <= LISTED_FOR_MS) return entry.value as Promise<T>;
  // Expired entries go as new ones come: a long-lived host opens many sessions.
  for (const [old, kept] of listed) if (Date.now() - kept.at > LISTED_FOR_MS) listed.delete(old);
  const value = list();
  listed.set(key, { at: Date.now(), value });
  return value;
}

/**
 * The configured MCP servers' resources matching what was typed after `@`, as mentions
 * (`@mcp:server:uri`) the composer lists beside the project's files; sending one attaches its contents
 * (expandSessionPrompt). A server that does not start lists none.
 */
export async function sessionResourceMentions(
  home: string,
  sessionId: string,
  query: string,
  limit = 30,
): Promise<{ path: string; kind: 'resource'; title?: string }[]> {
  const resources = await listedOnce(`resources\u0000${home}\u0000${sessionId}`, () => {
    const place = readSessionPlace(home, sessionId);
    return listMcpResources(home, place.project, {
      ...(place.networkAllow.length ? { networkAllow: place.networkAllow } : {}),
    }).catch((): McpResourceInfo[] => []);
  });
  return matchResources(resources, query, limit).map((resource) => ({
    path: mcpResourceMentionText(resource),
    kind: 'resource' as const,
    ...(resource.title || resource.name ? { title: resource.title ?? resource.name } : {}),
  }));
}
