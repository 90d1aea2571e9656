import path from 'node:path';
import type { Command } from 'commander';
import {
  addMcpServer,
  approveProjectMcp,
  callMcpTool,
  inspectMcpServers,
  listToolRules,
  configuredMcpServers,
  loginMcpServer,
  logoutMcpServer,
  McpAdminError,
  mcpServerConfigOf,
  type McpInspection,
  projectMcpStatus,
  realProjectFolder,
  removeMcpServer,
  revokeProjectMcp,
  revokeToolRule,
} from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { formatTable } from '../format.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

const asUsage = (error: unknown) => (error instanceof McpAdminError ? new CliError(error.message) : error);

/** Runs an admin step, turning its refusal into a usage error (exit 2) with its one line. */
function admin<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw asUsage(error);
  }
}

/** The same for a step that settles later (one that starts servers). */
async function adminLater<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw asUsage(error);
  }
}

/**
 * `keel mcp add|list|remove|test|approve|revoke`: MCP servers in settings (every project) or a project's
 * `.mcp.json` (`--project DIR`), and the approval of that file.
 */
export function registerMcp(program: Command, context: CliContext): void {
  const mcp = program
    .command('mcp')
    .description("MCP servers: add, list, test, remove, approve a project's .mcp.json");
  const folderOf = (project: string | undefined) => path.resolve(project ?? process.cwd());

  mcp
    .command('add')
    .description(
      'add a server: keel mcp add NAME [--project DIR] -- COMMAND [ARGS...], or keel mcp add NAME --url URL',
    )
    .argument('<name>', 'server name (letters, digits, -, single _)')
    .argument('[command...]', 'the stdio server command and its arguments, after --')
    .option('--project <dir>', "add it to this project's .mcp.json instead of your settings")
    .option('--url <url>', 'a Streamable HTTP server')
    .option('--env <NAME=VALUE>', 'an environment variable for the server (repeatable)', collect, [])
    .option('--header <Name: value>', 'an HTTP header (repeatable)', collect, [])
    .option('--write-project', 'let the stdio server write the project folder (default read-only)')
    .option(
      '--allow-host <host>',
      'a host the server may reach when the session allows it (repeatable)',
      collect,
      [],
    )
    .action(
      (
        name: string,
        command: string[],
        options: {
          project?: string;
          url?: string;
          env: string[];
          header: string[];
          writeProject?: boolean;
          allowHost: string[];
        },
      ) => {
        if ((options.url === undefined) === (command.length === 0)) {
          throw new CliError('give either a command after -- (stdio) or --url URL (Streamable HTTP)');
        }
        // The same fields, rule and words as Settings → MCP servers (core/mcp/serverFields.ts).
        const config = admin(() =>
          mcpServerConfigOf({
            ...(options.url !== undefined ? { url: options.url } : { command }),
            env: options.env,
            headers: options.header,
            writeProject: options.writeProject === true,
            allowHosts: options.allowHost,
          }),
        );
        const home = context.home();
        const scope = options.project === undefined ? {} : { project: path.resolve(options.project) };
        const { trusted } = admin(() => addMcpServer(home, name, config, scope));
        const where =
          options.project === undefined
            ? 'your settings'
            : path.join(path.resolve(options.project), '.mcp.json');
        context.io.stdout(`added MCP server ${name} to ${where}\n`);
        if (!trusted) {
          context.io.stderr(
            `keel: ${where} has servers you have not approved, so none of it runs yet: review it, then keel mcp approve --project ${scope.project}\n`,
          );
        }
      },
    );

  mcp
    .command('list')
    .description('each server, its state and its tools (starts each once, in the box, to ask)')
    .option('--project <dir>', 'the project whose .mcp.json to include (default: the current folder)')
    .option(
      '--allow-host <host>',
      'let the servers reach this host, as a session allowing it would (repeatable; an HTTP server needs its own)',
      collect,
      [],
    )
    .action(async (options: { project?: string; allowHost: string[] }) => {
      const home = context.home();
      const inspection = await adminLater(() =>
        inspectMcpServers(home, folderOf(options.project), {
          env: context.io.env,
          networkAllow: options.allowHost,
        }),
      );
      context.io.stdout(formatInspection(inspection));
      context.io.stdout(formatSignIns(configuredMcpServers(home)));
    });

  mcp
    .command('test')
    .description('start one server, list its tools, stop it; exit 1 when it fails')
    .argument('<name>', 'server name')
    .option('--project <dir>', 'the project whose .mcp.json holds it (default: the current folder)')
    .option(
      '--allow-host <host>',
      'let the server reach this host, as a session allowing it would (repeatable; an HTTP server needs its own)',
      collect,
      [],
    )
    .action(async (name: string, options: { project?: string; allowHost: string[] }) => {
      const home = context.home();
      const inspection = await adminLater(() =>
        inspectMcpServers(home, folderOf(options.project), {
          only: name,
          env: context.io.env,
          networkAllow: options.allowHost,
        }),
      );
      const { project: _project, ...servers } = inspection;
      context.io.stdout(formatInspection(servers));
      if (inspection.servers.some((server) => server.state.state !== 'ready'))
        context.setExitCode(ExitCode.failure);
    });

  // Issue 33: one tool called directly (the conformance suite's client drives it too).
  mcp
    .command('call')
    .description('start one server, call one of its tools with --args JSON, print its text, stop it')
    .argument('<name>', 'server name')
    .argument('<tool>', "the tool's name as the server lists it")
    .option('--args <json>', 'the arguments, a JSON object', '{}')
    .option('--project <dir>', 'the project whose .mcp.json holds it (default: the current folder)')
    .option('--allow-host <host>', 'let the server reach this host (repeatable)', collect, [])
    .action(
      async (
        name: string,
        tool: string,
        options: { args: string; project?: string; allowHost: string[] },
      ) => {
        let args: unknown;
        try {
          args = JSON.parse(options.args);
        } catch {
          throw new CliError(`--args is not JSON: ${options.args}`);
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args))
          throw new CliError('--args must be a JSON object');
        const result = await adminLater(() =>
          callMcpTool(
            context.home(),
            folderOf(options.project),
            { server: name, tool, args: args as Record<string, unknown> },
            { env: context.io.env, networkAllow: options.allowHost },
          ),
        );
        context.io.stdout(`${result.text}\n`);
        if (result.isError) context.setExitCode(ExitCode.failure);
      },
    );

  // Issue 33: OAuth sign-in of Streamable HTTP servers.
  mcp
    .command('login')
    .description(
      'sign in to an HTTP MCP server that needs OAuth (prints the URL to open; waits for the browser)',
    )
    .argument('<name>', 'server name')
    .option(
      '--allow-host <host>',
      "the server's and its authorization server's hosts (repeatable), as a session allowing them would",
      collect,
      [],
    )
    .option(
      '--client-id <id>',
      'a client registered with the authorization server beforehand (no registration)',
    )
    .option(
      '--client-secret <secret>',
      "that client's secret, if it has one (kept encrypted with the tokens)",
    )
    .action(
      async (name: string, options: { allowHost: string[]; clientId?: string; clientSecret?: string }) => {
        if (options.clientSecret !== undefined && options.clientId === undefined)
          throw new CliError('--client-secret needs --client-id');
        await adminLater(() =>
          loginMcpServer(context.home(), name, {
            networkAllow: options.allowHost,
            ...(options.clientId !== undefined
              ? {
                  client: {
                    clientId: options.clientId,
                    ...(options.clientSecret !== undefined ? { clientSecret: options.clientSecret } : {}),
                  },
                }
              : {}),
            open: (url) => {
              context.io.stderr(`keel: open this URL in your browser to sign in to ${name}:\n`);
              context.io.stdout(`${url.href}\n`);
            },
          }),
        );
        context.io.stderr(`keel: signed in to ${name}; the grant is kept encrypted in the Keel home\n`);
      },
    );

  mcp
    .command('logout')
    .description("forget an HTTP MCP server's sign-in (its tokens and registered client)")
    .argument('<name>', 'server name')
    .action((name: string) => {
      admin(() => logoutMcpServer(context.home(), name));
      context.io.stderr(`keel: signed out of ${name}\n`);
    });

  mcp
    .command('remove')
    .description('remove a server from your settings or, with --project, from that .mcp.json')
    .argument('<name>', 'server name')
    .option('--project <dir>', "remove it from this project's .mcp.json")
    .action((name: string, options: { project?: string }) => {
      const home = context.home();
      admin(() =>
        removeMcpServer(
          home,
          name,
          options.project === undefined ? {} : { project: path.resolve(options.project) },
        ),
      );
      context.io.stdout(`removed MCP server ${name}\n`);
    });

  mcp
    .command('approve')
    .description("approve a project's .mcp.json as it is now: its servers start from the next turn")
    .option('--project <dir>', 'the project (default: the current folder)')
    .action((options: { project?: string }) => {
      const status = admin(() =>
        approveProjectMcp(context.home(), folderOf(options.project), 'keel mcp approve'),
      );
      context.io.stdout(`approved ${status.file} (servers: ${status.servers.join(', ') || 'none'})\n`);
    });

  mcp
    .command('revoke')
    .description("withdraw the approval of a project's .mcp.json")
    .option('--project <dir>', 'the project (default: the current folder)')
    .action((options: { project?: string }) => {
      const folder = folderOf(options.project);
      admin(() => revokeProjectMcp(context.home(), folder, 'keel mcp revoke'));
      context.io.stdout(`revoked the approval of ${projectMcpStatus(context.home(), folder).file}\n`);
    });

  mcp
    .command('rules')
    .description(
      'list the MCP tools that run without asking in a project (granted with --scope tool), or revoke one',
    )
    .option('--project <dir>', 'the project (default: the current folder)')
    .option('--all', 'every project')
    .option('--revoke <tool>', 'revoke the rule for this tool (mcp__<server>__<tool>): it asks again')
    .option('--json', 'print JSON')
    .action((options: { project?: string; all?: boolean; revoke?: string; json?: boolean }) => {
      const folder = realProjectFolder(folderOf(options.project));
      if (options.revoke !== undefined) {
        if (!revokeToolRule(context.home(), folder, options.revoke, 'keel mcp rules --revoke')) {
          throw new CliError(
            `no rule for ${options.revoke} in ${folder} (keel mcp rules --project DIR lists them)`,
          );
        }
        context.io.stdout(`revoked: ${options.revoke} asks again in ${folder} from the next turn\n`);
        return;
      }
      const rules = listToolRules(context.home(), options.all ? undefined : folder);
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ rules }, null, 2)}\n`);
        return;
      }
      if (rules.length === 0) {
        context.io.stdout(`no tool rules${options.all ? '' : ` in ${folder}`}\n`);
        return;
      }
      const rows = rules.map((rule) => [rule.tool, rule.project, rule.addedAt, rule.via]);
      context.io.stdout(`${formatTable(['TOOL', 'PROJECT', 'ADDED', 'VIA'], rows)}\n`);
    });
}

const SIGN_IN_WORDS = {
  signed_in: 'signed in',
  signed_out: 'not signed in (keel mcp login NAME if it asks for a sign-in)',
  expired: 'sign-in expired: keel mcp login NAME',
  revoked: 'sign-in revoked by the server: keel mcp login NAME',
} as const;

/** The settings' HTTP servers' sign-in states and where their tokens are kept (none without an HTTP server). */
function formatSignIns(configured: ReturnType<typeof configuredMcpServers>): string {
  const http = configured.servers.filter((server) => server.signIn !== undefined);
  if (http.length === 0) return '';
  const lines = http.map(
    (server) =>
      `${server.name}: ${SIGN_IN_WORDS[server.signIn ?? 'signed_out'].replace('NAME', server.name)}`,
  );
  return `${lines.join('\n')}\nsign-in tokens: ${configured.tokenStorage}\n`;
}

/** One block per server (state, tools or the error with its stderr tail), then the project file's status. */
function formatInspection(inspection: McpInspection): string {
  const lines: string[] = [];
  if (inspection.servers.length === 0) lines.push('no MCP servers configured');
  for (const server of inspection.servers) {
    const state = server.state;
    lines.push(`${server.name} (${server.source}, ${server.transport}): ${state.state}`);
    if (state.state === 'failed') {
      lines.push(`  error: ${state.error}`);
      for (const line of state.stderrTail.trim().split('\n').slice(-5))
        if (line) lines.push(`  stderr: ${line}`);
    }
    for (const tool of server.tools) {
      lines.push(`  ${tool}${inspection.disabledTools.includes(tool) ? ' (disabled)' : ''}`);
    }
  }
  for (const skip of inspection.skipped) lines.push(`skipped ${skip}`);
  const project = inspection.project;
  if (project?.status === 'untrusted') {
    lines.push(
      `${project.file}: not approved (servers ${project.servers.join(', ')} do not start): keel mcp approve --project ${project.folder}`,
    );
  } else if (project?.status === 'invalid') lines.push(`${project.file}: ${project.error ?? 'invalid'}`);
  return `${lines.join('\n')}\n`;
}
