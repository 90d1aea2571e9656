import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SessionEvent } from '../../common/events.js';
import { SessionLog } from '../log/sessionLog.js';
import { createHarness, type LocalHarnessSession } from './harness.js';
import { HarnessSessionBusyError } from './lock.js';
import { streamHarness } from './stream.js';
import { STOP_REQUEST_FILE } from './turnHost.js';
import type { Harness, HarnessStreamPart } from './types.js';
import { type SettingsChange, TurnSetupError, type TurnOutcome as EngineOutcome } from '../turn/engine.js';
import { changePolicy } from './policyChange.js';
import { loadSessionState } from '../turn/loadState.js';
import { createProvider, type ProviderKeys } from '../../providers/index.js';
import { stopSessionBackground } from '../../runner/background.js';
import { planUploads, stageUploads, uploadsNote } from './uploads.js';
import { recordBackgroundEnds, stopBackgroundCommand } from './backgroundLog.js';
import { runningCommand, type RunningCommand } from '../../runner/boxedCommand.js';
import type { SessionIndex } from '../../store/sessionIndex.js';
import { artifactNameFor } from '../../tools/runCommandTool.js';
import type { SessionStatus, TurnOutcome } from '../../common/harnessViews.js';
import type { SessionEndReason } from '../../common/hookEvents.js';
import { describeError } from './describeError.js';
import { HarnessError } from './errors.js';
import { checkSessionPrompt, guardNewTurn } from './newTurn.js';
import { expandSessionPrompt } from './customCommands.js';
import type { CommandUse } from '../../common/customEvents.js';
import { artifactsDir, sessionDir } from '../paths.js';
import { AttachmentError, type AttachmentInput, checkAttachments } from './attachments.js';

/** A piece of a turn's text as it streams: text, reasoning, or the start of a tool call. */
export type TurnDelta =
  { type: 'text' | 'reasoning'; text: string } | { type: 'tool_call'; id: string; name: string };

/**
 * Where a turn manager reports what happens, synchronously and in order (the app pushes each to its windows
 * through the hub: event.appended, tool.output, turn.delta, turn.notice, sessions.changed, session.status).
 */
export type TurnReports = {
  event(sessionId: string, event: SessionEvent): void;
  output(sessionId: string, turnId: string, toolCallId: string, chunk: string): void;
  delta(sessionId: string, turnId: string, delta: TurnDelta): void;
  notice(sessionId: string, turnId: string, text: string): void;
  /** The session (or a subagent's child session) changed: its row in a list is stale. */
  changed(sessionId: string): void;
  status(
    sessionId: string,
    status: { status: SessionStatus; running: boolean; turnId: string; outcome?: TurnOutcome },
  ): void;
};

/** What the turn manager needs from its owner. */
export type TurnManagerOptions = {
  home: string;
  reports: TurnReports;
  /** The handlers' long-lived index connection (status after a turn, lease holders). */
  index: SessionIndex;
  env: NodeJS.ProcessEnv;
  /** Read at every turn start, so a key set in settings applies to the next turn. */
  keys: () => ProviderKeys;
  maxSteps?: number;
  /** Called with every live chunk of a command before it is pushed (flow control attaches here). */
  beforeToolOutput?: (sessionId: string, toolCallId: string) => void;
  /** Called with every event a turn or exclusive write appends, after it is pushed (a subagent's too). */
  afterEvent?: (sessionId: string, event: SessionEvent) => void;
};

type RunningTurn = {
  turnId: string;
  controller: AbortController;
  /** Settles (never rejects) once the turn ended and the session is released. */
  done: Promise<void>;
  /** Session + model call id → artifact path of the commands this turn (and its subagents) started. */
  commands: Map<string, string>;
  /** Child sessions (subagents) this turn has run. */
  children: Set<string>;
};

const commandKey = (sessionId: string, toolCallId: string) => `${sessionId}\u0000${toolCallId}`;

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
    case 'budget_reached':
      return { status: 'budget_reached', seq: outcome.event.seq, message: outcome.event.message };
  }
}

const waitAtMost = (promise: Promise<void>, ms: number) =>
  Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);

