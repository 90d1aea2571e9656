import { z } from 'zod';

/*
 * The vocabulary of MCP server configuration, shared by the settings file (main/store) and the project's
 * `.mcp.json` (main/mcp): the format Claude Code and Cursor read, `mcpServers: { name: server }`.
 */

/**
 * A server's name as it appears in tool names (`mcp__<server>__<tool>`): letters, digits, `-` and single
 * `_`, so the name cannot contain the `__` separator and the tool name stays within what providers accept.
 */
export const McpServerName = z
  .string()
  .regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/, 'letters, digits, - and single _ only (no "__")')
  .max(32);

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');
// Values are taken literally: `${VAR}` is never expanded, so nothing of Keel's environment leaks by reference.
const envValue = z.string().refine((value) => !value.includes('\0'), 'no NUL byte');

const timeouts = {
  /** Bound on starting and the initialize handshake, in ms (default 30 s). */
  startTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  /** Bound on one tool call, in ms (default 120 s); past it the call is cancelled. */
  timeoutMs: z.number().int().min(100).max(3_600_000).optional(),
};

/** A server Keel starts as a child process speaking MCP over stdin/stdout (inside the box). */
export const McpStdioServer = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** The server's whole environment besides the box's PATH, HOME and locale: nothing else is passed. */
    env: z.record(envName, envValue).default({}),
    /** Let the server write the project folder (default: read-only in its box). */
    writeProject: z.boolean().optional(),
    /** Hosts the server may reach through the session's allowlist proxy (default: no network). */
    networkAllow: z.array(z.string().min(1)).optional(),
    ...timeouts,
  })
  .strict();

/** A server Keel reaches over Streamable HTTP. */
export const McpHttpServer = z
  .object({
    type: z.enum(['http', 'streamable-http']).optional(),
    url: z.string().url(),
    headers: z.record(z.string().min(1), z.string()).default({}),
    ...timeouts,
  })
  .strict();

/** One configured server: stdio (`command`) or Streamable HTTP (`url`). */
export const McpServerConfig = z.union([McpStdioServer, McpHttpServer]);
export type McpServerConfig = z.infer<typeof McpServerConfig>;
export type McpStdioServer = z.infer<typeof McpStdioServer>;
export type McpHttpServer = z.infer<typeof McpHttpServer>;

/** A `.mcp.json` file. Unknown top-level keys are kept out of the way, not refused (other tools add theirs). */
export const McpConfigFile = z.object({
  mcpServers: z.record(McpServerName, McpServerConfig).default({}),
});
export type McpConfigFile = z.infer<typeof McpConfigFile>;

/** True for a stdio server's config. */
export function isStdioServer(server: McpServerConfig): server is McpStdioServer {
  return 'command' in server;
}
