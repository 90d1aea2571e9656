import type { EventOf, SessionEvent, Usage } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { CommitReport } from '../persistent/types.js';
import type { TraceEntry } from '../log/sessionLog.js';
import { runTurn, type TurnHost, type TurnOutcome } from '../turn/engine.js';
import { loadSessionState } from '../turn/loadState.js';
import { needsModel, unansweredCalls } from '../turn/state.js';
import { readSettings } from '../../store/settings.js';
import { enforceCheckoutBound } from './checkoutStorage.js';
import {
  commitDirs,
  finishTurn,
  prepareTurn,
  recoverCommits,
  takeViewBaselines,
} from '../persistent/turnCheckouts.js';
import { beginDirectChanges } from '../persistent/directTurn.js';
import { completePendingRevert } from '../history/revert.js';
import { policyFor, runtimeOf, type HarnessRuntime } from './harness.js';
import { readPersistentConfig, writePersistentConfig } from '../persistent/config.js';
import { withWritableSession } from './lock.js';
import { createTurnHost } from './turnHost.js';
import { applyPlanMode } from './plan.js';
import { checkAttachments, keepAttachments } from './attachments.js';
import { artifactsDir, sessionDir } from '../paths.js';
import { pinViews } from '../persistent/viewHolder.js';
import type {
  HarnessMessage,
  HarnessResult,
  HarnessSessionPort,
  HarnessStream,
  HarnessStreamPart,
  StreamHarnessOptions,
} from './types.js';
import { stopSessionBackground } from '../../runner/background.js';
import { recordBackgroundEnds } from './backgroundLog.js';

/**
 * Runs one turn of a session and streams it: text and tool-call deltas, every appended event, command
 * output, notices and Persistent Dir commits, in order. The new input is the last `user` message of
 * `messages`; a message already staged (its id marked, or already in the log) is not appended again — an
 * unfinished turn is continued instead, a finished one is reported as it ended. Around the engine's turn:
 * before a new turn every checkout is reset (auto leftovers committed first), when it stops the auto dirs
 * are committed. Iterating is optional; `result` settles either way.
 */
export function streamHarness(options: StreamHarnessOptions): HarnessStream {
  const queue = new PartQueue();
  const { onPart } = options;
  const result = runStreamed(options, (part) => {
    onPart?.(part);
    queue.push(part);
  });
  // An iterating caller sees a failure through the stream too; the result stays the caller's to await.
  result.then(
    () => queue.close(),
    (error: unknown) => queue.fail(error),
  );
  return {
    result,
    [Symbol.asyncIterator]: () => queue.iterate(),
  };
}

/** Runs one turn to its end and returns the result (streamHarness without iterating). */
export async function generateHarness(options: StreamHarnessOptions): Promise<HarnessResult> {
  return streamHarness(options).result;
}

