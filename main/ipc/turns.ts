import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionEvent } from '../core/log/events.js';
import { SessionLog } from '../core/log/sessionLog.js';
import {
  discardDirs,
  finishTurn,
  persistentConfigOf,
  prepareTurn,
  uncommittedDirs,
} from '../core/sessions/checkouts.js';
import { createTurnHost, STOP_REQUEST_FILE } from '../core/sessions/turnHost.js';
import { runTurn, TurnSetupError, type TurnOutcome as EngineOutcome } from '../core/turn/engine.js';
import type { ProviderKeys } from '../providers/index.js';
import { runningCommand, type RunningCommand } from '../runner/runCommand.js';
import { artifactNameFor } from '../tools/runCommand.js';
import type { SessionIndex } from '../store/sessionIndex.js';
import { readSettings } from '../store/settings.js';
import type { SessionStatus, TurnOutcome } from './contract.js';
import { IpcFailure, toIpcError } from './errors.js';
import type { Hub } from './hub.js';

/** What the turn manager needs from its owner. */
export type TurnManagerOptions = {
  home: string;
  hub: Hub;
  /** The handlers' long-lived index connection (status after a turn, lease holders). */
  index: SessionIndex;
  env: NodeJS.ProcessEnv;
  /** Read at every turn start, so a key set in settings applies to the next turn. */
  keys: () => ProviderKeys;
  maxSteps?: number;
  /** Called with every live chunk of a command before it is pushed (flow control attaches here). */
  beforeToolOutput?: (sessionId: string, toolCallId: string) => void;
  /** Called with every event a turn or exclusive write appends, after it is pushed. */
  afterEvent?: (sessionId: string, event: SessionEvent) => void;
};

type RunningTurn = {
  turnId: string;
  controller: AbortController;
  /** Settles (never rejects) once the turn ended and its log is closed. */
  done: Promise<void>;
  /** The session's artifacts folder, where each command's output artifact is. */
  artifactsDir: string;
  /** Model call id → idempotency key of the commands this turn started (their artifact names). */
  commands: Map<string, string>;
};

/** How long stop and shutdown wait for a turn to record its interruption before giving up on it. */
const STOP_WAIT_MS = 15_000;

/** The engine's outcome in contract form (pending requests by seq). */
export function toContractOutcome(outcome: EngineOutcome): TurnOutcome {
  switch (outcome.status) {
    case 'awaiting_approval':
      return { status: 'awaiting_approval', pendingSeqs: outcome.pending.map((request) => request.seq) };
    case 'completed':
      return { status: 'completed' };
    case 'interrupted':
      return { status: 'interrupted' };
    case 'failed':
      return { status: 'failed', error: outcome.error };
    case 'budget_exhausted':
      return { status: 'budget_exhausted', steps: outcome.steps };
  }
}

const waitAtMost = (promise: Promise<void>, ms: number) =>
  Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);

/**
 * Runs turns for the UI: at most one per session, each holding the session's writer lease only while it runs
 * (so the CLI can use the same home), pushing deltas, events, tool output, notices and status to the hub.
 */
export class TurnManager {
  /** A session's turn, or `reserved` while a turn starts or an exclusive write (compaction, commit) runs. */
  private readonly running = new Map<string, RunningTurn | 'reserved'>();
  private closing = false;

  constructor(private readonly options: TurnManagerOptions) {}

  /** True while a turn of `sessionId` runs (or is starting) in this process. */
  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /**
   * The command a turn of this process is running for the model's call `toolCallId`, if any (found by its
   * artifact, as the runner registers it); undefined before it spawned and after it ended.
   */
  runningCommandOf(sessionId: string, toolCallId: string): RunningCommand | undefined {
    const turn = this.running.get(sessionId);
    if (turn === undefined || turn === 'reserved') return undefined;
    const key = turn.commands.get(toolCallId);
    return key === undefined ? undefined : runningCommand(path.join(turn.artifactsDir, artifactNameFor(key)));
  }

  /** Ids of sessions with a turn running in this process. */
  runningSessions(): string[] {
    return [...this.running.keys()];
  }

