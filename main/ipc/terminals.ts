import path from 'node:path';
import {
  type InteractiveTerminal,
  InteractiveTerminalError,
  markTurnStarted,
  openInteractiveTerminal,
  type ProviderKeys,
  readPersistentConfig,
  readSessionBox,
  SessionLog,
  shellStartFolder,
  type TerminalExit,
} from '../core/harness/index.js';
import type { TerminalInfo } from './contract.js';
import { IpcFailure } from './errors.js';
import type { Hub } from './hub.js';

/** What the terminal manager needs from the handlers. */
export type TerminalManagerOptions = {
  home: string;
  hub: Hub;
  env: NodeJS.ProcessEnv;
  keys: () => ProviderKeys;
  /** Makes the session's missing checkouts (under its writer lease) before a shell opens in them. */
  ensureCheckouts: (sessionId: string) => Promise<void>;
};

type OpenTerminal = {
  terminal: InteractiveTerminal;
  sessionId: string;
  client: string;
  openedAt: string;
  /** Marks the checkouts as written to and auto dirs as owing a commit (see markChanged); throttled. */
  touch: () => void;
};

/** How often typing in a terminal re-marks the session's checkouts as possibly changed. */
const TOUCH_INTERVAL_MS = 1000;

/**
 * The users' interactive shells, one pty each inside the session's box (openInteractiveTerminal), owned by the
 * connection that opened them: output is pushed as terminal.data (flow-controlled: the owner acks), the end
 * as terminal.exit. A shell is killed (its whole tree) by terminal.kill, when its connection goes, when its
 * session is deleted, and on shutdown.
 */
export class TerminalManager {
  private readonly open = new Map<string, OpenTerminal>();
  private closing = false;

  constructor(private readonly options: TerminalManagerOptions) {}

  /** Opens a shell in the session's workspace (the project's checkout for a checkout session). */
  async openTerminal(
    client: string,
    sessionId: string,
    size: { cols: number; rows: number; unconfined: boolean },
  ): Promise<{ terminalId: string; cwd: string; sandbox: InteractiveTerminal['sandbox'] }> {
    if (this.closing) throw new IpcFailure('invalid_state', 'Keel is shutting down');
    const { home } = this.options;
    const dataDir = readOnly(home, sessionId, (log) => log.dir);
    if (readPersistentConfig(dataDir)) await this.options.ensureCheckouts(sessionId);
    const log = SessionLog.open(home, sessionId, { write: false });
    let box;
    try {
      box = await readSessionBox(log, { env: this.options.env, keys: this.options.keys() });
    } finally {
      log.close();
    }
    const cwd = shellStartFolder(box);
    let terminal: InteractiveTerminal;
    try {
      terminal = await openInteractiveTerminal({
        workspace: box.workspace,
        cwd,
        sandbox: box.sandbox,
        network: box.networkAllow.length > 0 ? { allow: box.networkAllow } : 'none',
        cols: size.cols,
        rows: size.rows,
        readOnly: box.readOnly,
        hidden: box.hidden,
        flowControl: true,
        unconfinedApproved: size.unconfined,
        redactor: box.redactor,
      });
    } catch (error) {
      if (error instanceof InteractiveTerminalError) throw new IpcFailure('invalid_state', error.message);
      throw error;
    }
    const config = readPersistentConfig(dataDir);
    // What the user does in the shell is the session's work, as a turn's is: the checkouts are marked
    // changed and the auto dirs as owing a commit, so the next turn commits it before its reset (the review
    // says so) instead of discarding it like a host's stray write.
    const markChanged = () => {
      if (config) markTurnStarted(dataDir, config);
    };
    let touchedAt = 0;
    const entry: OpenTerminal = {
      terminal,
      sessionId,
      client,
      openedAt: new Date().toISOString(),
      touch: () => {
        const now = Date.now();
        if (now - touchedAt < TOUCH_INTERVAL_MS) return;
        touchedAt = now;
        markChanged();
      },
    };
    entry.touch();
    this.open.set(terminal.id, entry);
    const { hub } = this.options;
    const terminalId = terminal.id;
    terminal.onExit((exit) => {
      this.open.delete(terminalId);
      // Whatever the shell wrote in its last second is looked at too.
      markChanged();
      hub.publish('terminal.exit', { terminalId, sessionId, ...exit });
    });
    // Output starts after this call's result has gone out (the terminal keeps it until then), so the UI
    // knows the terminal's id before its first chunk arrives.
    setTimeout(() => {
      terminal.onData((chunk) => hub.publish('terminal.data', { terminalId, sessionId, chunk }));
    }, 0);
    return {
      terminalId,
      cwd: path.relative(box.root, cwd).split(path.sep).join('/') || '.',
      sandbox: terminal.sandbox,
    };
  }

  /** Keystrokes or pasted text to a terminal. */
  write(terminalId: string, data: string): void {
    const entry = this.get(terminalId);
    entry.terminal.write(data);
    entry.touch();
  }

  resize(terminalId: string, cols: number, rows: number): void {
    this.get(terminalId).terminal.resize(cols, rows);
  }

  ack(terminalId: string, chars: number): void {
    this.get(terminalId).terminal.ack(chars);
  }

  /** Kills a terminal's whole tree and resolves with how it ended. */
  async kill(terminalId: string): Promise<TerminalExit> {
    return this.get(terminalId).terminal.kill();
  }

  /** Open terminals, of one session or all; `mine` when `client` opened them. */
  list(client: string, sessionId?: string): TerminalInfo[] {
    return [...this.open.entries()]
      .filter(([, entry]) => sessionId === undefined || entry.sessionId === sessionId)
      .map(([terminalId, entry]) => ({
        terminalId,
        sessionId: entry.sessionId,
        openedAt: entry.openedAt,
        mine: entry.client === client,
      }));
  }

  /** Kills every terminal of a session (before it is deleted). */
  async killSession(sessionId: string): Promise<void> {
    await this.killWhere((entry) => entry.sessionId === sessionId);
  }

  /** Kills every terminal a connection opened (it went away). */
  async disconnect(client: string): Promise<void> {
    await this.killWhere((entry) => entry.client === client);
  }

  /** Kills every terminal and refuses new ones (shutdown). */
  async closeAll(): Promise<void> {
    this.closing = true;
    await this.killWhere(() => true);
  }

  /** How many terminals are open (tests, diagnostics). */
  get size(): number {
    return this.open.size;
  }

  private async killWhere(match: (entry: OpenTerminal) => boolean): Promise<void> {
    await Promise.all([...this.open.values()].filter(match).map((entry) => entry.terminal.kill()));
  }

  private get(terminalId: string): OpenTerminal {
    const entry = this.open.get(terminalId);
    if (!entry) throw new IpcFailure('not_found', `no open terminal ${terminalId} (it may have exited)`);
    return entry;
  }
}

function readOnly<T>(home: string, sessionId: string, use: (log: SessionLog) => T): T {
  const log = SessionLog.open(home, sessionId, { write: false });
  try {
    return use(log);
  } finally {
    log.close();
  }
}
