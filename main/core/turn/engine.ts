import { existsSync, rmSync } from 'node:fs';
import { evaluatePolicy } from '../approvals/policy.js';
import { findGrant } from '../approvals/grants.js';
import type { EventOf, ModelPin, NewEvent, SessionEvent, ToolCall } from '../../common/events.js';
import type { SessionLog, TraceEntry } from '../log/sessionLog.js';
import { projectView } from '../projection/projectPayload.js';
import { validatePayload } from '../projection/validate.js';
import { costOf } from '../../providers/catalogue.js';
import { ProviderError } from '../../providers/errors.js';
import { withRetries, type RetryOptions } from '../../providers/retry.js';
import type { CompletedMessage, ModelProvider } from '../../providers/types.js';
import { parseToolCall, runParsed, type ParsedToolCall } from '../../tools/execute.js';
import { applyEditOnce, previewEdit, type FileChangeArgs } from '../../tools/fileChange.js';
import { resolvePath } from '../../tools/confine.js';
import { errorOutcome, toRelative } from '../../tools/outcome.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { ToolContext, ToolOutcome } from '../../tools/types.js';
import { crashPoint } from './crash.js';
import { loadSessionState } from './loadState.js';
import { applyEvent, needsModel, unansweredCalls, type CallRecord, type SessionState } from './state.js';

/** What a turn pushes to its subscribers while it runs (the UI, the CLI's stdout). */
export type TurnHooks = {
  /** A text delta or a tool call starting to stream, as it arrives from the provider. */
  onDelta?: (delta: { type: 'text'; text: string } | { type: 'tool_call'; id: string; name: string }) => void;
  /** Every event the turn appends, after it is committed. */
  onEvent?: (event: SessionEvent) => void;
  /** Live, redacted output of a running command. */
  onToolOutput?: (toolCallId: string, chunk: string) => void;
  /** Progress that is not an event (a retry after a transient failure), in words for the user. */
  onNotice?: (text: string) => void;
  /** Every event a subagent (a child session of this turn) appends, with the child's session id. */
  onSubagentEvent?: (childSessionId: string, event: SessionEvent) => void;
  /** Live, redacted output of a command a subagent runs, with the child's session id and call id. */
  onSubagentToolOutput?: (childSessionId: string, toolCallId: string, chunk: string) => void;
};

/** The parts of a tool context that stay the same for every call of a session. */
export type SessionToolContext = Omit<ToolContext, 'idempotencyKey' | 'signal' | 'onOutput' | 'approved'>;

/** Everything a turn needs from its host (the CLI, the app, `keel serve`, a library user). */
export type TurnHost = {
  /** The session's log, open for writing (the host holds the lease). */
  log: SessionLog;
  /** Builds the provider the session is pinned to; throws ProviderError('missing_key') when it cannot. */
  createProvider: (pin: ModelPin) => ModelProvider;
  /** The registry of the session's tool mode. */
  registry: ToolRegistry;
  tools: SessionToolContext;
  /** False when no OS sandbox can start: every command then needs approval. */
  sandboxAvailable: boolean;
  systemPrompt: string;
  /** Model requests one turn may make before it stops (the turn's budget). */
  maxSteps?: number;
  maxOutputTokens?: number;
  /** Stops the turn (Ctrl-C, the Stop button). */
  signal?: AbortSignal;
  /** A file whose appearance stops the turn: how `keel stop` reaches a turn running in another process. */
  stopFile?: string;
  hooks?: TurnHooks;
  retry?: Omit<RetryOptions, 'signal'>;
  /**
   * Runs before every model request (compaction hooks in here). Events it appends go through `append`, so
   * the turn's state stays in step with the log.
   */
  beforeRequest?: (context: BeforeRequestContext) => Promise<void>;
  /**
   * Runs spawn_subagent calls as child sessions (main/core/subagents). Without one, such a call is answered
   * with a tool error.
   */
  subagents?: SubagentRunner;
};

