import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpConnection } from './connection.js';
import { outcomeFromResult } from './results.js';
import { errorOutcome } from '../tools/outcome.js';
import { previewSubject } from '../tools/preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from '../tools/types.js';

/*
 * MCP beyond tools: a server's resources (listed per server; the model reads one with `read_mcp_resource`)
 * and its prompts (listed with their arguments, filled on demand for the composer's `/` menu). What a server
 * says (names, descriptions, contents) is its word: untrusted data, shown and sent as data.
 */

/** The tool the model reads a resource with. */
export const READ_RESOURCE_TOOL = 'read_mcp_resource';

/** One resource a server lists. */
export type McpResourceInfo = {
  server: string;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
};

/** One prompt a server lists, with its arguments. */
export type McpPromptInfo = {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
};

/** A prompt filled with its arguments: its messages as text, in order. */
export type McpPromptMessages = {
  description?: string;
  messages: { role: 'user' | 'assistant'; text: string }[];
};

/** How many listed resources the tool's description names (the rest are read by uri all the same). */
const DESCRIBED_RESOURCES = 50;
const clipped = (text: string | undefined, max: number) =>
  text === undefined ? '' : text.replace(/\s+/g, ' ').trim().slice(0, max);

const parameters = z.strictObject({
  server: z.string().min(1).describe('The MCP server that lists the resource.'),
  uri: z.string().min(1).max(2048).describe('The resource URI, as the server lists it.'),
});

/**
 * `read_mcp_resource`: reads one resource of a running server (text inline, binary contents as artifacts, long
 * text cut with the whole kept). It changes nothing, so it is a `read` run again on resume.
 */
export function resourceToolFor(
  connections: readonly McpConnection[],
  resources: readonly McpResourceInfo[],
): ToolModule<typeof parameters> {
  const named = resources
    .slice(0, DESCRIBED_RESOURCES)
    .map(
      (r) =>
        `- ${r.server}: ${r.uri}${r.title || r.name ? ` (${clipped(r.title ?? r.name, 80)})` : ''}${r.description ? `: ${clipped(r.description, 160)}` : ''}`,
    );
  const more =
    resources.length > DESCRIBED_RESOURCES ? [`(and ${resources.length - DESCRIBED_RESOURCES} more)`] : [];
  return {
    name: READ_RESOURCE_TOOL,
    description: [
      'Read a resource of an MCP server (a document, a record, a file the server exposes). Resources listed:',
      ...named,
      ...more,
    ].join('\n'),
    parameters,
    mode: 'read-only',
    kind: 'read',
    preview: () => Promise.resolve(previewSubject()),
    resume: { rule: 'rerun' },
    execute: (args, ctx) => readOnce(connections, args, ctx),
  };
}

async function readOnce(
  connections: readonly McpConnection[],
  args: z.infer<typeof parameters>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const connection = connections.find((c) => c.entry.name === args.server);
  if (!connection) {
    const names = connections.map((c) => c.entry.name).join(', ') || 'none';
    return errorOutcome(`no MCP server "${args.server}" in this session (servers: ${names})`);
  }
  const started = Date.now();
  try {
    const result = await connection.readResource(args.uri, ctx.signal);
    // Issue 33: told when it changes (recorded as it arrives in a turn); a refusal changes nothing here.
    if (connection.canSubscribe) void connection.subscribe(args.uri).catch(() => undefined);
    // Shown as a tool result of embedded resources: text inline, blobs as artifacts, as an MCP tool's are.
    const asResult: CallToolResult = {
      content: result.contents.map((resource) => ({ type: 'resource' as const, resource })),
    };
    return { ...outcomeFromResult(asResult, ctx), durationMs: Date.now() - started };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return errorOutcome(`MCP server "${args.server}" could not read ${args.uri}: ${message}`);
  }
}

/** A server's listed resources, as Keel shows them. */
export async function resourcesOf(connection: McpConnection): Promise<McpResourceInfo[]> {
  const listed = await connection.listResources();
  return listed.map((r) => ({
    server: connection.entry.name,
    uri: r.uri,
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    ...(r.description ? { description: r.description } : {}),
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  }));
}

/** A server's listed prompts with their arguments. */
export async function promptsOf(connection: McpConnection): Promise<McpPromptInfo[]> {
  const listed = await connection.listPrompts();
  return listed.map((p) => ({
    server: connection.entry.name,
    name: p.name,
    ...(p.title ? { title: p.title } : {}),
    ...(p.description ? { description: p.description } : {}),
    arguments: (p.arguments ?? []).map((a) => ({
      name: a.name,
      ...(a.description ? { description: a.description } : {}),
      required: a.required === true,
    })),
  }));
}

/**
 * A prompt filled with `args`: missing required arguments are refused before the server is asked; the
 * messages' text (an embedded text resource as its text; images and other blocks named) in order.
 */
export async function fillPrompt(
  connection: McpConnection,
  name: string,
  args: Record<string, string>,
): Promise<McpPromptMessages> {
  const prompt = (await promptsOf(connection)).find((p) => p.name === name);
  if (!prompt) throw new Error(`MCP server "${connection.entry.name}" has no prompt "${name}"`);
  const missing = prompt.arguments
    .filter((a) => a.required && !(args[a.name] ?? '').trim())
    .map((a) => a.name);
  if (missing.length > 0) throw new Error(`prompt "${name}" needs ${missing.join(', ')}`);
  const result = await connection.getPrompt(name, args);
  return {
    ...(result.description ? { description: result.description } : {}),
    messages: result.messages.map((message) => {
      const block = message.content;
      const text =
        block.type === 'text'
          ? block.text
          : block.type === 'resource' && 'text' in block.resource
            ? block.resource.text
            : `[${block.type}${block.type === 'resource_link' ? ` ${block.uri}` : ''}]`;
      return { role: message.role, text };
    }),
  };
}
