import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ErrorCode,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type GetPromptResult,
  type Progress,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { isStdioServer } from '../common/mcp.js';
import { httpTransport, type ServerTransport } from './httpTransport.js';
import type { AllowlistProxy } from '../sandbox/boxProxy.js';
import { boxServerCommand, isShellCommand, type McpBoxOptions } from './boxedServer.js';
import type { McpServerEntry } from './config.js';
import { BoxedStdioTransport } from './stdioTransport.js';
import { grantSecrets, scrubSecrets } from './tokenScrub.js';

/** Bounds of one server's life, in milliseconds. */
export type McpTimeouts = {
  /** Starting the process and the initialize handshake. */
  startMs: number;
  /** tools/list. */
  listMs: number;
  /** Restart delays after a crash, in order; once used up the server stays failed for the session. */
  restartBackoffMs: readonly number[];
};

/** What the SDK's Streamable HTTP transport reports when a stream broke or could not be resumed. */
const LOST_STREAM = /SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts/;
/** How long an HTTP server whose stream broke has to answer a ping before it is taken as stopped. */
const PING_TIMEOUT_MS = 5000;

export const DEFAULT_MCP_TIMEOUTS: McpTimeouts = {
  startMs: 30_000,
  listMs: 15_000,
  restartBackoffMs: [250, 1000, 4000],
};

/** A call that ran past its bound (no answer or progress for `timeoutMs`, or `maxTotalMs` in all); cancelled. */
export class CallTimeout extends Error {}

/** A server's state as people see it (settings screen, `keel mcp list`, the session's events). */
export type McpServerState =
  { state: 'starting' } | { state: 'ready' } | { state: 'failed'; error: string; stderrTail: string };

/** What a connection tells its session while it lives. */
export type ConnectionEvents = {
  /** The server said its tool list changed (takes effect at the next turn). */
  onToolsChanged?: (server: string) => void;
  /** The server crashed, restarted, or gave up: one sentence for the user. */
  onNotice?: (text: string) => void;
  /** Issue 33: a resource this connection subscribed to changed (`notifications/resources/updated`). */
  onResourceUpdated?: (server: string, uri: string) => void;
};

/**
 * One MCP server for one session: started in the box (stdio), initialized, asked for its tools, called.
 * A server that dies fails the call in flight (the SDK rejects every pending request on close), and is
 * restarted after the next delay of `restartBackoffMs`; each crash and restart is reported.
 */
export class McpConnection {
  private client: Client | undefined;
  private transport: ServerTransport | undefined;
  private proxy: AllowlistProxy | null = null;
  private current: McpServerState = { state: 'starting' };
  private restarts = 0;
  private closing = false;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private ready: Promise<void> | undefined;
  private pinging = false;
  /** An HTTP server's stored OAuth grant (none: stdio, or not signed in): its tokens never pass on (tokenScrub.ts). */
  private auth: OAuthClientProvider | undefined;

  constructor(
    readonly entry: McpServerEntry,
    private readonly box: McpBoxOptions,
    private readonly timeouts: McpTimeouts = DEFAULT_MCP_TIMEOUTS,
    private readonly events: ConnectionEvents = {},
  ) {}

  get state(): McpServerState {
    return this.current;
  }

  /** Starts the server and completes the handshake; never throws (a failure is the `failed` state). */
  start(): Promise<void> {
    this.ready = this.connect();
    return this.ready;
  }

