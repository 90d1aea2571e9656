import { z } from 'zod';

/*
 * Issue 33 (and #37 item 6): Settings → MCP servers edited where they are shown. The same core functions as
 * `keel mcp add|remove|login|logout` (core/mcp/serverFields.ts, auth.ts): a server is given as the CLI's fields
 * and refused with the CLI's words; nothing here starts a server (`mcp.servers` does, to check them).
 */

/** A server as `keel mcp add` takes it: a URL (Streamable HTTP) or a command and its arguments (stdio). */
export const McpServerFieldsView = z.object({
  url: z.string().max(4096).optional(),
  /** The program, then one argument per entry (no shell). */
  command: z.array(z.string().max(4096)).max(200).optional(),
  /** `NAME=VALUE` each. */
  env: z.array(z.string().max(8192)).max(200).optional(),
  /** `Name: value` each. */
  headers: z.array(z.string().max(8192)).max(100).optional(),
  writeProject: z.boolean().optional(),
  allowHosts: z.array(z.string().max(255)).max(100).optional(),
});

/** signed_in, signed_out (sign in if the server asks), expired (nothing to renew it), revoked by the server. */
const SignInState = z.enum(['signed_in', 'signed_out', 'expired', 'revoked']);

const ConfiguredView = z.object({
  servers: z.array(
    z.object({
      name: z.string(),
      transport: z.enum(['stdio', 'http']),
      fields: McpServerFieldsView,
      /** HTTP servers only. */
      signIn: SignInState.optional(),
    }),
  ),
  /** Where sign-in tokens are kept, in words (the OS keychain in the app, a 0600 key file elsewhere). */
  tokenStorage: z.string(),
});

// Checked by the core (McpServerName) so the refusal has `keel mcp add`'s words.
const name = z.string().min(1).max(64);

export const mcpChannels = {
  'mcp.configured': {
    doc: "The servers in settings.json (every project) as their fields, each HTTP server's sign-in state, and where sign-in tokens are kept; starts nothing.",
    input: z.object({}),
    output: ConfiguredView,
  },
  'mcp.saveServer': {
    doc: 'Adds a server to settings.json, or replaces `replacing` (an edit, renamed or not), with the validation of keel mcp add; a refused edit changes nothing.',
    input: z.object({ name, replacing: name.optional(), fields: McpServerFieldsView }),
    output: ConfiguredView,
  },
  'mcp.removeServer': {
    doc: 'Removes a server from settings.json (as keel mcp remove); its sign-in is forgotten too.',
    input: z.object({ name }),
    output: ConfiguredView,
  },
  'mcp.signIn': {
    doc: "Starts an HTTP server's OAuth sign-in (keel mcp login): the authorization URL comes back (the app also opens the system browser; under keel serve the page shows it) while Keel waits on a loopback redirect; mcp.signInWait waits for it. The server's host is allowed; allowHosts adds its authorization server's.",
    input: z.object({ name, allowHosts: z.array(z.string().min(1).max(255)).max(20).default([]) }),
    output: z.object({
      /** Absent when access was granted without a browser. */
      url: z.string().optional(),
      opened: z.boolean(),
    }),
  },
  'mcp.signInWait': {
    doc: 'Waits for the sign-in mcp.signIn started (the browser came back, failed, or timed out) and returns the new list.',
    input: z.object({ name }),
    output: ConfiguredView,
  },
  'mcp.signOut': {
    doc: "Forgets an HTTP server's sign-in (its tokens and registered client), as keel mcp logout.",
    input: z.object({ name }),
    output: ConfiguredView,
  },
};