  /** Throws `busy` when a turn of the session runs here: writers must wait for it. */
  assertIdle(sessionId: string): void {
    if (this.running.has(sessionId)) {
      throw new IpcFailure('busy', `session ${sessionId} is running a turn: stop it or wait for it to end`);
    }
  }

  /**
   * Starts a turn (with a prompt) or resumes the unfinished one (without); resolves with its id once the
   * turn started, i.e. after the prompt was recorded. Fails with `busy`, `locked`, `not_found`, `provider`
   * (the pinned provider cannot be used) or `invalid_state` (the project folder is gone).
   */
  async start(sessionId: string, input: { prompt?: string; discardChanges?: boolean }): Promise<string> {
    if (this.closing) throw new IpcFailure('invalid_state', 'Keel is shutting down');
    this.assertIdle(sessionId);
    this.running.set(sessionId, 'reserved');
    let log: SessionLog | undefined;
    try {
      log = SessionLog.open(this.options.home, sessionId, { write: true });
      const [created] = log.read({ fromSeq: 1, limit: 1 });
      if (created?.kind === 'session_created' && !fs.existsSync(created.projectFolder)) {
        throw new IpcFailure(
          'invalid_state',
          `the project folder ${created.projectFolder} no longer exists: the session is read-only`,
        );
      }
      const turnId = crypto.randomUUID();
      const controller = new AbortController();
      const { hub } = this.options;
      const commands = new Map<string, string>();
      const onEvent = (event: SessionEvent) => {
        if (event.kind === 'tool_call_started' && event.tool === 'run_command') {
          commands.set(event.toolCallId, event.idempotencyKey);
        }
        hub.publish('event.appended', { sessionId, event });
        this.options.afterEvent?.(sessionId, event);
      };
      const newTurn = input.prompt !== undefined;
      if (persistentConfigOf(log)) {
        if (newTurn && input.discardChanges === true) await discardDirs(log);
        else if (newTurn) await this.refuseUncommittedManual(log);
        // A new turn starts from the project folder's current files (auto leftovers committed first).
        await prepareTurn(log, { newTurn, onEvent });
      }
      const host = await createTurnHost(log, {
        keys: this.options.keys(),
        env: this.options.env,
        compaction: readSettings(this.options.home).compaction,
        signal: controller.signal,
        ...(this.options.maxSteps ? { maxSteps: this.options.maxSteps } : {}),
        hooks: {
          onDelta: (delta) => hub.publish('turn.delta', { sessionId, turnId, delta, sentAt: Date.now() }),
          onEvent,
          onToolOutput: (toolCallId, chunk) => {
            this.options.beforeToolOutput?.(sessionId, toolCallId);
            hub.publish('tool.output', { sessionId, turnId, toolCallId, chunk });
          },
          onNotice: (text) => hub.publish('turn.notice', { sessionId, turnId, text }),
        },
      });
      // The engine builds the provider synchronously before its first await, so a setup failure (no key)
      // is known when runTurn returns and can be the caller's error rather than a pushed one.
      let setupError: unknown;
      const promise = runTurn(
        {
          ...host,
          createProvider: (pin) => {
            try {
              return host.createProvider(pin);
            } catch (error) {
              setupError = error;
              throw error;
            }
          },
        },
        input,
      );
      if (setupError !== undefined) {
        await promise.catch(() => undefined);
        throw new TurnSetupError(
          `this session's model cannot be used here: ${toIpcError(setupError).message}. Add the provider's key in Settings.`,
        );
      }
      const opened = log;
      const done = promise
        .then(toContractOutcome, (error: unknown): TurnOutcome => ({
          status: 'failed',
          error: toIpcError(error).message,
        }))
        .then(async (outcome) => {
          // Auto Persistent Dirs reach the project folder when the turn stops, however it stopped.
          await finishTurn(opened, { onEvent }).catch((error: unknown) =>
            hub.publish('turn.notice', {
              sessionId,
              turnId,
              text: `committing the session's changes failed: ${toIpcError(error).message}`,
            }),
          );
          return outcome;
        })
        .then((outcome) => this.finish(sessionId, turnId, opened, outcome));
      this.running.set(sessionId, { turnId, controller, done, artifactsDir: log.artifactsDir, commands });
      hub.publish('session.status', { sessionId, status: 'running', running: true, turnId });
      hub.publish('sessions.changed', { sessionId, change: 'updated' });
      return turnId;
    } catch (error) {
      log?.close();
      this.running.delete(sessionId);
      throw error;
    }
  }

