import { existsSync, rmSync } from 'node:fs';
import type { CommandUse } from '../../common/customEvents.js';
import type { NewEvent, SessionEvent } from '../../common/events.js';
import type { UserAttachment } from '../../common/attachments.js';
import { unusualStop, type UnusualStop } from '../../common/stopReasons.js';
import { policyChangeProblem } from '../approvals/policy.js';
import { importedTrustProblem } from '../log/imported.js';
import { refusedTurnPoint } from '../projection/rewind.js';
import { TraceEntry } from '../log/sessionLog.js';
import type { ModelProvider } from '../../providers/types.js';
import { settleCalls } from './calls.js';
import { TurnSetupError, type TurnHost, type TurnOutcome } from './host.js';
import type { SpendFigures } from '../../common/events.js';
import { hasCaps, tighterCaps, type Caps, type Spend } from './budget.js';
import { recordCustomChange } from './custom.js';
import { afterCompactionHooks, hookStop, promptHooks, sessionStartHooks, stopHooks } from './hookSteps.js';
import { recordInstructionsChange } from './instructions.js';
import { loadSessionState, spendOf } from './loadState.js';
import { requestModel } from './request.js';
import { stopTurn, type TurnScope } from './scope.js';
import { applyEvent, MAX_PAUSE_CONTINUATIONS, needsModel, type SessionState } from './state.js';

// The front door of main/core/turn: hosts import runTurn and the types they build it with from here.
export type {
  ArrivedEvent,
  BeforeRequestContext,
  SessionToolContext,
  SettingsChange,
  SubagentCall,
  SubagentRunner,
  SubagentSettlement,
  TurnHooks,
  TurnArrivals,
  TurnHost,
  TurnOutcome,
} from './host.js';
export { TurnSetupError } from './host.js';

/**
 * Runs one user turn (or, without a prompt, resumes the session's unfinished one) to its end: every step is
 * an event first. The model is streamed with deltas pushed live; each tool call passes the mode's registry,
 * the policy and grants, then the approval gate (a pending `approval_request` ends the turn; the state lives
 * in the log) and runs in the box. A call started but never recorded is resolved without repeating its side
 * effect: reads re-run, edits apply at most once by their recorded images, commands ask again.
 */
export async function runTurn(host: TurnHost, input: TurnInput = {}): Promise<TurnOutcome> {
  const turn = new Turn(host);
  return turn.run(input);
}

/** What a turn starts from: the user's new message (none: resume), and the host's own trace records. */
export type TurnInput = {
  prompt?: string;
  messageId?: string;
  /** Issue #30: the custom command `prompt` was expanded from (recorded in the user_message). */
  command?: CommandUse;
  /** Files attached to the prompt, already kept as artifacts (harness/attachments.ts). */
  attachments?: readonly UserAttachment[];
  /** Records the host made for this turn before it (streamHarness's harness_turn), written with its first append. */
  trace?: readonly TraceEntry[];
};

/** Whether the log would store this trace record (valid, its detail JSON). */
function isStorable(entry: TraceEntry): boolean {
  if (!TraceEntry.safeParse(entry).success) return false;
  try {
    JSON.stringify(entry.detail);
    return true;
  } catch {
    return false;
  }
}

class Turn implements TurnScope {
  readonly state: SessionState;
  private readonly controller = new AbortController();
  private readonly trace: TraceEntry[] = [];
  private provider: ModelProvider | undefined;
  private finalText = '';
  /** The last reply's unusual ending (a refusal, the output limit), reported with the completed outcome. */
  private finalStop: UnusualStop | undefined;
  private changesBegun: Promise<void> | undefined;
  /** Times a Stop hook sent the model back in this turn (issue #30); unknown until counted (a resumed turn). */
  private stopContinuations: number | undefined;
  /** The children's spend as last read from their logs; undefined once a subagent event makes it stale. */
  private childSpend: SpendFigures | undefined;
  /** True while the turn's tools run: a fact arriving then is recorded at once (TurnHost.arrivals). */
  private toolsRunning = false;

  constructor(readonly host: TurnHost) {
    this.state = loadSessionState(host.log, { spend: host.budgetCeiling !== undefined });
  }

  budget(): { caps: Caps; spend: Spend } | undefined {
    const caps = tighterCaps(this.state.caps, this.host.budgetCeiling);
    if (!hasCaps(caps)) return undefined;
    this.state.spend ??= spendOf(this.host.log, this.state.pin.model);
    if (this.childSpend === undefined) {
      const { children } = this.state;
      this.childSpend =
        children.length > 0 && this.host.subagents?.spentBy
          ? this.host.subagents.spentBy(children)
          : { usd: 0, tokens: 0 };
    }
    return { caps, spend: { ...this.state.spend, subagents: this.childSpend } };
  }