  private async connect(): Promise<void> {
    this.current = { state: 'starting' };
    const { entry } = this;
    let transport: ServerTransport | undefined;
    try {
      if (isStdioServer(entry.config)) {
        const boxed = await boxServerCommand(entry.name, entry.config, this.box);
        this.proxy = boxed.proxy;
        transport = new BoxedStdioTransport(boxed.spec);
      } else {
        this.auth = this.box.authFor?.(entry.name, entry.config.url);
        transport = httpTransport(entry.config, this.box.network, this.auth);
      }
      this.transport = transport;
      const client = new Client({ name: 'keel', version: '0.1.0' }, { capabilities: {} });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.events.onToolsChanged?.(entry.name);
      });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        // Only what this session asked for: a server cannot make up updates to resources it never read.
        if (this.subscribed.has(notification.params.uri))
          this.events.onResourceUpdated?.(entry.name, notification.params.uri);
      });
      const http = !isStdioServer(entry.config);
      client.onerror = (error) => {
        // An HTTP server that went away only breaks its SSE streams: the SDK retries and reports, but the
        // requests waiting on them would wait for their timeouts. A ping tells a dead server from a blip.
        if (http && LOST_STREAM.test(error.message)) this.checkAlive(client, transport as ServerTransport);
      };
      await client.connect(transport, { timeout: this.timeouts.startMs });
      this.client = client;
      // Set after connect: the SDK's own onclose handler is installed by connect and calls this one.
      client.onclose = () => this.onClosed(transport as ServerTransport);
      this.current = { state: 'ready' };
      // A restarted server forgot the session's subscriptions: asked again (best effort, not awaited).
      for (const uri of this.subscribed) void this.sendSubscribe(client, uri).catch(() => undefined);
    } catch (error) {
      let reason = transport?.exitReason ?? describe(error);
      if (!isStdioServer(entry.config) && needsSignIn(error))
        reason += `; sign in with keel mcp login ${entry.name} (or in Settings)`;
      if (isStdioServer(entry.config) && isShellCommand(entry.config.command))
        reason += `; a shell's script text binds no folder into the box, so a program the box hides cannot start from it: configure the program itself (command "node", args ["/path/to/server.js"])`;
      this.current = { state: 'failed', error: reason, stderrTail: transport?.stderrTail ?? '' };
      await transport?.close().catch(() => undefined);
      await this.proxy?.close();
      this.proxy = null;
    }
  }

  private onClosed(transport: ServerTransport): void {
    this.client = undefined;
    if (this.closing) return;
    const error = `the server stopped: ${transport.exitReason ?? 'connection closed'}`;
    this.current = { state: 'failed', error, stderrTail: transport.stderrTail ?? '' };
    const delay = this.timeouts.restartBackoffMs[this.restarts];
    if (delay === undefined) {
      this.events.onNotice?.(`MCP server "${this.entry.name}" ${error}; not restarted again this session`);
      return;
    }
    this.restarts++;
    this.events.onNotice?.(`MCP server "${this.entry.name}" ${error}; restarting in ${delay} ms`);
    void this.proxy?.close();
    this.proxy = null;
    // A call made meanwhile waits for the restart (callTool awaits `ready`).
    this.ready = new Promise<void>((resolve) => {
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.closing) return resolve();
        void this.connect().then(() => {
          const state = this.current;
          this.events.onNotice?.(
            state.state === 'failed'
              ? `MCP server "${this.entry.name}" did not restart: ${state.error}`
              : `MCP server "${this.entry.name}" restarted`,
          );
          resolve();
        });
      }, delay);
      this.restartTimer.unref();
    });
  }

  /**
   * After an HTTP stream broke: a server that does not answer a ping is taken as stopped, its connection
   * closed (every request in flight fails at once) and restarted like a crashed stdio server.
   */
  private checkAlive(client: Client, transport: ServerTransport): void {
    if (this.pinging || this.closing || this.client !== client) return;
    this.pinging = true;
    client
      .ping({ timeout: PING_TIMEOUT_MS })
      .then(
        () => undefined,
        (error: unknown) => {
          if (this.closing || this.client !== client) return;
          transport.exitReason = `it stopped answering (${describe(error)})`;
          return client.close();
        },
      )
      .catch(() => undefined)
      .finally(() => {
        this.pinging = false;
      });
  }

  /**
   * Waits for a restart in progress (a server that died, its backoff running), so a kept server that died
   * between turns is up again, or failed for good, before the next turn lists its tools.
   */
  async settle(): Promise<void> {
    if (!this.client && this.ready && !this.closing) await this.ready;
  }

  /**
   * Every tool the server lists (all pages). Throws when the server is not ready or does not answer. A server
   * found dead by this very request (it died between turns, unseen until now) is listed once more after its
   * restart: tools/list changes nothing, so asking again is safe (a tool call is never repeated).
   */
  async listTools(): Promise<Tool[]> {
    await this.settle();
    const client = this.client;
    if (!client) throw new Error(this.notReady());
    try {
      return await this.listFrom(client);
    } catch (error) {
      if (this.client === client || this.closing) throw error;
      await this.settle();
      const restarted = this.client;
      if (!restarted) throw error;
      return this.listFrom(restarted);
    }
  }

  private async listFrom(client: Client): Promise<Tool[]> {
    return this.scrubbed(
      await allPages(async (params) => {
        const page = await client.listTools(params, { timeout: this.timeouts.listMs });
        return { items: page.tools, nextCursor: page.nextCursor };
      }),
    );
  }

  /** What the server said, without its own OAuth tokens (tokenScrub.ts). */
  private async scrubbed<T>(value: T): Promise<T> {
    return scrubSecrets(value, await grantSecrets(this.auth), `keel:mcp:${this.entry.name}`);
  }

  /** A failure whose message may quote the server: its tokens taken out of it (in place) too. */
  private async scrubbedError(error: unknown): Promise<void> {
    if (error instanceof Error) error.message = await this.scrubbed(error.message);
  }

  /**
   * Calls one tool. Aborting `signal` sends notifications/cancelled and rejects; so does a timeout (a
   * `CallTimeout`). `timeoutMs` bounds the time without an answer or a progress notification (the request
   * asks for progress; each one restarts the bound, as the SDK's resetTimeoutOnProgress does), `maxTotalMs`
   * the whole call however much progress arrives. A server that restarted since the session started is
   * waited for (up to its start timeout).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      timeoutMs: number;
      maxTotalMs: number;
      idempotencyKey: string;
      onProgress?: (progress: Progress) => void;
    },
  ): Promise<CallToolResult> {
    if (!this.client && this.ready) await this.ready;
    const client = this.client;
    if (!client) throw new Error(this.notReady());
    // Keel's own bound on the whole call, through the signal: an abort sends notifications/cancelled,
    // which the SDK's maxTotalTimeout does not.
    const total = new AbortController();
    const timer = setTimeout(() => total.abort(), options.maxTotalMs);
    const signal = options.signal ? AbortSignal.any([options.signal, total.signal]) : total.signal;
    try {
      const result = await client.callTool(
        { name, arguments: args, _meta: { idempotencyKey: options.idempotencyKey } },
        undefined,
        {
          timeout: options.timeoutMs,
          resetTimeoutOnProgress: true,
          signal,
          onprogress: (progress) => options.onProgress?.(progress),
        },
      );
      return await this.scrubbed(result as CallToolResult);
    } catch (error) {
      await this.scrubbedError(error);
      if (total.signal.aborted && !options.signal?.aborted) {
        throw new CallTimeout(
          `${name} was still running after ${options.maxTotalMs} ms in all (its progress notifications kept it going) and was cancelled`,
        );
      }
      if (error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout)) {
        throw new CallTimeout(
          `${name} did not answer within ${options.timeoutMs} ms and was cancelled (no result and no progress for that long)`,
        );
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** What the server said it offers (its initialize answer); nothing while it is not running. */
  get capabilities(): ServerCapabilities {
    return this.client?.getServerCapabilities() ?? {};
  }

  /** Every resource the server lists (all pages); [] for a server without resources. */
  async listResources(): Promise<Resource[]> {
    const client = await this.live();
    if (!client.getServerCapabilities()?.resources) return [];
    return this.scrubbed(
      await allPages(async (params) => {
        const page = await client.listResources(params, { timeout: this.timeouts.listMs });
        return { items: page.resources, nextCursor: page.nextCursor };
      }),
    );
  }

  /** Resources this session subscribed to (kept across restarts). */
  private readonly subscribed = new Set<string>();

  /** Whether the server offers `resources/subscribe`. */
  get canSubscribe(): boolean {
    return this.client?.getServerCapabilities()?.resources?.subscribe === true;
  }

  /**
   * Issue 33: asks the server to say when `uri` changes (`resources/subscribe`), once per resource; false when
   * it does not offer subscriptions. Updates reach `onResourceUpdated`.
   */
  async subscribe(uri: string): Promise<boolean> {
    const client = await this.live();
    if (client.getServerCapabilities()?.resources?.subscribe !== true) return false;
    if (this.subscribed.has(uri)) return true;
    this.subscribed.add(uri);
    try {
      await this.sendSubscribe(client, uri);
      return true;
    } catch (error) {
      this.subscribed.delete(uri);
      throw error;
    }
  }

  private async sendSubscribe(client: Client, uri: string): Promise<void> {
    await client.subscribeResource({ uri }, { timeout: this.timeouts.listMs });
  }

  /** One resource's contents (`resources/read`), bounded like a listing. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = await this.live();
    try {
      return await this.scrubbed(
        await client.readResource({ uri }, { timeout: this.timeouts.listMs, ...(signal ? { signal } : {}) }),
      );
    } catch (error) {
      await this.scrubbedError(error);
      throw error;
    }
  }

  /** Every prompt the server lists (all pages), with its arguments; [] for a server without prompts. */
  async listPrompts(): Promise<Prompt[]> {
    const client = await this.live();
    if (!client.getServerCapabilities()?.prompts) return [];
    return this.scrubbed(
      await allPages(async (params) => {
        const page = await client.listPrompts(params, { timeout: this.timeouts.listMs });
        return { items: page.prompts, nextCursor: page.nextCursor };
      }),
    );
  }

  /** One prompt filled with its arguments (`prompts/get`). */
  async getPrompt(name: string, args: Record<string, string>): Promise<GetPromptResult> {
    const client = await this.live();
    try {
      return await this.scrubbed(
        await client.getPrompt({ name, arguments: args }, { timeout: this.timeouts.listMs }),
      );
    } catch (error) {
      await this.scrubbedError(error);
      throw error;
    }
  }

  /** The running client, after a restart in progress; throws when the server is not running. */
  private async live(): Promise<Client> {
    await this.settle();
    const client = this.client;
    if (!client) throw new Error(this.notReady());
    return client;
  }

  /** Stops the server (and its proxy); no restart follows. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
      this.ready = undefined;
    }
    await this.ready?.catch(() => undefined);
    await this.client?.close().catch(() => undefined);
    await this.transport?.close().catch(() => undefined);
    await this.proxy?.close();
    this.proxy = null;
  }

  private notReady(): string {
    const state = this.current;
    return state.state === 'failed'
      ? `MCP server "${this.entry.name}" is not running: ${state.error}`
      : `MCP server "${this.entry.name}" is still starting`;
  }
}

/** Every item of a paged list (`nextCursor`), at most 100 pages. */
async function allPages<T>(
  list: (params: { cursor?: string }) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await list(cursor === undefined ? {} : { cursor });
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return items;
}

/** An HTTP server refused for want of a (valid) grant: a 401, or the SDK's own word for it. */
function needsSignIn(error: unknown): boolean {
  return (
    error instanceof UnauthorizedError ||
    (error instanceof StreamableHTTPError && error.code === 401) ||
    (error instanceof Error && /needs a sign-in/.test(error.message))
  );
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? 'failed';
}
