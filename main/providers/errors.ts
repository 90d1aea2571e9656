import { findModel, SUGGESTED_MODEL, type ModelInfo } from './catalogue.js';

/** Why a provider request failed, in words a person can act on. */
export type ProviderErrorCode =
  | 'missing_key'
  | 'auth'
  | 'rate_limited'
  | 'quota'
  | 'context_too_long'
  | 'server'
  | 'network'
  | 'bad_request'
  | 'not_found'
  | 'aborted'
  | 'bad_response';

/**
 * A provider failure. `retryable` failures before the first delta are retried; `partial` holds the text
 * (`partialReasoning` the reasoning) streamed before a failure mid-stream, so the turn can keep it as an
 * interrupted message.
 */
export class ProviderError extends Error {
  partial = '';
  /** Reasoning text streamed before the failure: kept in the `interrupted` event, never replayed. */
  partialReasoning = '';

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
export function providerMessage(error: unknown): string {
  const e = (error ?? {}) as SdkError;
  // Ollama and other local servers send `{"error": "text"}`.
  if (typeof e.error === 'string' && e.error !== '') return e.error;
  const body = e.error as { error?: { message?: string }; message?: string } | undefined;
  return body?.error?.message ?? body?.message ?? e.message ?? 'unknown error';
}

/**
 * The model a 404 says is unknown: Anthropic answers `not_found_error` "model: ID", OpenAI
 * `model_not_found` "The model `ID` does not exist…", Ollama "model \"ID\" not found…". Undefined for
 * any other 404 (a wrong base URL, a missing route).
 */
function missingModel(error: SdkError, detail: string): string | undefined {
  const body = error.error as { error?: { type?: string }; type?: string } | undefined;
  const anthropic = /^model: (\S+)$/.exec(detail);
  if (anthropic && (body?.error?.type ?? body?.type) === 'not_found_error') return anthropic[1];
  const openai = /^The model `([^`]+)` does not exist/.exec(detail);
  if (openai) return openai[1];
  const ollama = /^model "([^"]+)" not found/.exec(detail);
  return ollama?.[1];
}

/**
 * Why a pinned model's requests fail, and how to move the session on: sessions keep their model, so a
 * retired model fails every turn until the session is switched to another one.
 */
function modelNotServed(provider: string, model: string, detail: string): string {
  const known = findModel(model);
  const kind =
    known?.provider ??
    (provider === 'Anthropic' ? 'anthropic' : provider === 'OpenAI' ? 'openai' : undefined);
  const target = kind ? `${kind}:${suggestedSwitch(kind, known) ?? 'MODEL'}` : 'PROVIDER:MODEL';
  // The 404 is the provider's word; the catalogue only adds what it knows of the model's end (no clock needed).
  const why =
    known?.status === 'retired'
      ? `${provider} no longer serves ${model}: it was retired${known.retiresOn ? ` on ${known.retiresOn}` : ''}`
      : known?.retiresOn !== undefined
        ? `${provider} no longer serves ${model} (404: ${detail}); its retirement was announced for ${known.retiresOn}`
        : `${provider} does not serve the model ${model} (404: ${detail}); it may be retired, misspelt, or not available to this key`;
  return (
    `${why}. This session is pinned to it, so every request fails until you switch the session's model: ` +
    `keel model SESSION ${target}, or the model switch in the app.`
  );
}

/** The model to suggest instead: the documented replacement when Keel knows it, else the suggested one. */
function suggestedSwitch(kind: ModelInfo['provider'], failed: ModelInfo | undefined): string | undefined {
  const replacement = failed?.replacement ? findModel(failed.replacement) : undefined;
  if (replacement && replacement.status !== 'retired') return replacement.id;
  return SUGGESTED_MODEL[kind] === failed?.id ? undefined : SUGGESTED_MODEL[kind];
}

/**
 * Maps an SDK or network error to a ProviderError with a readable message naming the provider. A 404 for
 * an unknown or retired model names the model and says how to switch the session.
 */