  async run(input: TurnInput): Promise<TurnOutcome> {
    const { host } = this;
    this.trace.push(...(input.trace ?? []));
    try {
      this.provider = this.makeProvider();
    } catch (error) {
      // A turn that cannot start still leaves the host's records.
      this.flushTrace();
      throw error;
    }
    if (host.stopFile) rmSync(host.stopFile, { force: true });
    const stopWatch = this.watchForStop();
    host.log.setRunning(true);
    const unwatch = host.arrivals?.watch(() => this.onArrival());
    try {
      if (input.prompt !== undefined) {
        // Issue #30: SessionStart hooks (startup, resume; compact after a compaction the user ran), then the
        // UserPromptSubmit hooks, may refuse the prompt or end the turn before it is recorded.
        const started = (await sessionStartHooks(this)) ?? (await compactedStop(this));
        if (started) return { status: 'completed', text: '', stop: started };
        const said = await promptHooks(this, input.prompt);
        if (said.stop !== undefined) return { status: 'completed', text: '', stop: said.stop };
        if (said.blocked !== undefined)
          return { status: 'failed', error: `a UserPromptSubmit hook refused this prompt: ${said.blocked}` };
        this.append({
          kind: 'user_message',
          content: input.prompt,
          ...(input.messageId ? { messageId: input.messageId } : {}),
          ...(input.command ? { command: input.command } : {}),
          ...(input.attachments?.length ? { attachments: [...input.attachments] } : {}),
        });
      }
      await recordInstructionsChange(this);
      recordCustomChange(this);
      return await this.loop();
    } finally {
      unwatch?.();
      clearInterval(stopWatch);
      host.signal?.removeEventListener('abort', this.onHostAbort);
      this.flushTrace();
      host.log.setRunning(false);
    }
  }

  // The host's abort reason is kept: a subagent's budget stop says so in the child's `interrupted` event.
  private readonly onHostAbort = () => this.controller.abort(this.host.signal?.reason);

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private get turnNumber(): number {
    return this.state.turns;
  }

  private makeProvider(): ModelProvider {
    const { pin } = this.state;
    // An imported session runs only once its folder and endpoint were chosen here (log/imported.ts).
    const imported = importedTrustProblem({
      sessionId: this.state.sessionId,
      mark: this.state.imported,
      pin,
      pinSeq: this.state.pinSeq,
    });
    if (imported) throw new TurnSetupError(imported);
    try {
      return this.host.createProvider(pin);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new TurnSetupError(
        `this session is pinned to ${pin.provider}:${pin.model}, which cannot be used here: ${reason}. ` +
          `Configure it, or switch the session's model explicitly (keel model SESSION PROVIDER:MODEL).`,
      );
    }
  }

  /** Issue #37: the settings changed while the turn runs, recorded now so the next request uses them. */
  private takeSettingsChanges(): void {
    for (const change of this.host.settingsChanges?.() ?? []) {
      if (
        change.kind === 'policy_changed' &&
        (change.policy === this.state.policy || policyChangeProblem(this.state.toolMode, change.policy))
      )
        continue;
      this.append(change);
      if (change.kind === 'model_changed') this.provider = this.makeProvider();
    }
  }

  /**
   * Issue 33: records the facts that arrived from outside (TurnHost.arrivals). Called before each request,
   * after each recorded reply, and as one arrives while tools run; never while a reply streams (the note would
   * sit before a reply that never saw it) nor while the turn's start runs its hooks (keyed by the seq they
   * expect next).
   */
  private recordArrivals(): void {
    for (const event of this.host.arrivals?.take() ?? []) this.append(event);
  }

  private readonly onArrival = () => {
    if (!this.toolsRunning) return;
    try {
      this.recordArrivals();
    } catch {
      // The log moved under the turn: its own next append fails the turn and says so. This fact is lost (a
      // courtesy: the model can read the resource again).
    }
  };

  private watchForStop(): ReturnType<typeof setInterval> | undefined {
    const { host } = this;
    if (host.signal?.aborted) this.controller.abort(host.signal.reason);
    host.signal?.addEventListener('abort', this.onHostAbort, { once: true });
    const stopFile = host.stopFile;
    if (!stopFile) return undefined;
    const timer = setInterval(() => {
      if (existsSync(stopFile)) {
        rmSync(stopFile, { force: true });
        this.controller.abort();
      }
    }, 100);
    timer.unref();
    return timer;
  }

