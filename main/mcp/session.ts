import type { McpBoxOptions } from './boxedServer.js';
import type { McpServerEntry, McpServerPlan } from './config.js';
import { DEFAULT_MCP_TIMEOUTS, McpConnection, type McpServerState, type McpTimeouts } from './connection.js';
import { toolModulesFor, type SkippedTool } from './tools.js';
import type { ToolModule } from '../tools/types.js';

/** One server of a session as recorded and shown: where it came from, its state, the tools it gave. */
export type McpServerReport = {
  name: string;
  source: McpServerEntry['source'];
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** Registry names of its tools (`mcp__<server>__<tool>`), in the server's order. */
  tools: string[];
};

/** What starting a session's servers gives: tools for the registry, reports, and a way to stop them all. */
export type McpSession = {
  /** Tool modules of every ready server, disabled tools left out; fixed for the turn that asked. */
  tools: ToolModule[];
  servers: McpServerReport[];
  /** Listed tools that could not be offered, with why. */
  skipped: SkippedTool[];
  /** Names of servers that said `tools/list_changed` since they started. */
  changed(): string[];
  /** Stops every server (and its proxy); idempotent. */
  close(): Promise<void>;
};

export type StartMcpOptions = {
  plan: McpServerPlan;
  box: McpBoxOptions;
  /** Registry names switched off in settings (`mcp.disabledTools`). */
  disabledTools?: readonly string[];
  timeouts?: McpTimeouts;
  callTimeoutMs?: number;
  /** A crash, a restart, a tool list change: one sentence for the user. */
  onNotice?: (text: string) => void;
};

/**
 * Starts every planned server at once (each bounded by its start timeout), lists its tools and builds their
 * modules. A server that fails to start or to list is reported `failed` with its stderr tail and adds no tool;
 * the others are unaffected. Never throws.
 */
export async function startMcpSession(options: StartMcpOptions): Promise<McpSession> {
  const changed = new Set<string>();
  const disabled = new Set(options.disabledTools ?? []);
  const connections = options.plan.servers.map(
    (entry) =>
      new McpConnection(entry, options.box, timeoutsFor(entry, options.timeouts), {
        onToolsChanged: (server) => {
          if (!changed.has(server))
            options.onNotice?.(`MCP server "${server}" changed its tools: they apply at the next turn`);
          changed.add(server);
        },
        ...(options.onNotice ? { onNotice: options.onNotice } : {}),
      }),
  );
  const tools: ToolModule[] = [];
  const skipped: SkippedTool[] = [];
  const servers = await Promise.all(
    connections.map(async (connection): Promise<{ report: McpServerReport; modules: ToolModule[] }> => {
      const { entry } = connection;
      const base = {
        name: entry.name,
        source: entry.source,
        transport: 'command' in entry.config ? ('stdio' as const) : ('http' as const),
      };
      await connection.start();
      if (connection.state.state !== 'ready')
        return { report: { ...base, state: connection.state, tools: [] }, modules: [] };
      try {
        const listed = await connection.listTools();
        const callTimeoutMs = entry.config.timeoutMs ?? options.callTimeoutMs;
        const built = toolModulesFor(
          connection,
          listed,
          callTimeoutMs === undefined ? {} : { callTimeoutMs },
        );
        skipped.push(...built.skipped);
        const modules = built.modules.filter((module) => !disabled.has(module.name));
        return { report: { ...base, state: connection.state, tools: modules.map((m) => m.name) }, modules };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await connection.close();
        return {
          report: {
            ...base,
            state: { state: 'failed', error: `tools/list failed: ${message}`, stderrTail: '' },
            tools: [],
          },
          modules: [],
        };
      }
    }),
  );
  for (const server of servers) tools.push(...server.modules);
  let closed: Promise<void> | undefined;
  return {
    tools,
    servers: servers.map((server) => server.report),
    skipped,
    changed: () => [...changed],
    close: () => {
      closed ??= Promise.all(connections.map((connection) => connection.close())).then(() => undefined);
      return closed;
    },
  };
}

/** The session's timeouts with the server's own start bound, when its config names one. */
function timeoutsFor(entry: McpServerEntry, base: McpTimeouts = DEFAULT_MCP_TIMEOUTS): McpTimeouts {
  return entry.config.startTimeoutMs === undefined ? base : { ...base, startMs: entry.config.startTimeoutMs };
}