/** What the engine hands the subagent runner for one unanswered call of a `subagent` tool. */
export type SubagentCall = {
  /** The call and what the log says about it in this session (its approval request and decision, if any). */
  record: CallRecord;
  /** The call's arguments, validated by the tool's schema. */
  args: Record<string, unknown>;
  state: SessionState;
  /** The turn's signal: aborting the parent aborts the child. */
  signal: AbortSignal;
  /** The turn's own append (events reach the state and the hooks). */
  append: (event: NewEvent) => SessionEvent;
};

/**
 * How a subagent call ended for this turn. `answered`: the runner appended the call's result (a
 * subagent_result, or a tool_result error when it refused). `awaiting_approval`: it appended an
 * approval_request for the call (the child's, mirrored). `interrupted`: the turn was stopped and the
 * child's partial answer is recorded. `failed`: nothing answers the call yet; resuming runs the child on.
 */
export type SubagentSettlement =
  | { status: 'answered' }
  | { status: 'awaiting_approval' }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string };

/** Settles subagent calls; implemented by main/core/subagents. */
export type SubagentRunner = { settle: (call: SubagentCall) => Promise<SubagentSettlement> };

/** What a beforeRequest hook gets: the session state, the pinned provider, and the turn's own append. */
export type BeforeRequestContext = {
  state: SessionState;
  provider: ModelProvider;
  systemPrompt: string;
  signal: AbortSignal;
  append: (event: NewEvent) => SessionEvent;
};

/** How a turn ended. */
export type TurnOutcome =
  | { status: 'completed'; text: string }
  | { status: 'awaiting_approval'; pending: EventOf<'approval_request'>[] }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string }
  | { status: 'budget_exhausted'; steps: number };

/** A turn could not start (e.g. the pinned provider is not configured); nothing was appended. */
export class TurnSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TurnSetupError';
  }
}

const STOPPED = 'stopped by the user';

/**
 * Runs one user turn (or, without a prompt, resumes the session's unfinished one) to its end: every step is
 * an event first. The model is streamed with deltas pushed live; each tool call passes the mode's registry,
 * the policy and grants, then the approval gate (a pending `approval_request` ends the turn; the state lives
 * in the log) and runs in the box. A call started but never recorded is resolved without repeating its side
 * effect: reads re-run, edits apply at most once by their recorded images, commands ask again.
 */
export async function runTurn(
  host: TurnHost,
  input: { prompt?: string; messageId?: string } = {},
): Promise<TurnOutcome> {
  const turn = new Turn(host);
  return turn.run(input);
}

class Turn {
  private readonly state: SessionState;
  private readonly controller = new AbortController();
  private readonly trace: TraceEntry[] = [];
  private provider: ModelProvider | undefined;
  private finalText = '';

  constructor(private readonly host: TurnHost) {
    this.state = loadSessionState(host.log);
  }

  async run(input: { prompt?: string; messageId?: string }): Promise<TurnOutcome> {
    const { host } = this;
    this.provider = this.makeProvider();
    if (host.stopFile) rmSync(host.stopFile, { force: true });
    const stopWatch = this.watchForStop();
    host.log.setRunning(true);
    try {
      if (input.prompt !== undefined) {
        this.append({
          kind: 'user_message',
          content: input.prompt,
          ...(input.messageId ? { messageId: input.messageId } : {}),
        });
      }
      return await this.loop();
    } finally {
      clearInterval(stopWatch);
      host.signal?.removeEventListener('abort', this.onHostAbort);
      this.flushTrace();
      host.log.setRunning(false);
    }
  }

  // The host's abort reason is kept: a subagent's budget stop says so in the child's `interrupted` event.
  private readonly onHostAbort = () => this.controller.abort(this.host.signal?.reason);

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the turn was stopped: the host's abort reason when it is text (a subagent budget), else `fallback`. */
  private stopReason<T extends string | undefined>(fallback: T): string | T {
    const reason: unknown = this.signal.reason;
    return typeof reason === 'string' ? reason : fallback;
  }

  private get turnNumber(): number {
    return this.state.turns;
  }