  /**
   * Appends one event, applies it to the state and tells subscribers. Throws if the log moved under us. The
   * trace recorded since the last append goes with it, in its commit (no write of its own).
   */
  append(event: NewEvent): SessionEvent {
    const trace = this.trace.splice(0);
    let result;
    try {
      result = this.host.log.append(event, { expectedLastSeq: this.state.lastSeq, trace });
    } finally {
      // Not written (a conflict, a refused append): kept for the turn's last flush.
      if (!result?.ok) this.trace.unshift(...trace);
    }
    if (!result.ok) {
      throw new Error(
        `the session log changed under this turn (expected seq ${result.conflict.expectedLastSeq}, found ${result.conflict.actualLastSeq})`,
      );
    }
    const appended = result.events[0] as SessionEvent;
    applyEvent(this.state, appended);
    // A child ran (or starts): its spend is read again before the next request's cap check.
    if (appended.kind === 'subagent_result' || appended.kind === 'subagent_started')
      this.childSpend = undefined;
    this.host.hooks?.onEvent?.(appended);
    return appended;
  }

  beforeChanges(): Promise<void> {
    this.changesBegun ??= this.host.beforeChanges?.() ?? Promise.resolve();
    return this.changesBegun;
  }

  /** Adds one stage to the turn's trace; written with the next append, or by flushTrace when none follows. */
  record(stage: string, started: number, detail?: unknown): void {
    const entry = {
      turn: this.turnNumber,
      stage,
      startedAt: new Date(started).toISOString(),
      durationMs: Math.max(0, Date.now() - started),
      ...(detail === undefined ? {} : { detail }),
    };
    // The records go with the next event's append, which refuses an invalid one: a record that could not be
    // stored is dropped here, as a failed trace write was, so the trace never fails a turn.
    if (isStorable(entry)) this.trace.push(entry);
  }

  private flushTrace(): void {
    if (this.trace.length === 0) return;
    try {
      this.host.log.appendTrace(this.trace.splice(0));
    } catch {
      // Trace is observability only: a refused write (a full disk) never fails a turn or hides its error.
    }
  }

  /**
   * Anthropic's docs: after `stop_reason: "refusal"` the refused turn must be removed or rephrased before the
   * conversation continues, or every later request is refused too. The turn is set aside by a `rewound`
   * event (cause `refusal`): its rows stay in the log and the transcript, its file changes stay, and the
   * next request is projected without it. OpenAI's refusals need no reset: the exchange is kept.
   */
  private setAsideRefusedTurn(): void {
    if (this.state.pin.provider !== 'anthropic') return;
    const toSeq = refusedTurnPoint(this.host.log.read({ validate: false }));
    if (toSeq !== undefined) this.append({ kind: 'rewound', toSeq, cause: 'refusal' });
  }

  private async loop(): Promise<TurnOutcome> {
    const { host } = this;
    const maxSteps = host.maxSteps ?? 50;
    let steps = 0;
    for (;;) {
      this.toolsRunning = true;
      let settled;
      try {
        this.recordArrivals();
        settled = await settleCalls(this);
      } finally {
        this.toolsRunning = false;
      }
      if (settled) return settled;
      if (!needsModel(this.state))
        return {
          status: 'completed',
          text: this.finalText,
          ...(this.finalStop ? { stop: this.finalStop } : {}),
        };
      if (this.signal.aborted) return stopTurn(this);
      if (steps >= maxSteps) return { status: 'budget_exhausted', steps };
      steps++;
      this.takeSettingsChanges();
      this.recordArrivals();
      const answered = await requestModel(this, this.provider as ModelProvider);
      this.flushTrace();
      if ('status' in answered) return answered;
      this.recordArrivals();
      if (answered.stopReason === 'pause_turn' && needsModel(this.state)) {
        host.hooks?.onNotice?.(
          `the provider paused the turn (a server tool was still working); continuing it ` +
            `(${this.state.pausedInARow} of ${MAX_PAUSE_CONTINUATIONS})`,
        );
        continue;
      }
      if (answered.toolCalls.length === 0) {
        // Issue #30: a Stop hook may send the model back to work (bounded: hookSteps.ts), or end the turn.
        const stopped = await stopHooks(this, answered, this.stopContinuations);
        if (stopped.again) {
          this.stopContinuations = stopped.continued + 1;
          continue;
        }
        this.finalText = answered.content;
        this.finalStop = stopped.stop ?? unusualStop(answered.stopReason, answered.stopDetails);
        if (stopped.stop) return { status: 'completed', text: this.finalText, stop: stopped.stop };
        if (this.finalStop?.kind === 'refusal') this.setAsideRefusedTurn();
      }
    }
  }
}

/**
 * Issue #30: the SessionStart hooks (source `compact`) a compaction the user ran since the last turn calls for,
 * when the turn starts; a `continue: false` made now ends the turn before the prompt.
 */
async function compactedStop(turn: TurnScope): Promise<UnusualStop | undefined> {
  const ran = await afterCompactionHooks(turn);
  return ran?.stop && !ran.replayed ? hookStop('SessionStart', ran) : undefined;
}