  /**
   * Stops the session's turn and waits until the interruption is recorded. A turn running in another
   * process (the CLI) is asked through its stop file. Returns false when no turn was running.
   */
  async stop(sessionId: string): Promise<boolean> {
    const turn = this.running.get(sessionId);
    if (turn === 'reserved') return false;
    if (turn) {
      turn.controller.abort();
      await waitAtMost(turn.done, STOP_WAIT_MS);
      return true;
    }
    const summary = this.options.index.get(sessionId);
    if (summary?.status !== 'running') return false;
    fs.writeFileSync(
      path.join(this.options.home, 'sessions', sessionId, STOP_REQUEST_FILE),
      `${process.pid}\n`,
    );
    return true;
  }

  /** Stops every running turn (each records its interruption) and waits for their logs to close. */
  async stopAll(): Promise<void> {
    this.closing = true;
    const turns = [...this.running.values()].filter((turn): turn is RunningTurn => turn !== 'reserved');
    for (const turn of turns) turn.controller.abort();
    await waitAtMost(
      Promise.all(turns.map((turn) => turn.done)).then(() => undefined),
      STOP_WAIT_MS,
    );
  }

  /**
   * Runs an asynchronous write (a compaction, a commit) on an idle session: the session counts as busy
   * meanwhile, the lease is held only for the call, and every event `use` reports is published.
   */
  async exclusive<T>(
    sessionId: string,
    use: (log: SessionLog, onEvent: (event: SessionEvent) => void) => Promise<T>,
  ): Promise<T> {
    if (this.closing) throw new IpcFailure('invalid_state', 'Keel is shutting down');
    this.assertIdle(sessionId);
    this.running.set(sessionId, 'reserved');
    try {
      const log = SessionLog.open(this.options.home, sessionId, { write: true });
      try {
        return await use(log, (event) => {
          this.options.hub.publish('event.appended', { sessionId, event });
          this.options.afterEvent?.(sessionId, event);
        });
      } finally {
        log.close();
        this.options.hub.publish('sessions.changed', { sessionId, change: 'updated' });
      }
    } finally {
      this.running.delete(sessionId);
    }
  }

  private async refuseUncommittedManual(log: SessionLog): Promise<void> {
    const pending = (await uncommittedDirs(log.dir)).filter(
      (dir) => dir.commit === 'manual' && !dir.readOnly,
    );
    if (pending.length === 0) return;
    const what = pending
      .map((dir) => `${dir.dir} (${dir.files.length} file${dir.files.length === 1 ? '' : 's'})`)
      .join(', ');
    throw new IpcFailure(
      'invalid_state',
      `this session has changes in ${what} that a new turn would discard: apply or discard them first`,
    );
  }

  /** Appends events to an idle session under its lease, publishes them, and releases the lease. */
  appendWhileIdle<T>(sessionId: string, write: (log: SessionLog) => { events: SessionEvent[]; value: T }): T {
    this.assertIdle(sessionId);
    const log = SessionLog.open(this.options.home, sessionId, { write: true });
    let result: { events: SessionEvent[]; value: T };
    try {
      result = write(log);
    } finally {
      log.close();
    }
    for (const event of result.events) this.options.hub.publish('event.appended', { sessionId, event });
    this.options.hub.publish('sessions.changed', { sessionId, change: 'updated' });
    return result.value;
  }

  private finish(sessionId: string, turnId: string, log: SessionLog, outcome: TurnOutcome): void {
    try {
      log.close();
    } catch (error) {
      process.emitWarning(`keel: closing session ${sessionId} failed: ${String(error)}`);
    }
    this.running.delete(sessionId);
    const status: SessionStatus = this.statusOf(sessionId);
    this.options.hub.publish('session.status', { sessionId, status, running: false, turnId, outcome });
    this.options.hub.publish('sessions.changed', { sessionId, change: 'updated' });
  }

  private statusOf(sessionId: string): SessionStatus {
    try {
      return this.options.index.get(sessionId)?.status ?? 'idle';
    } catch {
      return 'idle';
    }
  }
}
