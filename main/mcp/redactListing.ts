import type { ToolModule } from '../tools/types.js';
import type { McpServerReport, McpSession } from './session.js';
import type { SkippedTool } from './tools.js';

/** Whole-text redaction (the session's redactor): what a server says passes through it before anyone sees it. */
export type Redact = (text: string) => string;

/**
 * The session's servers as one turn sees them, with everything a server wrote that reaches the provider, the
 * log or the user redacted by `redact`: tool descriptions (its title is one when it has no description) and
 * input schemas (every string, keys included), a failed server's error and stderr tail, skip reasons. A tool
 * whose name or schema still holds a secret after that is left out and listed as skipped: a name cannot be
 * rewritten, and a schema redacted as text that no longer parses cannot be sent. Built per turn (the pool
 * keeps servers across turns, each turn's redactor knows that turn's `.env` values); methods delegate.
 */
export function redactMcpSession(session: McpSession, redact: Redact): McpSession {
  const dropped: SkippedTool[] = [];
  const tools: ToolModule[] = [];
  for (const tool of session.tools) {
    const safe = redactTool(tool, redact);
    if (typeof safe === 'string') {
      const server = session.servers.find((report) => tool.name.startsWith(`mcp__${report.name}__`));
      const prefix = server ? `mcp__${server.name}__` : '';
      dropped.push({
        server: server?.name ?? '?',
        tool: redact(tool.name.slice(prefix.length)),
        reason: safe,
      });
    } else tools.push(safe);
  }
  const kept = new Set(tools.map((tool) => tool.name));
  const servers = session.servers.map((report): McpServerReport => ({
    ...report,
    tools: report.tools.filter((name) => kept.has(name)),
    state:
      report.state.state === 'failed'
        ? { state: 'failed', error: redact(report.state.error), stderrTail: redact(report.state.stderrTail) }
        : report.state,
  }));
  const skipped = [
    ...session.skipped.map((skip) => ({
      server: skip.server,
      tool: redact(skip.tool),
      reason: redact(skip.reason),
    })),
    ...dropped,
  ];
  return {
    tools,
    servers,
    skipped,
    resources: session.resources.map((resource) => redactStrings(resource, redact) as typeof resource),
    listPrompts: async () =>
      (await session.listPrompts()).map((prompt) => redactStrings(prompt, redact) as typeof prompt),
    getPrompt: (server, name, args) => session.getPrompt(server, name, args),
    // A resource's text reaches the user's message: redacted as the rest of what a server says.
    readResource: async (server, uri) => {
      const read = await session.readResource(server, uri);
      return {
        ...read,
        contents: read.contents.map((content) =>
          'text' in content ? { ...content, text: redact(content.text) } : content,
        ),
      };
    },
    // What a direct call returns is shown to the person: its text redacted like a tool result's.
    callTool: async (server, tool, args) => {
      const result = await session.callTool(server, tool, args);
      return {
        ...result,
        content: result.content.map((block) =>
          block.type === 'text' ? { ...block, text: redact(block.text) } : block,
        ),
      };
    },
    subscribe: (server, uri) => session.subscribe(server, uri),
    takeResourceUpdates: () => session.takeResourceUpdates(),
    watchResourceUpdates: (arrived) => session.watchResourceUpdates(arrived),
    changed: () => session.changed(),
    healthy: () => session.healthy(),
    relist: () => session.relist(),
    close: () => session.close(),
  };
}

/** The tool with its description and schema redacted, or why it cannot be offered. */
function redactTool(tool: ToolModule, redact: Redact): ToolModule | string {
  if (redact(tool.name) !== tool.name) return 'its name holds what looks like a secret';
  const description = redact(tool.description);
  if (tool.inputJsonSchema === undefined) return { ...tool, description };
  let schema = redactStrings(tool.inputJsonSchema, redact) as Record<string, unknown>;
  // Detectors that need context (a value under a secret-looking key) see it only in the JSON text.
  const text = JSON.stringify(schema);
  const redacted = redact(text);
  if (redacted !== text) {
    try {
      schema = JSON.parse(redacted) as Record<string, unknown>;
    } catch {
      return 'its input schema holds what looks like a secret';
    }
  }
  return { ...tool, description, inputJsonSchema: schema };
}

/** A copy of a JSON value with every string (object keys included) redacted. */
function redactStrings(value: unknown, redact: Redact): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key), redactStrings(item, redact)]),
    );
  return value;
}