/**
 * Runs turns for the UI: at most one per session, each holding the session's writer lease only while it runs
 * (so the CLI can use the same home), reporting deltas, events, tool output, notices and status through `reports` (the app pushes them to its
 * windows; any host may run its turns through it).
 */
export class TurnManager {
  /** A session's turn, or `reserved` while a turn starts or an exclusive write (compaction, commit) runs. */
  private readonly running = new Map<string, RunningTurn | 'reserved'>();
  /** The reply streaming now per session (issue 37): a page opened mid-turn shows it whole, not from mid-sentence. */
  private readonly live = new Map<string, { turnId: string; text: string; reasoning: string }>();
  private closing = false;
  /** Issue #37: settings changed while a session's turn runs, taken by its next request (or recorded when it ends). */
  private readonly settingsChanges = new Map<string, SettingsChange[]>();
  /** The session API every session and turn of the app goes through: this process is one of its hosts. */
  readonly harness: Harness;

  constructor(private readonly options: TurnManagerOptions) {
    this.harness = createHarness({
      home: options.home,
      env: options.env,
      keys: options.keys,
      // A session's MCP servers live across its turns here (stopped when it is archived, deleted, idle
      // for ten minutes, or Keel quits), so a turn does not pay their start.
      keepMcpServers: true,
      watchProjects: true,
      ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    });
  }

  /** True while a turn of `sessionId` runs (or is starting) in this process. */
  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /**
   * The command a turn of this process (or a subagent of one) is running for the model's call `toolCallId`
   * of session `sessionId`, if any (found by its artifact, as the runner registers it); undefined before it
   * spawned and after it ended.
   */
  runningCommandOf(sessionId: string, toolCallId: string): RunningCommand | undefined {
    for (const turn of this.running.values()) {
      if (turn === 'reserved') continue;
      const artifact = turn.commands.get(commandKey(sessionId, toolCallId));
      if (artifact !== undefined) return runningCommand(artifact);
    }
    return undefined;
  }

  /** The session whose running turn runs `childId` as a subagent, if a turn of this process does. */
  parentTurnOf(childId: string): string | undefined {
    for (const [sessionId, turn] of this.running) {
      if (turn !== 'reserved' && turn.children.has(childId)) return sessionId;
    }
    return undefined;
  }

  /** Ids of sessions with a turn running in this process. */
  runningSessions(): string[] {
    return [...this.running.keys()];
  }

  /** Throws `busy` when a turn of the session runs here: writers must wait for it. */
  assertIdle(sessionId: string): void {
    if (this.running.has(sessionId)) {
      throw new HarnessError('busy', `session ${sessionId} is running a turn: stop it or wait for it to end`);
    }
  }

  /**
   * Starts a turn (with a prompt) or resumes the unfinished one (without) through the session API
   * (`streamHarness`, which resets and commits the session's checkouts around the engine's turn); resolves
   * with its id once the turn holds the session. Fails with `busy`, `locked` (another process holds it),
   * `not_found`, `provider` (the pinned provider cannot be used) or `invalid_state` (the project folder is
   * gone, or a new turn would discard uncommitted manual changes).
   */
  async start(
    sessionId: string,
    input: {
      prompt?: string;
      discardChanges?: boolean;
      attachments?: readonly AttachmentInput[];
      /** Issue #32: other files, staged at `/session/uploads/<name>` and named in the prompt (as `keel run --file`). */
      uploads?: readonly { name: string; data: Buffer }[];
      /** Issue #30: the prompt's plan mode (streamHarness's `planMode`). */
      planMode?: boolean;
    },
  ): Promise<string> {
    if (this.closing) throw new HarnessError('invalid_state', 'Keel is shutting down');
    this.assertIdle(sessionId);
    this.running.set(sessionId, 'reserved');
    try {
      this.assertStartable(sessionId);
      const session = (await this.harness.sessions.get(sessionId)) as LocalHarnessSession | undefined;
      if (!session) throw new HarnessError('not_found', `no session ${sessionId}`);
      // A custom command (`/review src/`) expands here for every host; the expanded prompt is what is recorded.
      const message =
        input.prompt !== undefined ? await expandSessionPrompt(session, input.prompt) : undefined;
      if (message !== undefined) {
        await checkSessionPrompt(session, message.prompt);
        await guardNewTurn(session, { discardChanges: input.discardChanges === true });
      }
      const attachments = input.prompt !== undefined ? (input.attachments ?? []) : [];
      try {
        checkAttachments(attachments);
      } catch (error) {
        if (error instanceof AttachmentError) throw new HarnessError('invalid_input', error.message);
        throw error;
      }
      const planMode = message !== undefined ? input.planMode : undefined;
      // Checked (count, sizes) before anything is written; staged once every other check passed.
      const uploads = message !== undefined ? (input.uploads ?? []) : [];
      const inputs = uploads.map((file) => ({
        name: file.name,
        size: file.data.length,
        open: () => Readable.from([file.data]),
      }));
      planUploads(inputs);
      const staged = message !== undefined && inputs.length > 0;
      const prompted = staged
        ? { ...message, prompt: message.prompt + uploadsNote(await stageUploads(session.files, inputs)) }
        : message;
      return await this.run(sessionId, prompted, attachments, planMode);
    } catch (error) {
      if (this.running.get(sessionId) === 'reserved') this.running.delete(sessionId);
      if (error instanceof HarnessSessionBusyError) {
        throw new HarnessError(
          'locked',
          `${error.message}; wait for it to finish or stop it there (keel stop ${sessionId})`,
        );
      }
      throw error;
    }
  }

