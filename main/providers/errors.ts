/** Why a provider request failed, in words a person can act on. */
export type ProviderErrorCode =
  | 'missing_key'
  | 'auth'
  | 'rate_limited'
  | 'server'
  | 'network'
  | 'bad_request'
  | 'not_found'
  | 'aborted'
  | 'bad_response';

/**
 * A provider failure. `retryable` failures before the first delta are retried; `partial` holds the text
 * streamed before a failure mid-stream, so the turn can keep it as an interrupted message.
 */
export class ProviderError extends Error {
  partial = '';

  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryable = false,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

type SdkError = {
  name?: string;
  status?: number;
  message?: string;
  headers?: Headers | Record<string, string>;
  error?: unknown;
};

function header(headers: SdkError['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  return (headers as Record<string, string>)[name];
}

/** The provider's own error text from an SDK error body, without the SDK's status prefix or a stack. */
function providerMessage(error: SdkError): string {
  const body = error.error as { error?: { message?: string }; message?: string } | undefined;
  return body?.error?.message ?? body?.message ?? error.message ?? 'unknown error';
}

/** Maps an SDK or network error to a ProviderError with a readable message naming the provider. */
export function toProviderError(error: unknown, provider: string, signal?: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = (error ?? {}) as SdkError;
  if (signal?.aborted || e.name === 'APIUserAbortError' || e.name === 'AbortError') {
    return new ProviderError('aborted', 'stopped by the user');
  }
  const status = e.status;
  const detail = providerMessage(e);
  if (status === undefined) {
    return new ProviderError('network', `${provider}: could not reach the server (${detail})`, true);
  }
  if (status === 401 || status === 403) {
    return new ProviderError(
      'auth',
      `${provider} rejected the API key (${status}): ${detail}`,
      false,
      status,
    );
  }
  if (status === 404) return new ProviderError('not_found', `${provider}: ${detail} (404)`, false, status);
  if (status === 429) {
    const retryAfter = Number(header(e.headers, 'retry-after'));
    return new ProviderError(
      'rate_limited',
      `${provider} is rate limiting requests (429): ${detail}`,
      true,
      status,
      Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
    );
  }
  if (status >= 500)
    return new ProviderError('server', `${provider} server error (${status}): ${detail}`, true, status);
  return new ProviderError(
    'bad_request',
    `${provider} rejected the request (${status}): ${detail}`,
    false,
    status,
  );
}

/**
 * SDK streams can end quietly when aborted or when the connection drops (an aborted `openai` stream ends
 * without an error, STACK.md): a stream without its final event is a failure, and keeps the partial text.
 */
export function assertComplete(
  finished: boolean,
  partial: string,
  provider: string,
  signal?: AbortSignal,
): void {
  let failure: ProviderError | undefined;
  if (signal?.aborted) failure = new ProviderError('aborted', 'stopped by the user');
  else if (!finished)
    failure = new ProviderError(
      'network',
      `${provider}: the connection closed before the response finished`,
      true,
    );
  if (failure) {
    failure.partial = partial;
    throw failure;
  }
}
