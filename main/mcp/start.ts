import type { McpSession, StartMcpOptions } from './session.js';

/**
 * `startMcpSession` (session.ts) with the MCP client loaded at the first call: the SDK, its zod schemas and ajv
 * are ~0.2 s of start-up, which every host that imports the core (each `keel` command, `--help` included)
 * paid before, though most never start a server. Hosts (main/core/harness) import this, not session.ts.
 */
export async function startMcpSession(options: StartMcpOptions): Promise<McpSession> {
  const session = await import('./session.js');
  return session.startMcpSession(options);
}
