import { costOf } from '../../providers/catalogue.js';
import { ProviderError } from '../../providers/errors.js';
import { withRetries } from '../../providers/retry.js';
import type { CompletedMessage, ModelProvider } from '../../providers/types.js';
import type { EventOf } from '../../common/events.js';
import { crashPoint } from '../crash.js';
import { cappedRequestOutput, maxOutputTokensOf } from '../../providers/outputBound.js';
import type { Payload } from '../../common/payload.js';
import type { ToolRegistry } from '../../tools/registry.js';
import {
  budgetMessage,
  checkBudget,
  estimatedUsage,
  estimateInputTokens,
  spentTotal,
  worstCase,
} from './budget.js';
import { attachPayloadImages } from './images.js';
import { modelTakesDocuments, modelTakesImages } from '../../common/attachments.js';
import type { TurnOutcome } from './host.js';
import { interruptTurn, reasoningOf, stopReason, type TurnScope } from './scope.js';

/**
 * One model request: the beforeRequest hook, projection, the stream (deltas and retries pushed live), then
 * the complete assistant message appended. Returns that message, or the outcome the turn ends with (a
 * failure or a stop is recorded first: `error`, or `interrupted` with the partial text).
 */
export async function requestModel(
  turn: TurnScope,
  provider: ModelProvider,
): Promise<TurnOutcome | EventOf<'assistant_message'>> {
  const { host } = turn;
  // A compaction the hook may run is a request too, of about this payload: checked before it (#31).
  if (host.beforeRequest && turn.budget()) {
    const before = checkCap(turn, provider, host.log.projection().payload({ system: host.systemPrompt }));
    if (before && 'status' in before) return before;
  }
  if (host.beforeRequest) {
    const ended = await host.beforeRequest({
      state: turn.state,
      provider,
      systemPrompt: host.systemPrompt,
      signal: turn.signal,
      append: (event) => turn.append(event),
    });
    if (ended) return ended;
  }
  const projectionStart = Date.now();
  // The log keeps its projection current event by event (and a long-lived host keeps it across turns).
  const projection = host.log.projection();
  const payload = projection.payload({ system: host.systemPrompt });
  turn.record('projection', projectionStart, { messages: payload.messages.length });
  // Tool results' images (MCP) and prompts' files: their bytes from the artifacts, for models that take them.
  const { pin } = turn.state;
  attachPayloadImages(payload, host.tools.artifactsDir, {
    images: modelTakesImages(pin),
    documents: modelTakesDocuments(pin),
  });
  // A reply the provider paused is continued as it stands: nothing goes after it (Anthropic's pause_turn).
  const last = turn.state.lastConversational;
  const continuesPause = last?.kind === 'assistant_message' && last.stopReason === 'pause_turn';
  if (host.environment && !continuesPause) {
    const environmentStart = Date.now();
    payload.environment = await host.environment(turn.state);
    turn.record('environment', environmentStart);
  }
  // Checks the messages added since the previous request; the earlier ones are frozen and were checked then.
  const validation = projection.validate(payload);
  if (!validation.ok) {
    const message = `internal error: the projected request is invalid (${validation.problems.map((p) => p.message).join('; ')})`;
    turn.append({ kind: 'error', message, code: 'invalid_payload' });
    return { status: 'failed', error: message };
  }
  // The cap check (#31): nothing is recorded between it and the request, so a crash in between leaves a log
  // from which resume computes the same check again.
  const capped = checkCap(turn, provider, payload);
  if (capped && 'status' in capped) return capped;
  const maxOutputTokens = capped?.maxOutputTokens ?? host.maxOutputTokens;
  const requestStart = Date.now();
  let firstDeltaAt: number | undefined;
  let completed: CompletedMessage | undefined;
  let partial = '';
  let partialReasoning = '';
  try {
    const stream = withRetries(
      () =>
        provider.stream({
          payload,
          tools: host.registry.definitions(),
          model: turn.state.pin.model,
          ...(turn.state.pin.reasoningEffort ? { reasoningEffort: turn.state.pin.reasoningEffort } : {}),
          signal: turn.signal,
          cacheKey: host.log.id,
          ...(maxOutputTokens ? { maxOutputTokens } : {}),
        }),
      { ...host.retry, signal: turn.signal },
    );
    for await (const event of stream) {
      if (event.type === 'retry') {
        turn.record('retry', Date.now(), {
          attempt: event.attempt,
          delayMs: event.delayMs,
          reason: event.reason,
        });
        host.hooks?.onNotice?.(`retrying in ${event.delayMs} ms (attempt ${event.attempt}): ${event.reason}`);
        continue;
      }
      if (firstDeltaAt === undefined && event.type !== 'done') {
        firstDeltaAt = Date.now();
        turn.record('time_to_first_token', requestStart);
      }
      if (event.type === 'text') {
        partial += event.text;
        host.hooks?.onDelta?.({ type: 'text', text: event.text });
      } else if (event.type === 'reasoning') {
        partialReasoning += event.text;
        host.hooks?.onDelta?.({ type: 'reasoning', text: event.text });
      } else if (event.type === 'tool_call') {
        host.hooks?.onDelta?.({ type: 'tool_call', id: event.id, name: event.name });
      } else if (event.type === 'done') {
        completed = event.message;
      }
    }
  } catch (error) {
    const thrown = error instanceof ProviderError ? error : new ProviderError('bad_response', String(error));
    // Providers don't know the session: their "switch the model" hint names it here.
    const failure = withSessionId(thrown, host.log.id);
    turn.record('request', requestStart, { failed: failure.code });
    const reasoningSoFar = failure.partialReasoning || partialReasoning;
    if (failure.code === 'aborted' || turn.signal.aborted)
      return interruptTurn(turn, failure.partial || partial, stopReason(turn, undefined), reasoningSoFar);
    if (failure.partial || reasoningSoFar)
      turn.append({
        kind: 'interrupted',
        content: failure.partial,
        toolCalls: [],
        ...reasoningOf(reasoningSoFar),
        reason: `the stream failed: ${failure.message}`,
      });
    turn.append({
      kind: 'error',
      message: failure.message,
      code: failure.code,
      retryable: failure.retryable,
    });
    return { status: 'failed', error: failure.message };
  }
  turn.record('stream', firstDeltaAt ?? requestStart);
  if (!completed) {
    turn.append({
      kind: 'error',
      message: 'the provider ended the stream without a message',
      code: 'bad_response',
    });
    return { status: 'failed', error: 'the provider ended the stream without a message' };
  }
  crashPoint('after_stream_before_append');
  // A server that reports no usage (some OpenAI-compatible ones) still cost something: an estimate, marked so.
  completed.usage ??= estimatedUsage(
    estimateInputTokens(payload, toolChars(host.registry)),
    completed.content.length + completed.toolCalls.reduce((n, call) => n + call.arguments.length, 0),
  );
  // Recorded before the append so that the request's whole trace is stored with its message.
  if (completed.usage) {
    turn.record('usage', requestStart, {
      ...completed.usage,
      costUsd: costOf(completed.usage, turn.state.pin.model) ?? null,
    });
  }
  const message = turn.append({
    kind: 'assistant_message',
    content: completed.content,
    toolCalls: completed.toolCalls,
    ...(completed.reasoning?.length ? { reasoning: completed.reasoning } : {}),
    stopReason: completed.stopReason,
    ...(completed.stopDetails ? { stopDetails: completed.stopDetails } : {}),
    model: turn.state.pin.model,
    ...(completed.usage ? { usage: completed.usage } : {}),
  }) as EventOf<'assistant_message'>;
  return message;
}

