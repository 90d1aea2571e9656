import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { McpConfigFile, McpServerConfig, McpServerName } from '../../common/mcp.js';
import { planMcpServers, readProjectMcpConfig, PROJECT_CONFIG_FILE } from '../../mcp/config.js';
import type { McpPromptInfo, McpPromptMessages, McpResourceInfo } from '../../mcp/resources.js';
import type { McpServerReport, McpSession } from '../../mcp/session.js';
import { startMcpSession } from '../../mcp/start.js';
import { detectSandbox } from '../../sandbox/box.js';
import { appendMcpApproval, approvedConfigHash, readMcpApprovals } from '../../store/mcpApprovals.js';
import { readSettings, writeSettings } from '../../store/settings.js';
import { createRedactor } from '../../sandbox/redact.js';
import { redactMcpSession } from '../../mcp/redactListing.js';
import { storedMcpAuth } from './auth.js';
import { McpAdminError } from './errors.js';
import { mcpResourceBlock } from './resourceMentions.js';
import { mcpPromptArguments, mcpPromptCommandName, mcpPromptMessageText } from './prompts.js';

/*
 * What `keel mcp` (and later the settings screen) does to MCP configuration outside a session: add and remove
 * servers (settings or a project's .mcp.json), approve a project's file, and start servers once to ask for
 * their tools. Refusals are McpAdminError with one line a person can act on.
 */

export { McpAdminError } from './errors.js';

/** Where a server is configured: the user's settings (every project), or one project's `.mcp.json`. */
export type McpScope = { project?: string };

/** The project's `.mcp.json` now and whether it is approved. */
export type ProjectMcpStatus = {
  folder: string;
  file: string;
  status: 'absent' | 'invalid' | 'trusted' | 'untrusted';
  error?: string;
  servers: string[];
};

/** Reports which servers a project's `.mcp.json` declares and whether that exact file is approved. */
export function projectMcpStatus(home: string, folder: string): ProjectMcpStatus {
  const real = realFolder(folder);
  const config = readProjectMcpConfig(real);
  const file = path.join(real, PROJECT_CONFIG_FILE);
  if (config.status === 'absent') return { folder: real, file, status: 'absent', servers: [] };
  if (config.status === 'invalid') {
    return { folder: real, file, status: 'invalid', error: config.error, servers: [] };
  }
  const approved = approvedConfigHash(readMcpApprovals(home), real);
  return {
    folder: real,
    file,
    status: approved === config.hash ? 'trusted' : 'untrusted',
    servers: config.servers.map((server) => server.name),
  };
}

/** Approves the project's `.mcp.json` as it is now (by its sha256); its servers start from the next turn. */
export function approveProjectMcp(home: string, folder: string, via: string): ProjectMcpStatus {
  const real = realFolder(folder);
  const config = readProjectMcpConfig(real);
  if (config.status === 'absent') throw new McpAdminError(`${real} has no ${PROJECT_CONFIG_FILE} to approve`);
  if (config.status === 'invalid') throw new McpAdminError(config.error);
  appendMcpApproval(home, {
    kind: 'mcp_config_approved',
    project: real,
    configHash: config.hash,
    servers: config.servers.map((server) => server.name),
    via,
  });
  return projectMcpStatus(home, real);
}

/** Withdraws the approval of the project's `.mcp.json`: its servers no longer start. */
export function revokeProjectMcp(home: string, folder: string, via: string): void {
  appendMcpApproval(home, { kind: 'mcp_config_revoked', project: realFolder(folder), configHash: '', via });
}

/**
 * Adds (or replaces) a server in settings, or in the project's `.mcp.json` (other keys of the file kept,
 * written atomically). The person adding it trusts it: a project file that was absent or approved is approved
 * again as written; one that was not approved stays unapproved (its other servers were never reviewed).
 * Returns whether the project's file is approved afterwards (settings servers always run).
 */
