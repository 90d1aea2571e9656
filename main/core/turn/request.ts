import { costOf } from '../../providers/catalogue.js';
import { ProviderError } from '../../providers/errors.js';
import { withRetries } from '../../providers/retry.js';
import type { CompletedMessage, ModelProvider } from '../../providers/types.js';
import type { EventOf } from '../../common/events.js';
import { crashPoint } from '../crash.js';
import { attachPayloadImages } from './images.js';
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
  if (host.beforeRequest) {
    await host.beforeRequest({
      state: turn.state,
      provider,
      systemPrompt: host.systemPrompt,
      signal: turn.signal,
      append: (event) => turn.append(event),
    });
  }
  const projectionStart = Date.now();
  // The log keeps its projection current event by event (and a long-lived host keeps it across turns).
  const projection = host.log.projection();
  const payload = projection.payload({ system: host.systemPrompt });
  turn.record('projection', projectionStart, { messages: payload.messages.length });
  // Tool results' images (MCP): their bytes from the artifacts, for providers that take them.
  attachPayloadImages(payload, host.tools.artifactsDir);
  if (host.environment) {
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
          ...(host.maxOutputTokens ? { maxOutputTokens: host.maxOutputTokens } : {}),
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