/**
 * The cap check before a request of `payload` (#31): undefined without caps; the turn's outcome (a
 * `budget_reached` appended) when spent + the request's worst case would cross a cap; else the output limit the
 * request must send for its worst case to hold.
 */
function checkCap(
  turn: TurnScope,
  provider: ModelProvider,
  payload: Payload,
): TurnOutcome | { maxOutputTokens: number | undefined } | undefined {
  const { host } = turn;
  const budget = turn.budget();
  if (!budget) return undefined;
  const checkStart = Date.now();
  const model = turn.state.pin.model;
  let maxOutputTokens = host.maxOutputTokens;
  // OpenAI's APIs allow the model's whole output limit unless told otherwise: a capped request says it.
  if (maxOutputTokens === undefined && provider.kind !== 'anthropic')
    maxOutputTokens = cappedRequestOutput(model);
  const worst = worstCase(
    model,
    estimateInputTokens(payload, toolChars(host.registry)),
    maxOutputTokensOf(provider.kind, {
      model,
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      ...(turn.state.pin.reasoningEffort ? { reasoningEffort: turn.state.pin.reasoningEffort } : {}),
    }),
  );
  const verdict = checkBudget(budget.caps, budget.spend, worst);
  turn.record('budget_check', checkStart, { ok: verdict.ok, inputTokens: worst.inputTokens });
  if (!verdict.ok) {
    const event = turn.append({
      kind: 'budget_reached',
      limit: verdict.limit,
      cap: verdict.cap,
      spent: spentTotal(budget.spend),
      spentOn: {
        requests: budget.spend.requests,
        compaction: budget.spend.compaction,
        subagents: budget.spend.subagents,
      },
      request: worst,
      ...(verdict.overBy === undefined ? {} : { overBy: verdict.overBy }),
      message: budgetMessage(host.budgetOwner ?? host.log.id, verdict, budget.spend, worst, model),
    }) as EventOf<'budget_reached'>;
    return { status: 'budget_reached', event };
  }
  crashPoint('after_budget_check');
  return { maxOutputTokens };
}

/** Characters of a registry's tool definitions as sent (kept per registry: they do not change in a turn). */
const toolCharsOf = new WeakMap<ToolRegistry, number>();
function toolChars(registry: ToolRegistry): number {
  let chars = toolCharsOf.get(registry);
  if (chars === undefined) {
    chars = JSON.stringify(registry.definitions()).length;
    toolCharsOf.set(registry, chars);
  }
  return chars;
}

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
