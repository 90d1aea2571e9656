import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpResourceInfo } from '../../mcp/resources.js';

/*
 * `@` MCP resources in a prompt (issue 33): `@mcp:<server>:<uri>` beside `@path` mentions. Pure: the mention's
 * text, the mentions a prompt holds, and a read resource as the block the user message records (by server and
 * uri; its text as the server gave it, redacted before it gets here). A server name has no `:` (McpServerName).
 */

const MENTION = /(^|\s)@mcp:([A-Za-z0-9_-]+):(\S+)/g;

/** The `@` text that attaches a resource (without the `@`). */
export function mcpResourceMentionText(resource: Pick<McpResourceInfo, 'server' | 'uri'>): string {
  return `mcp:${resource.server}:${resource.uri}`;
}

/** The resources a prompt attaches, each once, in order. */
export function mcpResourceMentions(text: string): { server: string; uri: string }[] {
  const found = new Map<string, { server: string; uri: string }>();
  for (const match of text.matchAll(MENTION)) {
    const server = match[2] as string;
    // Sentence punctuation after a mention is not the uri's ("see @mcp:web:note://a.").
    const uri = (match[3] as string).replace(/[.,;:!?)\]}'"]+$/, '');
    if (uri === '') continue;
    found.set(`${server}\u0000${uri}`, { server, uri });
  }
  return [...found.values()];
}

/** Listed resources matching what was typed after `@` (by the mention text, name or title), at most `limit`. */
export function matchResources(
  resources: readonly McpResourceInfo[],
  query: string,
  limit: number,
): McpResourceInfo[] {
  const wanted = query.toLowerCase();
  return resources
    .filter((resource) =>
      [mcpResourceMentionText(resource), resource.name, resource.title ?? ''].some((text) =>
        text.toLowerCase().includes(wanted),
      ),
    )
    .slice(0, limit);
}

/** Where a resource's contents may be too long for a prompt: the text kept, with the rest named. */
const MAX_TEXT = 100_000;

/**
 * A read resource as the block appended to the user message: recorded by server and uri, its text contents
 * inline (cut at 100,000 characters, said so); a binary content is named, not inlined (the model reads it
 * with read_mcp_resource, which keeps it as an artifact).
 */
export function mcpResourceBlock(server: string, uri: string, read: ReadResourceResult): string {
  const parts = read.contents.map((content) => {
    if ('text' in content) {
      const text = content.text;
      return text.length > MAX_TEXT
        ? `${text.slice(0, MAX_TEXT)}\n[cut: ${text.length - MAX_TEXT} more characters; read_mcp_resource reads the whole]`
        : text;
    }
    const bytes = Math.floor((content.blob.length * 3) / 4);
    return `[binary contents ${content.uri} (${content.mimeType ?? 'unknown type'}, about ${bytes} bytes): not inlined; read it with read_mcp_resource]`;
  });
  const quote = (text: string) => text.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<mcp-resource server="${quote(server)}" uri="${quote(uri)}">\n${parts.join('\n')}\n</mcp-resource>`;
}