  /** Streams the turn, forwarding every part to the hub; resolves once the turn holds the session. */
  private async run(
    sessionId: string,
    message: { prompt: string; command?: CommandUse } | undefined,
    attachments: readonly AttachmentInput[] = [],
    planMode?: boolean,
  ): Promise<string> {
    const { reports, afterEvent, beforeToolOutput } = this.options;
    const turnId = crypto.randomUUID();
    const controller = new AbortController();
    const commands = new Map<string, string>();
    const children = new Set<string>();
    const artifactsOf = (id: string) => artifactsDir(sessionDir(this.options.home, id));
    const publishEvent = (id: string, event: SessionEvent) => {
      if (event.kind === 'tool_call_started' && event.tool === 'run_command') {
        commands.set(
          commandKey(id, event.toolCallId),
          path.join(artifactsOf(id), artifactNameFor(event.idempotencyKey)),
        );
      }
      reports.event(id, event);
      afterEvent?.(id, event);
    };
    const publishOutput = (id: string, toolCallId: string, chunk: string) => {
      beforeToolOutput?.(id, toolCallId);
      reports.output(id, turnId, toolCallId, chunk);
    };
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    const onPart = (part: HarnessStreamPart) => {
      switch (part.type) {
        case 'started':
          return started();
        case 'text':
        case 'reasoning': {
          const reply = this.live.get(sessionId) ?? { turnId, text: '', reasoning: '' };
          if (part.type === 'text') reply.text += part.text;
          else reply.reasoning += part.text;
          this.live.set(sessionId, reply);
          return reports.delta(sessionId, turnId, { type: part.type, text: part.text });
        }
        case 'tool_call':
          return reports.delta(sessionId, turnId, { type: 'tool_call', id: part.id, name: part.name });
        case 'event':
          // The reply is an event now (or was cut): the next one streams from nothing.
          if (part.event.kind === 'assistant_message' || part.event.kind === 'interrupted')
            this.live.delete(sessionId);
          return publishEvent(sessionId, part.event);
        case 'tool_output':
          return publishOutput(sessionId, part.toolCallId, part.chunk);
        case 'notice':
          return reports.notice(sessionId, turnId, part.text);
        case 'commit':
          return;
        case 'subagent_event':
          children.add(part.sessionId);
          publishEvent(part.sessionId, part.event);
          return reports.changed(part.sessionId);
        case 'subagent_output':
          return publishOutput(part.sessionId, part.toolCallId, part.chunk);
      }
    };
    const stream = streamHarness({
      harness: this.harness,
      session: sessionId,
      messages:
        message !== undefined
          ? [
              {
                role: 'user',
                content: message.prompt,
                ...(message.command ? { command: message.command } : {}),
                ...(attachments.length > 0 ? { attachments } : {}),
              },
            ]
          : [],
      signal: controller.signal,
      ...(this.options.maxSteps ? { maxSteps: this.options.maxSteps } : {}),
      settingsChanges: () => this.takeSettingsChanges(sessionId),
      ...(planMode !== undefined ? { planMode } : {}),
      onPart,
    });
    // Until the turn holds the session, a failure (another process holds it) is the caller's error.
    let began = false;
    await Promise.race([
      holding.then(() => (began = true)),
      stream.result.then(
        () => undefined,
        () => undefined,
      ),
    ]);
    if (!began) await stream.result;
    const done = stream.result
      .then(
        (result) => toContractOutcome(result.outcome),
        (error: unknown): TurnOutcome => ({ status: 'failed', error: describeError(error).message }),
      )
      .then((outcome) => this.finish(sessionId, turnId, outcome));
    this.running.set(sessionId, { turnId, controller, done, commands, children });
    reports.status(sessionId, { status: 'running', running: true, turnId });
    reports.changed(sessionId);
    return turnId;
  }