export function addMcpServer(
  home: string,
  name: string,
  config: unknown,
  scope: McpScope = {},
): { trusted: boolean } {
  const validName = McpServerName.safeParse(name);
  if (!validName.success) {
    throw new McpAdminError(
      `"${name}" cannot name an MCP server: ${validName.error.issues[0]?.message ?? 'invalid'}`,
    );
  }
  const parsed = McpServerConfig.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new McpAdminError(
      `invalid MCP server: ${issue?.path.join('.') || 'config'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  if (scope.project === undefined) {
    const settings = readSettings(home);
    writeSettings(home, {
      ...settings,
      mcp: { ...settings.mcp, servers: { ...settings.mcp.servers, [name]: parsed.data } },
    });
    return { trusted: true };
  }
  const before = projectMcpStatus(home, scope.project);
  if (before.status === 'invalid') throw new McpAdminError(`${before.error}; fix the file first`);
  const raw = before.status === 'absent' ? {} : readJsonObject(before.file);
  const servers = { ...((raw.mcpServers as Record<string, unknown> | undefined) ?? {}), [name]: parsed.data };
  writeProjectFile(before.file, { ...raw, mcpServers: servers });
  if (before.status === 'absent' || before.status === 'trusted') {
    approveProjectMcp(home, before.folder, 'keel mcp add');
    return { trusted: true };
  }
  return { trusted: false };
}

/** Removes a server from settings or from the project's `.mcp.json`; throws when there is none of that name. */
export function removeMcpServer(home: string, name: string, scope: McpScope = {}): void {
  if (scope.project === undefined) {
    const settings = readSettings(home);
    if (!Object.hasOwn(settings.mcp.servers, name)) {
      throw new McpAdminError(`no MCP server "${name}" in your settings (keel mcp list shows them)`);
    }
    const servers = { ...settings.mcp.servers };
    delete servers[name];
    writeSettings(home, { ...settings, mcp: { ...settings.mcp, servers } });
    return;
  }
  const before = projectMcpStatus(home, scope.project);
  if (!before.servers.includes(name)) {
    throw new McpAdminError(`no MCP server "${name}" in ${before.file}`);
  }
  const raw = readJsonObject(before.file);
  const servers = { ...(raw.mcpServers as Record<string, unknown>) };
  delete servers[name];
  writeProjectFile(before.file, { ...raw, mcpServers: servers });
  // Removing a server from an approved file keeps it approved: nothing new can run.
  if (before.status === 'trusted') approveProjectMcp(home, before.folder, 'keel mcp remove');
}

/**
 * Every configured server with its state and every tool it lists (disabled ones included: `disabledTools`
 * says which), found by starting each once (in the box) and asking. `project` is absent without a folder.
 */
export type McpInspection = {
  servers: McpServerReport[];
  project?: ProjectMcpStatus;
  skipped: string[];
  disabledTools: string[];
};

/** Switches one MCP tool on or off for every session (settings.json `mcp.disabledTools`); returns the list. */
export function setMcpToolEnabled(home: string, tool: string, enabled: boolean): string[] {
  const settings = readSettings(home);
  const others = settings.mcp.disabledTools.filter((name) => name !== tool);
  const disabledTools = enabled ? others : [...others, tool];
  writeSettings(home, { ...settings, mcp: { ...settings.mcp, disabledTools } });
  return disabledTools;
}

/** What a one-off start of the configured servers can be asked for. */
export type McpInspectOptions = {
  only?: string;
  env?: NodeJS.ProcessEnv;
  /** Hosts the servers may reach, as a session allowing them would; none by default. */
  networkAllow?: readonly string[];
};

/**
 * Starts the settings' servers and the project's (when approved) as a session would, lists their tools, and
 * stops them. `only` keeps one server. Never leaves a process running.
 */
export async function inspectMcpServers(
  home: string,
  folder: string | undefined,
  options: McpInspectOptions = {},
): Promise<McpInspection> {
  const settings = readSettings(home);
  return withStartedServers(home, folder, options, (shown, project) =>
    Promise.resolve({
      servers: shown.servers,
      ...(project ? { project } : {}),
      skipped: shown.skipped.map((skip) => `${skip.server}/${skip.tool}: ${skip.reason}`),
      disabledTools: settings.mcp.disabledTools,
    }),
  );
}

/** The prompts the configured servers list, with their arguments (started once in the box to ask, then stopped). */
export function listMcpPrompts(
  home: string,
  folder: string | undefined,
  options: McpInspectOptions = {},
): Promise<McpPromptInfo[]> {
  return withStartedServers(home, folder, options, (session) => session.listPrompts());
}

/** The resources the configured servers list (started once in the box to ask, then stopped). */
export function listMcpResources(
  home: string,
  folder: string | undefined,
  options: McpInspectOptions = {},
): Promise<McpResourceInfo[]> {
  return withStartedServers(home, folder, options, (session) => Promise.resolve(session.resources));
}

/**
 * One server's prompt filled with `args` (the composer's `/` menu turns it into the message): a missing
 * required argument, an unknown prompt or a server that does not run is an McpAdminError saying so.
 */
export function getMcpPrompt(
  home: string,
  folder: string | undefined,
  server: string,
  name: string,
  args: Record<string, string>,
  options: Omit<McpInspectOptions, 'only'> = {},
): Promise<McpPromptMessages> {
  return withStartedServers(home, folder, { ...options, only: server }, async (session) => {
    const report = session.servers[0];
    if (report?.state.state === 'failed')
      throw new McpAdminError(`MCP server "${server}" did not start: ${report.state.error}`);
    try {
      return await session.getPrompt(server, name, args);
    } catch (error) {
      throw new McpAdminError(error instanceof Error ? error.message : String(error));
    }
  });
}

/**
 * `/mcp__server__prompt words…` as the message a turn records (every host's `/` menu and `keel run`): the
 * server started once, the prompt's arguments read from `text` (mcpPromptArguments), filled with prompts/get.
 * An unknown server or prompt, words that do not fit, a missing required argument: an McpAdminError saying so.
 */
export function expandMcpPrompt(
  home: string,
  folder: string | undefined,
  call: { server: string; prompt: string; text: string },
  options: Omit<McpInspectOptions, 'only'> = {},
): Promise<string> {
  return withStartedServers(home, folder, { ...options, only: call.server }, async (session) => {
    const report = session.servers[0];
    if (report?.state.state === 'failed')
      throw new McpAdminError(`MCP server "${call.server}" did not start: ${report.state.error}`);
    const listed = await session.listPrompts();
    const prompt = listed.find((p) => p.name === call.prompt);
    if (!prompt) {
      const names = listed.map((p) => `/${mcpPromptCommandName(p.server, p.name)}`).join(', ') || 'none';
      throw new McpAdminError(
        `MCP server "${call.server}" has no prompt "${call.prompt}" (its prompts: ${names})`,
      );
    }
    try {
      const args = mcpPromptArguments(prompt, call.text);
      return mcpPromptMessageText(await session.getPrompt(call.server, call.prompt, args));
    } catch (error) {
      throw new McpAdminError(error instanceof Error ? error.message : String(error));
    }
  });
}

/**
 * The resources a prompt attaches (`@mcp:server:uri`) as blocks for its user message: their servers started
 * once (one server: only it), each read, its text redacted as a server's words are. A server that does not
 * run or a resource it cannot read is an McpAdminError naming it (the prompt is not sent half-attached).
 */
export function readMcpResourceBlocks(
  home: string,
  folder: string | undefined,
  wanted: readonly { server: string; uri: string }[],
  options: Omit<McpInspectOptions, 'only'> = {},
): Promise<string[]> {
  const servers = [...new Set(wanted.map((w) => w.server))];
  const only = servers.length === 1 ? { only: servers[0] as string } : {};
  return withStartedServers(home, folder, { ...options, ...only }, async (session) => {
    const blocks: string[] = [];
    for (const { server, uri } of wanted) {
      const report = session.servers.find((r) => r.name === server);
      if (!report) throw new McpAdminError(`@mcp:${server}:${uri}: no MCP server "${server}" is configured`);
      if (report.state.state === 'failed')
        throw new McpAdminError(
          `@mcp:${server}:${uri}: MCP server "${server}" did not start: ${report.state.error}`,
        );
      try {
        blocks.push(mcpResourceBlock(server, uri, await session.readResource(server, uri)));
      } catch (error) {
        const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
        throw new McpAdminError(
          `@mcp:${server}:${uri}: MCP server "${server}" could not read it: ${message}`,
        );
      }
    }
    return blocks;
  });
}

/**
 * `keel mcp call NAME TOOL`: one tool of one server called directly (the person's own call, outside any session,
 * as `keel mcp test` starts it), its text content redacted. A server that does not start, or an unknown tool, is
 * an McpAdminError; a tool's own error comes back with `isError`.
 */
export function callMcpTool(
  home: string,
  folder: string | undefined,
  call: { server: string; tool: string; args: Record<string, unknown> },
  options: Omit<McpInspectOptions, 'only'> = {},
): Promise<{ text: string; isError: boolean }> {
  return withStartedServers(home, folder, { ...options, only: call.server }, async (session) => {
    const report = session.servers[0];
    if (report?.state.state === 'failed')
      throw new McpAdminError(`MCP server "${call.server}" did not start: ${report.state.error}`);
    try {
      const result = await session.callTool(call.server, call.tool, call.args);
      const text = result.content
        .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
        .join('\n');
      return { text, isError: result.isError === true };
    } catch (error) {
      throw new McpAdminError(error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error));
    }
  });
}

/** Starts the configured servers (or `only` one) in the box, hands their redacted view to `use`, stops them. */
async function withStartedServers<T>(
  home: string,
  folder: string | undefined,
  options: McpInspectOptions,
  use: (session: McpSession, project: ProjectMcpStatus | undefined) => Promise<T>,
): Promise<T> {
  const scratch = path.join(home, 'mcp-inspect', randomUUID());
  // Without a project the servers work in an empty folder of their own.
  const root = folder ?? path.join(scratch, 'empty');
  if (folder === undefined) fs.mkdirSync(root, { recursive: true });
  const project = folder === undefined ? undefined : projectMcpStatus(home, folder);
  const settings = readSettings(home);
  const config = project ? readProjectMcpConfig(project.folder) : ({ status: 'absent' } as const);
  const plan = planMcpServers(
    settings.mcp.servers,
    config,
    project ? approvedConfigHash(readMcpApprovals(home), project.folder) : null,
  );
  if (options.only !== undefined) {
    plan.servers = plan.servers.filter((server) => server.name === options.only);
    if (plan.servers.length === 0) {
      throw new McpAdminError(
        project && project.servers.includes(options.only) && project.status !== 'trusted'
          ? `"${options.only}" is in ${project.file}, which is not approved: keel mcp approve --project ${project.folder}`
          : `no MCP server "${options.only}" is configured (keel mcp list shows them)`,
      );
    }
  }
  const session = await startMcpSession({
    plan,
    box: {
      sandbox: await detectSandbox(),
      projectRoot: project?.folder ?? fs.realpathSync(root),
      scratchRoot: scratch,
      hidden: [realFolder(home)],
      // As in a session: no network unless the caller allows hosts (a Streamable HTTP server needs its own),
      // and a stdio server reaches only the hosts both its config and this list allow.
      network: options.networkAllow?.length ? { allow: [...options.networkAllow] } : 'none',
      baseEnv: options.env ?? process.env,
      authFor: storedMcpAuth(home),
    },
  });
  try {
    // Shown like a session's record: a server's words (stderr, skip reasons, listings) through a redactor.
    const redactor = createRedactor({ workspaceRoot: root, env: options.env ?? process.env });
    return await use(
      redactMcpSession(session, (text) => redactor.redact(text)),
      project,
    );
  } finally {
    await session.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    throw new McpAdminError(`${folder} is not a folder that exists`);
  }
}

function readJsonObject(file: string): Record<string, unknown> {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new McpAdminError(`${file} is not a JSON object`);
  }
  return raw as Record<string, unknown>;
}

function writeProjectFile(file: string, value: Record<string, unknown>): void {
  McpConfigFile.parse(value);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  fs.renameSync(temp, file);
}
