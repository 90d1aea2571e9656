/*
 * Live command output between the bridge and the terminals: every tool.output chunk of a session goes to the
 * terminal showing that run (acked once xterm has parsed it), or into a bounded backlog (acked at once,
 * since nobody renders it) that a terminal opened later starts from. Acks are batched: one call per few
 * thousand characters or per 16 ms, never more characters than were rendered.
 */

/** Receives one chunk and must call `rendered` once it is on screen (xterm's write callback). */
export type OutputSink = (chunk: string, rendered: () => void) => void;

/** Characters of backlog kept per run (the tail); an opened terminal starts from it. */
const BACKLOG_CHARS = 256 * 1024;
/** Runs whose backlog is kept (the newest). */
const BACKLOG_RUNS = 8;
/** Acks wait for this many characters, or for ACK_DELAY_MS. */
const ACK_BATCH_CHARS = 8_192;
const ACK_DELAY_MS = 16;

/** Sums acks and sends them in batches; `flush` sends what is pending now. */
export class AckBatcher {
  private pending = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly send: (chars: number) => void) {}

  /** Counts `chars` more rendered characters. */
  add(chars: number): void {
    if (chars <= 0) return;
    this.pending += chars;
    if (this.pending >= ACK_BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), ACK_DELAY_MS);
  }

  /** Sends the pending count (if any) at once. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === 0) return;
    const chars = this.pending;
    this.pending = 0;
    this.send(chars);
  }

  /** Drops what is pending without sending it (the consumer is gone). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = 0;
  }
}

type Backlog = { chunks: string[]; chars: number; truncated: boolean };

/** Routes one session's live command output to terminals and acks it (see the module comment). */
export class OutputRouter {
  private readonly sinks = new Map<string, OutputSink>();
  private readonly backlogs = new Map<string, Backlog>();
  private readonly batchers = new Map<string, AckBatcher>();
  /** True while this page flow-controls the session (tool.watch): only then are acks sent. */
  watching = false;

  constructor(private readonly sendAck: (toolCallId: string, chars: number) => void) {}

  /** One pushed chunk of a run's output. */
  push(toolCallId: string, chunk: string): void {
    this.remember(toolCallId, chunk);
    const sink = this.sinks.get(toolCallId);
    if (sink) sink(chunk, () => this.ack(toolCallId, chunk.length));
    else this.ack(toolCallId, chunk.length);
  }

  /**
   * Connects a terminal to a run: returns the output seen so far (the backlog's tail, and whether its head was
   * dropped) and delivers every later chunk to `sink`; `detach` disconnects it.
   */
  attach(toolCallId: string, sink: OutputSink): { backlog: string; truncated: boolean; detach: () => void } {
    this.sinks.set(toolCallId, sink);
    const backlog = this.backlogs.get(toolCallId);
    return {
      backlog: backlog ? backlog.chunks.join('') : '',
      truncated: backlog?.truncated ?? false,
      detach: () => {
        if (this.sinks.get(toolCallId) === sink) this.sinks.delete(toolCallId);
      },
    };
  }

  /** True when output of this run was seen live by this page. */
  hasOutput(toolCallId: string): boolean {
    return (this.backlogs.get(toolCallId)?.chars ?? 0) > 0;
  }

  /** Sends every pending ack now (before unwatching). */
  flush(): void {
    for (const batcher of this.batchers.values()) batcher.flush();
  }

  /** Stops everything (the session view is gone). */
  dispose(): void {
    for (const batcher of this.batchers.values()) batcher.dispose();
    this.batchers.clear();
    this.sinks.clear();
    this.backlogs.clear();
  }

  private ack(toolCallId: string, chars: number): void {
    if (!this.watching) return;
    let batcher = this.batchers.get(toolCallId);
    if (!batcher) {
      batcher = new AckBatcher((count) => this.sendAck(toolCallId, count));
      this.batchers.set(toolCallId, batcher);
    }
    batcher.add(chars);
  }

  private remember(toolCallId: string, chunk: string): void {
    let backlog = this.backlogs.get(toolCallId);
    if (!backlog) {
      backlog = { chunks: [], chars: 0, truncated: false };
      this.backlogs.set(toolCallId, backlog);
      if (this.backlogs.size > BACKLOG_RUNS) {
        const oldest = this.backlogs.keys().next().value;
        if (oldest !== undefined && oldest !== toolCallId) this.backlogs.delete(oldest);
      }
    }
    backlog.chunks.push(chunk);
    backlog.chars += chunk.length;
    while (backlog.chars > BACKLOG_CHARS && backlog.chunks.length > 1) {
      backlog.chars -= backlog.chunks.shift()!.length;
      backlog.truncated = true;
    }
  }
}
