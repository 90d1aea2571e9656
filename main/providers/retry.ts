import { ProviderError } from './errors.js';
import type { StreamEvent } from './types.js';

export type RetryOptions = {
  /** Attempts in all, the first included. */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  signal?: AbortSignal;
  /** Injected for tests; defaults to a real timer that wakes on abort. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
};

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ProviderError('aborted', 'stopped by the user'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ProviderError('aborted', 'stopped by the user'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The delay before attempt `attempt + 1`: the server's retry-after if given, else capped exponential backoff. */
export function backoffDelay(attempt: number, error: ProviderError, base = 500, cap = 20_000): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, 60_000);
  return Math.min(cap, base * 2 ** (attempt - 1));
}

/**
 * Retries a stream that fails transiently (429, 5xx, connection reset) before its first delta, yielding a
 * `retry` event per attempt so the trace shows each one. A failure after a delta is never retried (the text
 * already reached the user): it is rethrown with the partial text for the turn to keep.
 */
export async function* withRetries(
  start: () => AsyncIterable<StreamEvent>,
  options: RetryOptions = {},
): AsyncGenerator<StreamEvent> {
  const maxAttempts = options.maxAttempts ?? 4;
  const sleep = options.sleep ?? abortableSleep;
  for (let attempt = 1; ; attempt++) {
    let delivered = false;
    let partial = '';
    let partialReasoning = '';
    try {
      for await (const event of start()) {
        if (event.type === 'text') partial += event.text;
        if (event.type === 'reasoning') partialReasoning += event.text;
        if (event.type !== 'retry') delivered = true;
        yield event;
      }
      return;
    } catch (error) {
      const failure =
        error instanceof ProviderError ? error : new ProviderError('network', String(error), true);
      failure.partial = partial;
      failure.partialReasoning ||= partialReasoning;
      if (delivered || !failure.retryable || attempt >= maxAttempts || options.signal?.aborted) throw failure;
      const delayMs = backoffDelay(attempt, failure, options.baseDelayMs, options.maxDelayMs);
      yield { type: 'retry', attempt: attempt + 1, delayMs, reason: failure.message };
      await sleep(delayMs, options.signal);
    }
  }
}