async function runStreamed(
  options: StreamHarnessOptions,
  emit: (part: HarnessStreamPart) => void,
): Promise<HarnessResult> {
  const runtime = runtimeOf(options.harness);
  const id = typeof options.session === 'string' ? options.session : options.session.id;
  await options.harness.sessions.getOrCreate({ id });
  const own = runtime.handle(id);
  const port: HarnessSessionPort = typeof options.session === 'string' ? own : options.session;
  const input = lastUserMessage(options.messages);
  // A refused file is the caller's error before anything is recorded (the prompt is not half sent).
  if (input?.attachments?.length) checkAttachments(input.attachments);
  const events: SessionEvent[] = [];
  const commits: CommitReport[] = [];
  const onEvent = (event: SessionEvent) => {
    events.push(event);
    emit({ type: 'event', event });
  };
  const onCommit = (report: CommitReport) => {
    if (report.status === 'unchanged') return;
    commits.push(report);
    emit({ type: 'commit', report });
  };

  // Issue #36: the session's views stay mounted here while the turn runs (let go once idle after it).
  const unpinViews = pinViews(sessionDir(runtime.home, id));
  const turn = await withWritableSession(
    runtime.home,
    id,
    async (log) => {
      reconcileDirs(runtime, log);
      // A commit a crash cut off after its files reached the folder is recorded before anything else reads the log.
      for (const text of await recoverCommits(log, onEvent)) emit({ type: 'notice', text });
      const created = log.read({ fromSeq: 1, limit: 1 })[0] as EventOf<'session_created'>;
      // The state from the log's tail and kind index: a 10k-event session costs no more per turn than a short one.
      const state = loadSessionState(log);
      applyPolicy(runtime, log, created, state.policy, onEvent);
      // Issue #32: the ends of background commands the log lacks (a stop, a crash, one ended between turns).
      for (const text of recordBackgroundEnds(log, onEvent)) emit({ type: 'notice', text });
      const staged =
        input?.id !== undefined && (own.isMessageStaged(input.id) || hasUserMessage(log, input.id));
      const newTurn = input !== undefined && !staged;
      if (!newTurn && !needsModel(state) && unansweredCalls(state).length === 0) {
        return { outcome: finishedOutcome(log), alreadyStaged: staged, resumed: false, ended: undefined };
      }
      // Issue #30: the prompt's plan mode goes in before it (and before the host, which offers present_plan then).
      if (newTurn && options.planMode !== undefined) {
        const changed = applyPlanMode(log, options.planMode);
        if (changed) onEvent(changed);
      }
      const turnNumber = state.turns + (newTurn ? 1 : 0);
      // A revert a crash interrupted is finished before the checkouts are reset from the folders it writes.
      await completePendingRevert(log);
      const preparation = await prepareTurn(log, { newTurn, onEvent, turn: turnNumber });
      for (const report of preparation.commits) onCommit(report);
      // Keel's own handle derives running from the log and the index; a host's own object is told.
      if (port !== own) await port.setStatus?.({ state: 'running' });
      // Written with the turn's first event (its commit), not in a commit of its own.
      const turnTrace: TraceEntry = {
        turn: turnNumber,
        stage: 'harness_turn',
        startedAt: new Date().toISOString(),
        detail: {
          messageId: input?.id ?? null,
          resumed: !newTurn,
          ...(created.metadata !== undefined ? { metadata: created.metadata } : {}),
          ...(created.extraBody !== undefined ? { extraBody: created.extraBody } : {}),
        },
      };
      const { keys } = runtime.options;
      let host: TurnHost;
      try {
        host = await createTurnHost(log, {
          created,
          ...(keys ? { keys: typeof keys === 'function' ? keys() : keys } : {}),
          ...(runtime.options.env ? { env: runtime.options.env } : {}),
          ...(runtime.mcpPool ? { mcpPool: runtime.mcpPool } : {}),
          compaction: runtime.options.compaction ?? readSettings(runtime.home).compaction,
          ...(runtime.options.createProvider ? { createProvider: runtime.options.createProvider } : {}),
          ...(runtime.options.webFetch?.testAddresses
            ? { fetchTestAddresses: runtime.options.webFetch.testAddresses }
            : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.settingsChanges ? { settingsChanges: options.settingsChanges } : {}),
          maxSteps: options.maxSteps ?? runtime.options.maxSteps ?? 50,
          // A --commit direct session's folder is photographed only when a tool (or an MCP server) may change it; a
          // view made for this turn takes its baseline then too (its first request waited for no snapshot).
          beforeChanges: async () => {
            await takeViewBaselines(log.dir);
            await beginDirectChanges(log);
          },
          ...(newTurn ? { turnCommand: input.command ?? null } : {}),
          // Issue #30: the first prompt this process runs of a session with turns is a SessionStart `resume`.
          ...(newTurn && state.turns > 0 && !runtime.started.has(log.id) ? { resumed: true } : {}),
          hooks: {
            onDelta: (delta) =>
              emit(
                delta.type === 'tool_call'
                  ? { type: 'tool_call', id: delta.id, name: delta.name }
                  : { type: delta.type, text: delta.text },
              ),
            onEvent,
            onToolOutput: (toolCallId, chunk) => emit({ type: 'tool_output', toolCallId, chunk }),
            onNotice: (text) => emit({ type: 'notice', text }),
            onSubagentEvent: (sessionId, event) => emit({ type: 'subagent_event', sessionId, event }),
            onSubagentToolOutput: (sessionId, toolCallId, chunk) =>
              emit({ type: 'subagent_output', sessionId, toolCallId, chunk }),
          },
        });
      } catch (error) {
        try {
          log.appendTrace(turnTrace);
        } catch {
          // Trace is observability only: what failed is the news.
        }
        throw error;
      }
      emit({ type: 'started', turn: turnNumber, resumed: !newTurn });
      let outcome: TurnOutcome;
      try {
        const attachments =
          newTurn && input.attachments?.length
            ? keepAttachments(artifactsDir(log.dir), input.attachments)
            : undefined;
        runtime.started.add(log.id);
        outcome = await runTurn(host, {
          ...(newTurn
            ? {
                prompt: textOf(input),
                ...(input.id ? { messageId: input.id } : {}),
                ...(input.command ? { command: input.command } : {}),
              }
            : {}),
          ...(attachments ? { attachments } : {}),
          trace: [turnTrace],
        });
      } finally {
        await host.dispose?.();
        // A stopped turn stops the session's background commands too (issue #32): the session is stopped. Each
        // end this process knows of is recorded while the turn still holds the log.
        if (options.signal?.aborted === true) await stopSessionBackground(log.dir, 'session_stopped');
        try {
          recordBackgroundEnds(log, onEvent);
        } catch {
          // The turn's own failure (a full disk) is the news; the ends stay for the next turn to record.
        }
        // The log says the message is in; the marker makes the next retry cheap even without reading it.
        if (newTurn && input.id !== undefined && events.some((e) => e.kind === 'user_message')) {
          await port.markMessageStaged?.(input.id);
        }
      }
      for (const report of await finishTurn(log, { onEvent, turn: turnNumber })) onCommit(report);
      const ended = port === own ? undefined : own.statusFrom(log).state;
      return { outcome, alreadyStaged: staged, resumed: true, ended };
    },
    { cache: runtime.logCache },
  ).finally(unpinViews);

  if (port !== own) await port.setStatus?.({ state: turn.ended ?? (await own.status()).state });
  // Issue #36: checkout storage stays within its bound; a failure to reclaim never fails the turn.
  if (turn.resumed && own.persistentDirs().length > 0) {
    await enforceCheckoutBound(runtime.home, id).catch((error: unknown) =>
      emit({ type: 'notice', text: `checkout storage was not reclaimed: ${(error as Error).message}` }),
    );
  }
  const hasManual = own.persistentDirs().some((dir) => dir.commit === 'manual');
  return {
    sessionId: id,
    outcome: turn.outcome,
    text: turn.outcome.status === 'completed' ? turn.outcome.text : '',
    events,
    usage: sumUsage(events),
    commits,
    alreadyStaged: turn.alreadyStaged,
    ...(hasManual
      ? {
          commitManual: (dirs?: readonly string[]) =>
            withWritableSession(runtime.home, id, (log) =>
              commitDirs(log, { ...(dirs ? { dirs } : {}), onEvent: (event) => events.push(event) }),
            ),
        }
      : {}),
  };
}