  /** Refuses a turn whose project folder is gone or whose pinned provider cannot be built (no key). */
  private assertStartable(sessionId: string): void {
    const log = SessionLog.open(this.options.home, sessionId, { write: false });
    try {
      const [created] = log.read({ fromSeq: 1, limit: 1 });
      if (created?.kind === 'session_created' && !fs.existsSync(created.projectFolder)) {
        throw new HarnessError(
          'invalid_state',
          `the project folder ${created.projectFolder} no longer exists: the session is read-only`,
        );
      }
      try {
        createProvider(loadSessionState(log).pin, this.options.keys(), this.options.env);
      } catch (error) {
        throw new TurnSetupError(
          `this session's model cannot be used here: ${describeError(error).message}. Add the provider's key in Settings.`,
        );
      }
    } finally {
      log.close();
    }
  }

  /**
   * Stops the session's turn and waits until the interruption is recorded. A turn running in another
   * process (the CLI) is asked through its stop file. Returns false when no turn was running.
   */
  async stop(sessionId: string): Promise<boolean> {
    const turn = this.running.get(sessionId);
    if (turn === 'reserved') return false;
    // Stopping the session stops the background commands its turns left running (issue #32), turn or not; the
    // turn being stopped records their ends, else they are recorded here.
    const background = await stopSessionBackground(
      sessionDir(this.options.home, sessionId),
      'session_stopped',
    );
    if (turn) {
      turn.controller.abort();
      await waitAtMost(turn.done, STOP_WAIT_MS);
      return true;
    }
    if (background > 0) this.recordBackgroundEnds(sessionId);
    const summary = this.options.index.get(sessionId);
    if (summary?.status !== 'running') return background > 0;
    fs.writeFileSync(
      path.join(sessionDir(this.options.home, sessionId), STOP_REQUEST_FILE),
      `${process.pid}\n`,
    );
    return true;
  }

  /**
   * Issue #32: the user's stop of one background command (the terminal dock's Stop); false when this Keel does
   * not run it. Its end is recorded now when no turn runs, else by the turn when it ends.
   */
  async stopBackground(sessionId: string, handle: string): Promise<boolean> {
    const stopped = await stopBackgroundCommand(this.options.home, sessionId, handle);
    if (stopped && !this.running.has(sessionId)) this.recordBackgroundEnds(sessionId);
    return stopped;
  }

  /** Records the background ends this process knows of while no turn runs; a held log leaves them for later. */
  private recordBackgroundEnds(sessionId: string): void {
    if (this.running.has(sessionId)) return;
    try {
      this.appendWhileIdle(sessionId, (log) => {
        const events: SessionEvent[] = [];
        recordBackgroundEnds(log, (event) => events.push(event));
        return { events, value: undefined };
      });
    } catch {
      // Another process holds the log (its turn): the ends stay in memory for this process's next turn.
    }
  }

  /**
   * Stops every running turn (each records its interruption), waits for their logs to close, stops every
   * session's MCP servers, then ends every session this process ran (issue #30: SessionEnd hooks with `reason`,
   * within their budget).
   */
  async stopAll(reason: SessionEndReason = 'other'): Promise<void> {
    this.closing = true;
    const turns = [...this.running.values()].filter((turn): turn is RunningTurn => turn !== 'reserved');
    for (const turn of turns) turn.controller.abort();
    await waitAtMost(
      Promise.all(turns.map((turn) => turn.done)).then(() => undefined),
      STOP_WAIT_MS,
    );
    await this.harness.stopMcp();
    await this.harness.endSessions({ reason });
  }

