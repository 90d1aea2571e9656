import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpBoxOptions } from './boxedServer.js';
import type { McpServerEntry, McpServerPlan } from './config.js';
import { DEFAULT_MCP_TIMEOUTS, McpConnection, type McpServerState, type McpTimeouts } from './connection.js';
import {
  fillPrompt,
  type McpPromptInfo,
  type McpPromptMessages,
  type McpResourceInfo,
  promptsOf,
  resourcesOf,
  resourceToolFor,
} from './resources.js';
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
  /** Tool modules of every ready server, disabled tools left out; fixed for a turn (changed only by relist). */
  tools: ToolModule[];
  servers: McpServerReport[];
  /** Listed tools that could not be offered, with why. */
  skipped: SkippedTool[];
  /** Resources the ready servers list (read by the model with `read_mcp_resource`, among `tools` when any). */
  resources: McpResourceInfo[];
  /** Prompts the ready servers list, with their arguments (asked now). */
  listPrompts(): Promise<McpPromptInfo[]>;
  /** One resource of a running server, its contents as the server gave them; throws a sentence when it cannot be. */
  readResource(server: string, uri: string): Promise<ReadResourceResult>;
  /** One server's prompt filled with its arguments; throws a sentence when it cannot be. */
  getPrompt(server: string, name: string, args: Record<string, string>): Promise<McpPromptMessages>;
  /** One tool of a running server called directly (`keel mcp call`: the person's own call, no turn, no gate). */
  callTool(server: string, tool: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** Issue 33: asks a server to say when a resource changes; false when it does not offer subscriptions. */
  subscribe(server: string, uri: string): Promise<boolean>;
  /** Updates of subscribed resources since the last call (each server/uri once), handed over and forgotten. */
  takeResourceUpdates(): { server: string; uri: string }[];
  /**
   * Calls `arrived` each time an update of a subscribed resource arrives (a running turn records it then:
   * core/mcp/resourceSubscriptions.ts); returns the unwatch.
   */
  watchResourceUpdates(arrived: () => void): () => void;
  /** Names of servers that said `tools/list_changed` since they started (or since the last `relist`). */
  changed(): string[];
  /** False once a server failed for good (did not start, or gave up restarting): the session is reopened. */
  healthy(): boolean;
  /** Lists every server's tools again (at the start of a turn that keeps them): new tools, servers, skipped. */
  relist(): Promise<void>;
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
  // `server\nuri` of updated subscribed resources, until a turn takes them.
  const updates = new Set<string>();
  const watchers = new Set<() => void>();
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
        onResourceUpdated: (server, uri) => {
          updates.add(`${server}\n${uri}`);
          for (const arrived of [...watchers]) arrived();
        },
      }),
  );
  const describe = async (
    connection: McpConnection,
  ): Promise<{
    report: McpServerReport;
    modules: ToolModule[];
    skipped: SkippedTool[];
    resources: McpResourceInfo[];
  }> => {
    const { entry } = connection;
    const base = {
      name: entry.name,
      source: entry.source,
      transport: 'command' in entry.config ? ('stdio' as const) : ('http' as const),
    };
    // A kept server that died between turns: its restart is waited for, not its tools left out of this turn.
    await connection.settle();
    if (connection.state.state !== 'ready')
      return {
        report: { ...base, state: connection.state, tools: [] },
        modules: [],
        skipped: [],
        resources: [],
      };
    try {
      const listed = await connection.listTools();
      const callTimeoutMs = entry.config.timeoutMs ?? options.callTimeoutMs;
      const built = toolModulesFor(connection, listed, callTimeoutMs === undefined ? {} : { callTimeoutMs });
      const modules = built.modules.filter((module) => !disabled.has(module.name));
      // A server whose resources cannot be listed still gives its tools.
      const resources = await resourcesOf(connection).catch(() => []);
      return {
        report: { ...base, state: connection.state, tools: modules.map((m) => m.name) },
        modules,
        skipped: built.skipped,
        resources,
      };
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
        skipped: [],
        resources: [],
      };
    }
  };
  await Promise.all(connections.map((connection) => connection.start()));
  let closed: Promise<void> | undefined;
  const session: McpSession = {
    tools: [],
    servers: [],
    skipped: [],
    resources: [],
    changed: () => [...changed],
    listPrompts: async () => {
      const ready = connections.filter((connection) => connection.state.state === 'ready');
      const listed = await Promise.all(ready.map((connection) => promptsOf(connection).catch(() => [])));
      return listed.flat();
    },
    readResource: (server, uri) => {
      const connection = connections.find((c) => c.entry.name === server);
      if (!connection) return Promise.reject(new Error(`no MCP server "${server}" is running`));
      return connection.readResource(uri);
    },
    getPrompt: (server, name, args) => {
      const connection = connections.find((c) => c.entry.name === server);
      if (!connection) return Promise.reject(new Error(`no MCP server "${server}" is running`));
      return fillPrompt(connection, name, args);
    },
    subscribe: async (server, uri) => {
      const connection = connections.find((c) => c.entry.name === server);
      if (!connection || connection.state.state !== 'ready') return false;
      return connection.subscribe(uri);
    },
    takeResourceUpdates: () => {
      const taken = [...updates].map((key) => {
        const [server = '', ...rest] = key.split('\n');
        return { server, uri: rest.join('\n') };
      });
      updates.clear();
      return taken;
    },
    watchResourceUpdates: (arrived) => {
      // A wrapper per watch: the same function watched twice is two watches, each unwatched on its own.
      const watcher = () => arrived();
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
    callTool: (server, tool, args) => {
      const connection = connections.find((c) => c.entry.name === server);
      if (!connection) return Promise.reject(new Error(`no MCP server "${server}" is running`));
      const timeoutMs = connection.entry.config.timeoutMs ?? options.callTimeoutMs ?? 120_000;
      return connection.callTool(tool, args, {
        timeoutMs,
        maxTotalMs: timeoutMs * 10,
        idempotencyKey: `keel-mcp-call-${tool}`,
      });
    },
    // A server whose tools/list failed was closed (its connection's state still says ready): unhealthy too,
    // so a long-lived host starts the servers anew rather than keeping a closed one.
    healthy: () =>
      connections.every((connection) => connection.state.state !== 'failed') &&
      session.servers.every((report) => report.state.state !== 'failed'),
    relist: async () => {
      changed.clear();
      const described = await Promise.all(connections.map(describe));
      session.resources = described.flatMap((server) => server.resources);
      const withResources = connections.filter((connection) => connection.capabilities.resources);
      session.tools = [
        ...described.flatMap((server) => server.modules),
        ...(withResources.length > 0 ? [resourceToolFor(withResources, session.resources)] : []),
      ];
      session.servers = described.map((server) => server.report);
      session.skipped = described.flatMap((server) => server.skipped);
    },
    close: () => {
      closed ??= Promise.all(connections.map((connection) => connection.close())).then(() => undefined);
      return closed;
    },
  };
  await session.relist();
  return session;
}

/** The session's timeouts with the server's own start bound, when its config names one. */
function timeoutsFor(entry: McpServerEntry, base: McpTimeouts = DEFAULT_MCP_TIMEOUTS): McpTimeouts {
  return entry.config.startTimeoutMs === undefined ? base : { ...base, startMs: entry.config.startTimeoutMs };
}