export function toProviderError(error: unknown, provider: string, signal?: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = (error ?? {}) as SdkError;
  if (signal?.aborted || e.name === 'APIUserAbortError' || e.name === 'AbortError') {
    return new ProviderError('aborted', 'stopped by the user');
  }
  const detail = providerMessage(e);
  // An error event inside a 200 stream: the SDKs throw it with no status but with the body the server sent
  // (a connection failure has none). Its type or code says what it is.
  if (e.status === undefined && e.error !== undefined && e.error !== null) {
    const kind = streamErrorKind(e.error);
    return classifyStreamError(provider, kind?.type, kind?.code, detail);
  }
  const status = e.status;
  if (status === undefined) {
    return new ProviderError('network', `${provider}: could not reach the server (${detail})`, true);
  }
  const kind = streamErrorKind(e.error);
  if (kind && isQuota(kind.type, kind.code)) return quotaError(provider, detail, status);
  if (kind && isContextTooLong(kind.code, detail)) return contextTooLong(provider, detail, status);
  if (status === 401 || status === 403) {
    return new ProviderError(
      'auth',
      `${provider} rejected the API key (${status}): ${detail}`,
      false,
      status,
    );
  }
  if (status === 404) {
    const missing = missingModel(e, detail);
    const message = missing ? modelNotServed(provider, missing, detail) : `${provider}: ${detail} (404)`;
    return new ProviderError('not_found', message, false, status);
  }
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

/** The type and code of a provider's error body (`{error: {type, code}}`, `{type, code}`), when it has one. */
function streamErrorKind(body: unknown): { type?: string; code?: string } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const outer = body as { type?: unknown; code?: unknown; error?: unknown };
  const inner = (typeof outer.error === 'object' && outer.error !== null ? outer.error : outer) as {
    type?: unknown;
    code?: unknown;
  };
  const type = typeof inner.type === 'string' && inner.type !== 'error' ? inner.type : undefined;
  const code = typeof inner.code === 'string' ? inner.code : undefined;
  return type || code ? { ...(type ? { type } : {}), ...(code ? { code } : {}) } : undefined;
}

const QUOTA = new Set([
  'insufficient_quota',
  'billing_error',
  'billing_hard_limit_reached',
  'quota_exceeded',
]);
const isQuota = (type?: string, code?: string) => QUOTA.has(code ?? '') || QUOTA.has(type ?? '');
const isContextTooLong = (code?: string, detail = '') =>
  code === 'context_length_exceeded' || /prompt is too long|maximum context length/i.test(detail);

/**
 * The HTTP status each provider's error type or code stands for (Anthropic's error types, OpenAI's error codes
 * and types), so an error sent inside a stream is judged as its HTTP twin would be.
 */
const HTTP_TWIN: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  invalid_prompt: 400,
  authentication_error: 401,
  invalid_api_key: 401,
  permission_error: 403,
  not_found_error: 404,
  model_not_found: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  tokens: 429,
  api_error: 500,
  server_error: 500,
  internal_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
  server_is_overloaded: 529,
  slow_down: 529,
};

/**
 * A provider's in-stream error (Anthropic's `error` event, a Responses `error` or `response.failed` event, a
 * chat-completions chunk with `error`) as the ProviderError its HTTP twin gives: an overloaded or rate-limited
 * server is retried, an exhausted quota, an invalid request or a context too long is not, and each is said in
 * the provider's own words.
 */
export function classifyStreamError(
  provider: string,
  type: string | undefined,
  code: string | undefined,
  detail: string,
): ProviderError {
  if (isQuota(type, code)) return quotaError(provider, detail);
  if (isContextTooLong(code, detail)) return contextTooLong(provider, detail);
  const status = HTTP_TWIN[code ?? ''] ?? HTTP_TWIN[type ?? ''];
  const named = code ?? type ?? 'error';
  if (status === undefined || status >= 500) {
    const overloaded = status === 529;
    return new ProviderError(
      'server',
      `${provider} ${overloaded ? 'is overloaded' : 'reported a server error'} during the response (${named}): ${detail}`,
      true,
      status,
    );
  }
  if (status === 429)
    return new ProviderError(
      'rate_limited',
      `${provider} is rate limiting requests (${named}): ${detail}`,
      true,
      status,
    );
  if (status === 401 || status === 403)
    return new ProviderError('auth', `${provider} rejected the API key (${named}): ${detail}`, false, status);
  if (status === 404)
    return new ProviderError('not_found', `${provider}: ${detail} (${named})`, false, status);
  return new ProviderError(
    'bad_request',
    `${provider} rejected the request (${named}): ${detail}`,
    false,
    status,
  );
}

function quotaError(provider: string, detail: string, status?: number): ProviderError {
  return new ProviderError(
    'quota',
    `${provider}: the account's quota or credit is used up, so retrying will not help (${detail}). ` +
      `Add credit or raise the limit in the provider's console, or switch the session's model (keel model).`,
    false,
    status,
  );
}

function contextTooLong(provider: string, detail: string, status?: number): ProviderError {
  return new ProviderError(
    'context_too_long',
    `${provider}: the request is longer than the model's context window (${detail}). ` +
      `Compact the session (keel compact) or switch to a model with a larger window.`,
    false,
    status,
  );
}