/** The last user message of the host's list, or undefined when there is none (continue the session). */
function lastUserMessage(
  messages: readonly HarnessMessage[],
): (HarnessMessage & { role: 'user' }) | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return message as HarnessMessage & { role: 'user' };
  }
  return undefined;
}

function textOf(message: HarnessMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/** Whether the log holds a user message with this host id (the log's tallies know every id: no scan). */
function hasUserMessage(log: SessionLog, messageId: string): boolean {
  return log.hasMessageId(messageId);
}

/** How the session's last turn ended, for a retried message whose turn already finished. */
function finishedOutcome(log: SessionLog): TurnOutcome {
  const events = log.readKinds(['user_message', 'assistant_message'], { validate: false });
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent;
    if (event.kind === 'assistant_message') return { status: 'completed', text: event.content };
    if (event.kind === 'user_message') break;
  }
  return { status: 'completed', text: '' };
}

/** Adds Persistent Dirs the harness is configured with and the session does not have yet (a host added one). */
function reconcileDirs(runtime: HarnessRuntime, log: SessionLog): void {
  const config = readPersistentConfig(log.dir);
  if (!config) return;
  const missing = runtime.dirs.filter((dir) => !config.dirs.some((d) => d.name === dir.name));
  if (missing.length > 0) writePersistentConfig(log.dir, { ...config, dirs: [...config.dirs, ...missing] });
}

/** A policy decided from the session's extraBody is re-checked every turn; a change is a policy_changed event. */
function applyPolicy(
  runtime: HarnessRuntime,
  log: SessionLog,
  created: EventOf<'session_created'>,
  current: string,
  onEvent: (event: SessionEvent) => void,
): void {
  const wanted = policyFor(runtime, created.sessionId, created.extraBody, created.metadata);
  if (wanted === undefined || wanted === current) return;
  const result = log.append({ kind: 'policy_changed', policy: wanted }, { expectedLastSeq: log.lastSeq() });
  if (result.ok) for (const event of result.events) onEvent(event);
}

function sumUsage(events: readonly SessionEvent[]): Usage {
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const event of events) {
    if (event.kind !== 'assistant_message' || !event.usage) continue;
    usage.inputTokens += event.usage.inputTokens;
    usage.outputTokens += event.usage.outputTokens;
    usage.cacheReadTokens += event.usage.cacheReadTokens ?? 0;
    usage.cacheWriteTokens += event.usage.cacheWriteTokens ?? 0;
  }
  return usage;
}

/** An unbounded, ordered hand-off from the turn to one iterating consumer. */
class PartQueue {
  private readonly parts: HarnessStreamPart[] = [];
  private waiting: ((value: IteratorResult<HarnessStreamPart>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private done = false;
  private error: Error = new Error('the turn failed');
  private failed = false;

  push(part: HarnessStreamPart): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      resolve({ value: part, done: false });
    } else this.parts.push(part);
  }

  close(): void {
    this.done = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    this.failed = true;
    this.done = true;
    this.error = error instanceof Error ? error : new Error(String(error));
    if (this.failWaiting) {
      const reject = this.failWaiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      reject(this.error);
    }
  }

  iterate(): AsyncIterator<HarnessStreamPart> {
    return {
      next: () => {
        const part = this.parts.shift();
        if (part) return Promise.resolve({ value: part, done: false });
        if (this.failed) return Promise.reject(this.error);
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
    };
  }
}