  /** Stops the MCP servers kept for a session (archived, deleted); a running turn's stop when it ends. */
  stopMcp(sessionId: string): Promise<void> {
    return this.harness.stopMcp(sessionId);
  }

  /**
   * Runs an asynchronous write (a compaction, a commit) on an idle session: the session counts as busy
   * meanwhile, the lease is held only for the call, and every event `use` reports is published.
   */
  async exclusive<T>(
    sessionId: string,
    use: (log: SessionLog, onEvent: (event: SessionEvent) => void) => Promise<T>,
  ): Promise<T> {
    if (this.closing) throw new HarnessError('invalid_state', 'Keel is shutting down');
    this.assertIdle(sessionId);
    this.running.set(sessionId, 'reserved');
    try {
      const log = SessionLog.open(this.options.home, sessionId, { write: true });
      try {
        return await use(log, (event) => {
          this.options.reports.event(sessionId, event);
          this.options.afterEvent?.(sessionId, event);
        });
      } finally {
        log.close();
        this.options.reports.changed(sessionId);
      }
    } finally {
      this.running.delete(sessionId);
    }
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
    for (const event of result.events) this.options.reports.event(sessionId, event);
    this.options.reports.changed(sessionId);
    return result.value;
  }

  /** The reply streaming now in a turn of `sessionId` (text and reasoning so far), if one streams. */
  liveReply(sessionId: string): { turnId: string; text: string; reasoning: string } | undefined {
    const reply = this.live.get(sessionId);
    return reply && this.running.has(sessionId) ? { ...reply } : undefined;
  }

  /**
   * Issue #37: a change of the session's model, effort or policy made while its turn runs (already checked by
   * the caller): its next model request takes it, or, if none follows, it is recorded when the turn ends.
   * Returns false when no turn runs (the caller records it itself).
   */
  queueSettingsChange(sessionId: string, change: SettingsChange): boolean {
    const run = this.running.get(sessionId);
    if (run === undefined || run === 'reserved') return false;
    const queued = this.settingsChanges.get(sessionId) ?? [];
    queued.push(change);
    this.settingsChanges.set(sessionId, queued);
    return true;
  }

  private takeSettingsChanges(sessionId: string): SettingsChange[] {
    const queued = this.settingsChanges.get(sessionId) ?? [];
    this.settingsChanges.delete(sessionId);
    return queued;
  }

  /** The changes no request took (the turn ended first): recorded now that the session is free. */
  private recordLeftSettings(sessionId: string): void {
    const left = this.takeSettingsChanges(sessionId);
    if (left.length === 0) return;
    try {
      const log = SessionLog.open(this.options.home, sessionId, { write: true });
      try {
        for (const change of left) {
          const events =
            change.kind === 'policy_changed'
              ? changePolicy(log, change.policy).events
              : appendedOf(log, change);
          for (const event of events) this.options.reports.event(sessionId, event);
        }
      } finally {
        log.close();
      }
    } catch (error) {
      this.options.reports.notice(
        sessionId,
        '',
        `a settings change was not recorded: ${describeError(error).message}`,
      );
    }
  }

  private finish(sessionId: string, turnId: string, outcome: TurnOutcome): void {
    this.running.delete(sessionId);
    this.live.delete(sessionId);
    this.recordLeftSettings(sessionId);
    const status: SessionStatus = this.statusOf(sessionId);
    this.options.reports.status(sessionId, { status, running: false, turnId, outcome });
    this.options.reports.changed(sessionId);
  }

  private statusOf(sessionId: string): SessionStatus {
    try {
      return this.options.index.get(sessionId)?.status ?? 'idle';
    } catch {
      return 'idle';
    }
  }
}

/** Appends one event; the events written (none when the append was refused). */
function appendedOf(log: SessionLog, change: SettingsChange): SessionEvent[] {
  const appended = log.append(change);
  return appended.ok ? appended.events : [];
}
