import { isStdioServer, type McpServerConfig } from '../../common/mcp.js';
import { readSettings } from '../../store/settings.js';
import { addMcpServer, removeMcpServer } from './admin.js';
import { mcpSignInState, type McpSignInState } from './auth.js';
import { McpAdminError } from './errors.js';
import { mcpTokenStore } from './secretStore.js';

/*
 * A server as a person types it (issue 33): `keel mcp add`'s flags and Settings' form are the same fields, turned
 * into a configuration by one rule here and checked by `addMcpServer` (the settings schema), so the two hosts
 * accept and refuse the same servers with the same words.
 */

/** What `keel mcp add` and Settings → MCP servers ask for. Exactly one of `url` and `command`. */
export type McpServerFields = {
  /** A Streamable HTTP server. */
  url?: string;
  /** A stdio server: the program, then its arguments (one word each; no shell). */
  command?: string[];
  /** `NAME=VALUE` for a stdio server's environment. */
  env?: string[];
  /** `Name: value` for an HTTP server's headers. */
  headers?: string[];
  writeProject?: boolean;
  /** Hosts a stdio server may reach when the session allows them. */
  allowHosts?: string[];
};

/** `key=value` (or `key: value`) pairs into an object; a malformed one is an McpAdminError naming it. */
function pairs(values: readonly string[], separator: string, what: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(separator);
    if (at <= 0) throw new McpAdminError(`${what} "${value}" is not NAME${separator}VALUE`);
    result[value.slice(0, at).trim()] = value.slice(at + separator.length).trim();
  }
  return result;
}

/** Pure: the fields as a server configuration (not yet validated: `addMcpServer` does that). */
export function mcpServerConfigOf(fields: McpServerFields): Record<string, unknown> {
  const command = fields.command ?? [];
  if ((fields.url === undefined || fields.url === '') === (command.length === 0)) {
    throw new McpAdminError('give either a command (stdio) or a URL (Streamable HTTP)');
  }
  if (fields.url) {
    return { url: fields.url, headers: pairs(fields.headers ?? [], ':', 'header') };
  }
  const allowHosts = fields.allowHosts ?? [];
  return {
    command: command[0],
    args: command.slice(1),
    env: pairs(fields.env ?? [], '=', 'environment variable'),
    ...(fields.writeProject ? { writeProject: true } : {}),
    ...(allowHosts.length > 0 ? { networkAllow: [...allowHosts] } : {}),
  };
}

/** Pure: a configuration back as the fields Settings edits. */
export function mcpServerFieldsOf(config: McpServerConfig): McpServerFields {
  if (!isStdioServer(config)) {
    return { url: config.url, headers: Object.entries(config.headers).map(([k, v]) => `${k}: ${v}`) };
  }
  return {
    command: [config.command, ...config.args],
    env: Object.entries(config.env).map(([k, v]) => `${k}=${v}`),
    writeProject: config.writeProject === true,
    allowHosts: config.networkAllow ?? [],
  };
}

/** One of the settings' servers as Settings lists it (nothing started). */
export type ConfiguredMcpServer = {
  name: string;
  transport: 'stdio' | 'http';
  fields: McpServerFields;
  /** HTTP servers only. */
  signIn?: McpSignInState;
};

/** The settings' servers with their fields and sign-in states, and where sign-in tokens are kept. */
export function configuredMcpServers(home: string): { servers: ConfiguredMcpServer[]; tokenStorage: string } {
  const servers = Object.entries(readSettings(home).mcp.servers).map(([name, config]) =>
    isStdioServer(config)
      ? { name, transport: 'stdio' as const, fields: mcpServerFieldsOf(config) }
      : {
          name,
          transport: 'http' as const,
          fields: mcpServerFieldsOf(config),
          signIn: mcpSignInState(home, name),
        },
  );
  return { servers, tokenStorage: mcpTokenStore(home).where };
}

/**
 * Adds a server to settings, or replaces `replacing` (an edit, possibly renamed): the new one is validated and
 * written before the old name is removed, so a refused edit leaves the old server as it was.
 */
export function saveMcpServer(home: string, name: string, fields: McpServerFields, replacing?: string): void {
  const servers = readSettings(home).mcp.servers;
  if (replacing !== undefined && !Object.hasOwn(servers, replacing)) {
    throw new McpAdminError(`no MCP server "${replacing}" in your settings to change`);
  }
  if (name !== replacing && Object.hasOwn(servers, name)) {
    throw new McpAdminError(`an MCP server named "${name}" exists already: choose another name or edit it`);
  }
  addMcpServer(home, name, mcpServerConfigOf(fields));
  if (replacing !== undefined && replacing !== name) removeMcpServer(home, replacing);
}
