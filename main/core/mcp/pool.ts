import type { McpSession } from '../../mcp/session.js';

/** A session's servers kept between its turns: what they were started for, and where their notices go. */
export type KeptMcp = {
  /** Hash of everything the servers were started from (plan, box, disabled tools): a change restarts them. */
  key: string;
  session: McpSession;
  /** The running turn's notice sink (a crash between turns reaches nobody: the next turn sees the state). */
  notices: { send?: (text: string) => void };
};

/** Ten idle minutes stop a session's servers (the next turn starts them again, ~350 ms each). */
export const DEFAULT_MCP_IDLE_MS = 10 * 60_000;

/**
 * A long-lived host's MCP servers by session, kept alive between turns so a turn does not pay a server's
 * start. At most one turn of a session runs at a time (the writer lease), so a turn `take`s the entry and
 * `keep`s it back when it ends; an entry nobody takes for `idleMs` is stopped, as is everything on `stop()`.
 */
export class McpPool {
  private readonly kept = new Map<string, { entry: KeptMcp; timer: ReturnType<typeof setTimeout> }>();

  /** Sessions stopped while a turn had their servers out: that turn's `keep` closes them instead. */
  private readonly dropped = new Set<string>();
  /** Sessions whose turn runs (took, not yet kept back). */
  private readonly out = new Set<string>();
  private closed = false;

  constructor(private readonly idleMs = DEFAULT_MCP_IDLE_MS) {}

  /** The session's kept servers, now owned by the caller (its idle timer is off), or undefined. */
  take(sessionId: string): KeptMcp | undefined {
    this.out.add(sessionId);
    const kept = this.kept.get(sessionId);
    if (!kept) return undefined;
    clearTimeout(kept.timer);
    this.kept.delete(sessionId);
    return kept.entry;
  }

  /** Gives the servers back after a turn; they stop after `idleMs` unless a turn takes them first. */
  keep(sessionId: string, entry: KeptMcp): Promise<void> {
    const previous = this.take(sessionId);
    this.out.delete(sessionId);
    if (previous && previous.session !== entry.session) void previous.session.close();
    entry.notices.send = undefined;
    if (this.closed || this.dropped.delete(sessionId)) return entry.session.close();
    const timer = setTimeout(() => {
      if (this.kept.get(sessionId)?.entry === entry) void this.stop(sessionId);
    }, this.idleMs);
    timer.unref();
    this.kept.set(sessionId, { entry, timer });
    return Promise.resolve();
  }

  /** A turn that took nothing and keeps nothing (no server planned) is done with the session. */
  release(sessionId: string): void {
    this.out.delete(sessionId);
    this.dropped.delete(sessionId);
  }

  /** Ids of sessions whose servers are kept (idle, between turns). */
  sessions(): string[] {
    return [...this.kept.keys()];
  }

  /** Stops one session's kept servers (closed, evicted, idle), or every session's (the host exits). */
  async stop(sessionId?: string): Promise<void> {
    if (sessionId === undefined) this.closed = true;
    else if (this.out.has(sessionId)) this.dropped.add(sessionId);
    const ids = sessionId === undefined ? [...this.kept.keys()] : [sessionId];
    await Promise.all(
      ids.map((id) => {
        const kept = this.kept.get(id);
        if (!kept) return Promise.resolve();
        clearTimeout(kept.timer);
        this.kept.delete(id);
        return kept.entry.session.close();
      }),
    );
  }
}
