import { createFlowControl, type FlowControl, type RunningCommand } from '../core/harness/index.js';

/** A watcher whose flow holds a command paused and has acked nothing for this long is taken for gone. */
export const FLOW_STALL_MS = 15_000;

/** Finds the command a turn of this process is running for a call, if any. */
export type CommandLookup = (sessionId: string, toolCallId: string) => RunningCommand | undefined;

type Watch = { flow: FlowControl; detach: () => void; lastAckAt: number };

/** Options of OutputFlows. */
export type OutputFlowsOptions = {
  lookup: CommandLookup;
  stallMs?: number;
  /** Called when a watcher was dropped for not acking (diagnostics, tests). */
  onStall?: (client: string, sessionId: string, toolCallId: string) => void;
};

const keyOf = (sessionId: string, toolCallId: string) => `${sessionId}\u0000${toolCallId}`;

/**
 * Ack-based flow control of live command output, per connection: a connection that watches a session
 * (tool.watch) gets its own flow on each of the session's running commands, fed by the runner with exactly
 * the chunks pushed as tool.output; its acks (tool.outputAck) let the command go on. A command pauses while
 * any watcher is more than 100,000 characters behind. Unwatch, disconnect, the command's end or a watcher
 * that acks nothing for FLOW_STALL_MS while it holds the command releases that flow, so a vanished UI never
 * leaves a command paused until its timeout.
 */
export class OutputFlows {
  /** sessionId → connections watching it. */
  private readonly watchers = new Map<string, Set<string>>();
  /** session+call → connection → its flow on that command. */
  private readonly flows = new Map<string, Map<string, Watch>>();
  /** session+call → connections dropped for stalling: never flow-controlled again on that command. */
  private readonly dropped = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stallMs: number;

  constructor(private readonly options: OutputFlowsOptions) {
    this.stallMs = options.stallMs ?? FLOW_STALL_MS;
  }

  /** `client` renders the session's command output from now on and will ack it. Idempotent. */
  watch(client: string, sessionId: string): void {
    let set = this.watchers.get(sessionId);
    if (!set) this.watchers.set(sessionId, (set = new Set()));
    set.add(client);
  }

  /** `client` stops watching the session: its flows there are released (paused commands resume). */
  unwatch(client: string, sessionId: string): void {
    const set = this.watchers.get(sessionId);
    set?.delete(client);
    if (set?.size === 0) this.watchers.delete(sessionId);
    for (const [key, byClient] of this.flows) {
      if (!key.startsWith(`${sessionId}\u0000`)) continue;
      const watch = byClient.get(client);
      if (watch) this.drop(key, client, watch);
    }
  }

  /**
   * Called with every live chunk of a command, before it is pushed: attaches a flow for each watcher of the
   * session that has none on this command yet, so the runner counts this chunk and every later one.
   */
  beforeOutput(sessionId: string, toolCallId: string): void {
    const set = this.watchers.get(sessionId);
    if (!set || set.size === 0) return;
    const key = keyOf(sessionId, toolCallId);
    let byClient = this.flows.get(key);
    const dropped = this.dropped.get(key);
    let handle: RunningCommand | undefined;
    for (const client of set) {
      if (byClient?.has(client) || dropped?.has(client)) continue;
      handle ??= this.options.lookup(sessionId, toolCallId);
      if (!handle) return;
      const flow = createFlowControl();
      const detach = handle.attachFlow(flow);
      if (!byClient) this.flows.set(key, (byClient = new Map<string, Watch>()));
      byClient.set(client, { flow, detach, lastAckAt: Date.now() });
    }
    this.ensureTimer();
  }

  /** `client` rendered `chars` more characters of the command's output; returns what it has still unacked. */
  ack(client: string, sessionId: string, toolCallId: string, chars: number): number {
    const watch = this.flows.get(keyOf(sessionId, toolCallId))?.get(client);
    if (!watch) return 0;
    watch.flow.ack(chars);
    watch.lastAckAt = Date.now();
    return watch.flow.unackedChars;
  }

  /** The command ended (its result is recorded): forget its flows. */
  commandEnded(sessionId: string, toolCallId: string): void {
    const key = keyOf(sessionId, toolCallId);
    for (const [client, watch] of this.flows.get(key) ?? []) this.drop(key, client, watch);
    this.flows.delete(key);
    this.dropped.delete(key);
  }

  /** A session's turn ended: forget every flow on its commands (the runner has detached them already). */
  sessionEnded(sessionId: string): void {
    for (const key of [...this.flows.keys(), ...this.dropped.keys()]) {
      if (!key.startsWith(`${sessionId}\u0000`)) continue;
      const [, toolCallId = ''] = key.split('\u0000');
      this.commandEnded(sessionId, toolCallId);
    }
  }

  /** The connection is gone: everything it watched is released. */
  disconnect(client: string): void {
    for (const sessionId of [...this.watchers.keys()]) this.unwatch(client, sessionId);
  }

  /** Releases every flow (shutdown). */
  close(): void {
    for (const [key, byClient] of this.flows)
      for (const [client, watch] of byClient) this.drop(key, client, watch);
    this.flows.clear();
    this.dropped.clear();
    this.watchers.clear();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** How many flows are attached (tests, diagnostics). */
  get size(): number {
    let count = 0;
    for (const byClient of this.flows.values()) count += byClient.size;
    return count;
  }

  private drop(key: string, client: string, watch: Watch): void {
    watch.flow.release();
    watch.detach();
    const byClient = this.flows.get(key);
    byClient?.delete(client);
    if (byClient?.size === 0) this.flows.delete(key);
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), Math.min(1000, this.stallMs));
    this.timer.unref();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, byClient] of [...this.flows]) {
      for (const [client, watch] of [...byClient]) {
        if (!watch.flow.paused || now - watch.lastAckAt < this.stallMs) continue;
        this.drop(key, client, watch);
        let dropped = this.dropped.get(key);
        if (!dropped) this.dropped.set(key, (dropped = new Set()));
        dropped.add(client);
        const [sessionId = '', toolCallId = ''] = key.split('\u0000');
        this.options.onStall?.(client, sessionId, toolCallId);
      }
    }
    if (this.flows.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
