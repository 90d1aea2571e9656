import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { McpConfigFile, McpServerName, type McpServerConfig } from '../common/mcp.js';

/** The project's MCP config file, at the project root (the name Claude Code and Cursor read). */
export const PROJECT_CONFIG_FILE = '.mcp.json';

/** A `.mcp.json` bigger than this is refused: a config is a few hundred bytes. */
const MAX_CONFIG_BYTES = 256 * 1024;

/** Where a server's configuration came from: the user's settings, or the project's `.mcp.json`. */
export type McpServerSource = 'settings' | 'project';

/** One server as the session sees it, before anything starts. */
export type McpServerEntry = {
  name: string;
  source: McpServerSource;
  config: McpServerConfig;
};

/** The project's `.mcp.json` as read now. */
export type ProjectMcpConfig =
  | { status: 'absent' }
  | { status: 'invalid'; file: string; error: string }
  | { status: 'valid'; file: string; hash: string; servers: McpServerEntry[] };

/**
 * Reads and validates `<projectRoot>/.mcp.json`. Never throws: a file that cannot be read or does not
 * validate is `invalid` with one line naming the problem (no server of it starts). The hash is the sha256
 * of the exact bytes, so any change (even whitespace) needs a new approval.
 */
export function readProjectMcpConfig(projectRoot: string): ProjectMcpConfig {
  const file = path.join(projectRoot, PROJECT_CONFIG_FILE);
  let bytes: Buffer;
  try {
    const stat = fs.lstatSync(file);
    if (!stat.isFile()) {
      return { status: 'invalid', file, error: `${PROJECT_CONFIG_FILE} is not a regular file` };
    }
    if (stat.size > MAX_CONFIG_BYTES) {
      return {
        status: 'invalid',
        file,
        error: `${PROJECT_CONFIG_FILE} is ${stat.size} bytes, more than the ${MAX_CONFIG_BYTES} allowed`,
      };
    }
    bytes = fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'absent' };
    return {
      status: 'invalid',
      file,
      error: `cannot read ${PROJECT_CONFIG_FILE}: ${(error as Error).message}`,
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return {
      status: 'invalid',
      file,
      error: `${PROJECT_CONFIG_FILE} is not valid JSON (${(error as Error).message})`,
    };
  }
  const parsed = McpConfigFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    // A bad record key is reported by zod as "Invalid key in record": say what a name may be.
    const message =
      issue?.code === 'invalid_key'
        ? `a server name may have ${McpServerName.safeParse(issue.path.at(-1)).error?.issues[0]?.message ?? 'letters and digits only'}`
        : (issue?.message ?? 'invalid');
    return { status: 'invalid', file, error: `${PROJECT_CONFIG_FILE}: ${where}: ${message}` };
  }
  return {
    status: 'valid',
    file,
    hash: createHash('sha256').update(bytes).digest('hex'),
    servers: Object.entries(parsed.data.mcpServers).map(([name, config]) => ({
      name,
      source: 'project' as const,
      config,
    })),
  };
}

/** What a session may start: the settings' servers, and the project's when its file is approved. */
export type McpServerPlan = {
  /** Servers to start, settings first; a project server of the same name as a settings one is left out. */
  servers: McpServerEntry[];
  /** The project's file and whether it runs; `untrusted` when its hash is not the approved one. */
  project:
    | { status: 'absent' }
    | { status: 'invalid'; error: string }
    | { status: 'trusted' | 'untrusted'; hash: string; servers: string[] };
  /** Why a configured server does not run (a name clash), one sentence each. */
  problems: string[];
};

/**
 * Decides which servers a session starts. Pure. The project's servers run only when `approvedHash` is the
 * hash of its file now; settings servers always run (the user configured them). A project server named
 * like a settings server is left out (the user's own configuration wins) with a problem saying so.
 */
export function planMcpServers(
  settingsServers: Readonly<Record<string, McpServerConfig>>,
  project: ProjectMcpConfig,
  approvedHash: string | null,
): McpServerPlan {
  const servers: McpServerEntry[] = Object.entries(settingsServers).map(([name, config]) => ({
    name,
    source: 'settings' as const,
    config,
  }));
  const problems: string[] = [];
  if (project.status === 'absent') return { servers, project, problems };
  if (project.status === 'invalid')
    return { servers, project: { status: 'invalid', error: project.error }, problems };
  const trusted = approvedHash === project.hash;
  const names = project.servers.map((server) => server.name);
  if (trusted) {
    for (const server of project.servers) {
      if (servers.some((known) => known.name === server.name)) {
        problems.push(
          `the project's MCP server "${server.name}" is not started: a server of that name is in your settings`,
        );
      } else servers.push(server);
    }
  }
  return {
    servers,
    project: { status: trusted ? 'trusted' : 'untrusted', hash: project.hash, servers: names },
    problems,
  };
}