  private makeProvider(): ModelProvider {
    const { pin } = this.state;
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

  /** Appends one event, applies it to the state and tells subscribers. Throws if the log moved under us. */
  private append(event: NewEvent): SessionEvent {
    const result = this.host.log.append(event, { expectedLastSeq: this.state.lastSeq });
    if (!result.ok) {
      throw new Error(
        `the session log changed under this turn (expected seq ${result.conflict.expectedLastSeq}, found ${result.conflict.actualLastSeq})`,
      );
    }
    const appended = result.events[0] as SessionEvent;
    applyEvent(this.state, appended);
    this.host.hooks?.onEvent?.(appended);
    return appended;
  }

  private record(stage: string, started: number, detail?: unknown): void {
    this.trace.push({
      turn: this.turnNumber,
      stage,
      startedAt: new Date(started).toISOString(),
      durationMs: Math.max(0, Date.now() - started),
      ...(detail === undefined ? {} : { detail }),
    });
  }

  private flushTrace(): void {
    if (this.trace.length === 0) return;
    this.host.log.appendTrace(this.trace.splice(0));
  }

  private async loop(): Promise<TurnOutcome> {
    const maxSteps = this.host.maxSteps ?? 50;
    let steps = 0;
    for (;;) {
      const settled = await this.settleCalls();
      if (settled) return settled;
      if (!needsModel(this.state)) return { status: 'completed', text: this.finalText };
      if (this.signal.aborted) return this.interrupt('', this.stopReason(STOPPED));
      if (steps >= maxSteps) return { status: 'budget_exhausted', steps };
      steps++;
      const outcome = await this.requestModel();
      this.flushTrace();
      if (outcome) return outcome;
    }
  }

  /** One model request: project, stream, append. Returns an outcome when the turn must end here. */
  private async requestModel(): Promise<TurnOutcome | undefined> {
    const { host } = this;
    if (host.beforeRequest) {
      await host.beforeRequest({
        state: this.state,
        provider: this.provider as ModelProvider,
        systemPrompt: host.systemPrompt,
        signal: this.signal,
        append: (event) => this.append(event),
      });
    }
    const projectionStart = Date.now();
    const payload = projectView(host.log.projectionView({ validate: false }), { system: host.systemPrompt });
    this.record('projection', projectionStart, { messages: payload.messages.length });
    const validation = validatePayload(payload);
    if (!validation.ok) {
      const message = `internal error: the projected request is invalid (${validation.problems.map((p) => p.message).join('; ')})`;
      this.append({ kind: 'error', message, code: 'invalid_payload' });
      return { status: 'failed', error: message };
    }
    const provider = this.provider as ModelProvider;
    const requestStart = Date.now();
    let firstDeltaAt: number | undefined;
    let completed: CompletedMessage | undefined;
    let partial = '';
    try {
      const stream = withRetries(
        () =>
          provider.stream({
            payload,
            tools: host.registry.definitions(),
            model: this.state.pin.model,
            signal: this.signal,
            ...(host.maxOutputTokens ? { maxOutputTokens: host.maxOutputTokens } : {}),
          }),
        { ...host.retry, signal: this.signal },
      );
      for await (const event of stream) {
        if (event.type === 'retry') {
          this.record('retry', Date.now(), {
            attempt: event.attempt,
            delayMs: event.delayMs,
            reason: event.reason,
          });
          host.hooks?.onNotice?.(
            `retrying in ${event.delayMs} ms (attempt ${event.attempt}): ${event.reason}`,
          );
          continue;
        }
        if (firstDeltaAt === undefined && event.type !== 'done') {
          firstDeltaAt = Date.now();
          this.record('time_to_first_token', requestStart);
        }
        if (event.type === 'text') {
          partial += event.text;
          host.hooks?.onDelta?.({ type: 'text', text: event.text });
        } else if (event.type === 'tool_call') {
          host.hooks?.onDelta?.({ type: 'tool_call', id: event.id, name: event.name });
        } else if (event.type === 'done') {
          completed = event.message;
        }
      }
    } catch (error) {
      const thrown =
        error instanceof ProviderError ? error : new ProviderError('bad_response', String(error));
      // Providers don't know the session: their "switch the model" hint names it here.
      const failure = withSessionId(thrown, this.host.log.id);
      this.record('request', requestStart, { failed: failure.code });
      if (failure.code === 'aborted' || this.signal.aborted)
        return this.interrupt(failure.partial || partial, this.stopReason(undefined));
      if (failure.partial)
        this.append({
          kind: 'interrupted',
          content: failure.partial,
          toolCalls: [],
          reason: `the stream failed: ${failure.message}`,
        });
      this.append({
        kind: 'error',
        message: failure.message,
        code: failure.code,
        retryable: failure.retryable,
      });
      return { status: 'failed', error: failure.message };
    }
    this.record('stream', firstDeltaAt ?? requestStart);
    if (!completed) {
      this.append({
        kind: 'error',
        message: 'the provider ended the stream without a message',
        code: 'bad_response',
      });
      return { status: 'failed', error: 'the provider ended the stream without a message' };
    }
    crashPoint('after_stream_before_append');
    this.append({
      kind: 'assistant_message',
      content: completed.content,
      toolCalls: completed.toolCalls,
      stopReason: completed.stopReason,
      model: this.state.pin.model,
      ...(completed.usage ? { usage: completed.usage } : {}),
    });
    if (completed.usage) {
      this.record('usage', requestStart, {
        ...completed.usage,
        costUsd: costOf(completed.usage, this.state.pin.model) ?? null,
      });
    }
    if (completed.toolCalls.length === 0) this.finalText = completed.content;
    return undefined;
  }

  private interrupt(partial: string, reason: string | undefined): TurnOutcome {
    this.append({ kind: 'interrupted', content: partial, toolCalls: [], ...(reason ? { reason } : {}) });
    return { status: 'interrupted' };
  }

  private toolContext(key: string, record: CallRecord, approved: boolean): ToolContext {
    return {
      ...this.host.tools,
      idempotencyKey: key,
      signal: this.signal,
      approved,
      onOutput: (chunk) => this.host.hooks?.onToolOutput?.(record.call.id, chunk),
    };
  }

  /** The key a call's side effects carry: derived from the event that requested it, never from the attempt. */
  private keyFor(record: CallRecord): string {
    if (record.started) return record.started.idempotencyKey;
    if (record.decision?.kind === 'approval_granted' && record.request)
      return `ev${record.request.seq}-${record.call.name}`;
    const sameTool = this.state.openCalls.filter((r) => r.call.name === record.call.name);
    const suffix = sameTool.length > 1 ? `.${sameTool.indexOf(record) + 1}` : '';
    return `ev${record.assistantSeq}-${record.call.name}${suffix}`;
  }

  /**
   * Resolves every unanswered call of the newest assistant message, in order. Returns an outcome when the
   * turn must stop (an approval is pending, or the user stopped it), else undefined.
   */
  private async settleCalls(): Promise<TurnOutcome | undefined> {
    for (const record of unansweredCalls(this.state)) {
      if (this.signal.aborted) return this.interrupt('', this.stopReason(STOPPED));
      const outcome = await this.settleCall(record);
      if (outcome) return outcome;
    }
    return undefined;
  }

  private async settleCall(record: CallRecord): Promise<TurnOutcome | undefined> {
    const { host } = this;
    const { call } = record;
    const parsed = parseToolCall(host.registry, call);
    if (!parsed.ok) {
      this.appendResult(record, {
        ...parsed.outcome,
        content: host.tools.redactor.redact(parsed.outcome.content),
      });
      return undefined;
    }
    // Before the approval checks: a subagent call's request and decision are the child's, mirrored here.
    if (parsed.call.tool.kind === 'subagent') return this.settleSubagent(record, parsed.call);
    if (record.request && !record.decision) return this.awaiting();
    if (record.decision?.kind === 'approval_denied') {
      const reason = record.decision.reason ? `: ${record.decision.reason}` : '';
      this.appendResult(record, {
        content: JSON.stringify({ error: `denied by the user${reason}` }),
        isError: true,
      });
      return undefined;
    }
    const granted = record.decision?.kind === 'approval_granted';
    if (record.started) return this.settleUnknownOutcome(record, parsed.call, granted);
    if (!granted) {
      const gate = await this.gate(record, parsed.call);
      if (gate) return gate;
      if (record.resultSeq !== undefined) return undefined;
    } else {
      crashPoint('after_approval_before_execute');
    }
    return this.execute(record, parsed.call, granted);
  }

  /**
   * A spawn_subagent call: the runner starts (or resumes) the child session and appends what answers the call;
   * the engine only ends the turn the way the runner reports (approval pending, stopped, failed).
   */
  private async settleSubagent(record: CallRecord, parsed: ParsedToolCall): Promise<TurnOutcome | undefined> {
    const runner = this.host.subagents;
    if (!runner) {
      this.appendResult(record, errorOutcome('subagents are not available in this session'));
      return undefined;
    }
    const started = Date.now();
    const settled = await runner.settle({
      record,
      args: parsed.args,
      state: this.state,
      signal: this.signal,
      append: (event) => this.append(event),
    });
    this.record(`tool:${parsed.tool.name}`, started, { toolCallId: record.call.id, status: settled.status });
    switch (settled.status) {
      case 'awaiting_approval':
        return this.awaiting();
      case 'interrupted':
        return this.interrupt('', this.stopReason(STOPPED));
      case 'failed':
        this.append({ kind: 'error', message: settled.error, code: 'subagent_failed' });
        return { status: 'failed', error: settled.error };
      default:
        return undefined;
    }
  }

  /** Policy, grants and protection for a call not yet decided. Appends a request or a denial when needed. */
  private async gate(record: CallRecord, parsed: ParsedToolCall): Promise<TurnOutcome | undefined> {
    const { host, state } = this;
    const ctx = this.toolContext(this.keyFor(record), record, false);
    const kind = parsed.tool.kind;
    let protectedReason: string | null = null;
    let diff: string | undefined;
    let path: string | undefined;
    if (kind === 'edit') {
      const preview = await previewEdit(parsed.args as FileChangeArgs, ctx);
      if (preview.isError) {
        // The change cannot apply (escape, old_string missing…): the tool error is the answer, nothing to approve.
        this.appendResult(record, preview);
        return undefined;
      }
      protectedReason = preview.approvalRequired ?? null;
      diff = preview.diff;
      path = preview.path;
    } else if (typeof parsed.args['path'] === 'string') {
      try {
        path = toRelative(ctx.workspace, resolvePath(ctx, parsed.args['path'], 'path'));
      } catch {
        path = undefined; // an escaping path fails as a tool error when run; it matches no grant
      }
    }
    const decision = evaluatePolicy({
      policy: state.policy,
      kind,
      protectedReason,
      sandboxAvailable: host.sandboxAvailable,
    });
    if (decision.action === 'allow') return undefined;
    if (decision.action === 'deny') {
      this.appendResult(record, { content: JSON.stringify({ error: decision.reason }), isError: true });
      return undefined;
    }
    const command = typeof parsed.args['command'] === 'string' ? parsed.args['command'] : undefined;
    if (!protectedReason) {
      const grant = findGrant(
        { tool: parsed.tool.name, ...(path ? { path } : {}), ...(command ? { command } : {}) },
        [...state.grants.values()],
      );
      if (grant) return undefined;
    }
    this.append({
      kind: 'approval_request',
      toolCallId: record.call.id,
      tool: parsed.tool.name,
      arguments: host.tools.redactor.redact(record.call.arguments),
      reason: decision.reason,
      ...(diff ? { diff } : {}),
    });
    return this.awaiting();
  }

  private awaiting(): TurnOutcome {
    const pending = unansweredCalls(this.state)
      .filter((r) => r.request !== undefined && r.decision === undefined)
      .map((r) => r.request as EventOf<'approval_request'>);
    return { status: 'awaiting_approval', pending };
  }

  private async execute(
    record: CallRecord,
    parsed: ParsedToolCall,
    approved: boolean,
  ): Promise<TurnOutcome | undefined> {
    const key = this.keyFor(record);
    const ctx = this.toolContext(key, record, approved);
    let images: { preImageHash: string | null; postImageHash: string } | undefined;
    if (parsed.tool.kind === 'edit') {
      const preview = await previewEdit(parsed.args as FileChangeArgs, ctx);
      if (preview.isError || preview.postImageHash === undefined) {
        this.appendResult(record, preview);
        return undefined;
      }
      if (approved && record.request?.diff !== undefined && preview.diff !== record.request.diff) {
        this.appendResult(record, {
          content: JSON.stringify({
            error:
              'the file changed after the edit was approved; it was not applied (read it again and redo the edit)',
          }),
          isError: true,
        });
        return undefined;
      }
      images = { preImageHash: preview.preImageHash ?? null, postImageHash: preview.postImageHash };
    }
    this.append({
      kind: 'tool_call_started',
      toolCallId: record.call.id,
      tool: parsed.tool.name,
      idempotencyKey: key,
      ...(images ?? {}),
    });
    crashPoint('after_tool_started');
    const started = Date.now();
    const outcome = images
      ? await applyEditOnce(parsed.args as FileChangeArgs, ctx, images)
      : await runParsed(parsed, ctx);
    this.record(`tool:${parsed.tool.name}`, started, {
      toolCallId: record.call.id,
      isError: outcome.isError,
    });
    crashPoint('after_tool_executed_before_result');
    this.appendResult(record, outcome, key);
    if (this.signal.aborted) return this.interrupt('', this.stopReason(STOPPED));
    return undefined;
  }

  /** A call started before a crash whose result was never recorded: resolve it without repeating a side effect. */
  private async settleUnknownOutcome(
    record: CallRecord,
    parsed: ParsedToolCall,
    granted: boolean,
  ): Promise<TurnOutcome | undefined> {
    const started = record.started as EventOf<'tool_call_started'>;
    const key = started.idempotencyKey;
    const kind = parsed.tool.kind;
    if (kind === 'read') {
      this.appendResult(record, await runParsed(parsed, this.toolContext(key, record, false)), key);
      return undefined;
    }
    if (kind === 'edit' && started.postImageHash !== undefined) {
      const ctx = this.toolContext(key, record, true);
      const outcome = await applyEditOnce(parsed.args as FileChangeArgs, ctx, {
        preImageHash: started.preImageHash ?? null,
        postImageHash: started.postImageHash,
      });
      this.appendResult(record, outcome, key);
      return undefined;
    }
    // A command (or an edit without recorded images): never re-run blindly.
    if (granted && record.request?.unknownOutcome) {
      const ctx = this.toolContext(key, record, true);
      const begun = Date.now();
      const outcome = await runParsed(parsed, ctx);
      this.record(`tool:${parsed.tool.name}`, begun, { toolCallId: record.call.id, rerun: true });
      this.appendResult(record, outcome, key);
      return this.signal.aborted ? this.interrupt('', this.stopReason(STOPPED)) : undefined;
    }
    this.append({
      kind: 'approval_request',
      toolCallId: record.call.id,
      tool: parsed.tool.name,
      arguments: this.host.tools.redactor.redact(record.call.arguments),
      reason: `outcome unknown: Keel stopped after starting this ${parsed.tool.name} (key ${key}) and before recording its result. Approve to run it again, or deny to tell the model it did not complete.`,
      unknownOutcome: true,
    });
    return this.awaiting();
  }

  private appendResult(record: CallRecord, outcome: ToolOutcome, key?: string): void {
    this.append({
      kind: 'tool_result',
      toolCallId: record.call.id,
      tool: record.call.name,
      content: outcome.content,
      ...(outcome.isError ? { isError: true } : {}),
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      ...(outcome.signal !== undefined ? { signal: outcome.signal } : {}),
      ...(outcome.artifact ? { artifact: outcome.artifact } : {}),
      ...(key ? { idempotencyKey: key } : {}),
      ...(outcome.preImageHash !== undefined ? { preImageHash: outcome.preImageHash } : {}),
      ...(outcome.postImageHash ? { postImageHash: outcome.postImageHash } : {}),
      ...(outcome.diff ? { diff: outcome.diff } : {}),
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
    });
  }
}

export type { ToolCall };

/** The provider's error with its `keel model SESSION` hint naming the session it happened in. */
function withSessionId(failure: ProviderError, sessionId: string): ProviderError {
  if (!failure.message.includes('keel model SESSION ')) return failure;
  const named = new ProviderError(
    failure.code,
    failure.message.replace('keel model SESSION ', `keel model ${sessionId} `),
    failure.retryable,
    failure.status,
    failure.retryAfterMs,
  );
  named.partial = failure.partial;
  return named;
}
