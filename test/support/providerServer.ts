import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ENVIRONMENT_OPENING } from '../../main/core/prompts/environment.js';
import { redactedData, signThinking, thinkingEnabled, validateThinking } from './providerThinking.js';
import { validateAnthropicRequest, validateOpenAIRequest } from './providerValidation.js';
import { responsesEvents, validateResponsesRequest } from './responsesServer.js';
import { validateAnthropicMedia, validateChatMedia, validateResponsesMedia } from './providerMedia.js';

export { validateAnthropicRequest, validateOpenAIRequest } from './providerValidation.js';

/**
 * A scripted model server on 127.0.0.1 that speaks the wire formats Keel uses: OpenAI chat completions
 * (`POST /v1/chat/completions`, also what Ollama, LM Studio, llama.cpp and vLLM serve), OpenAI's Responses API
 * (`POST /v1/responses`) and Anthropic messages (`POST /v1/messages`), all streaming over SSE. It rejects what
 * the real providers reject (a tool call without its result, a result without its call, a missing key, a
 * thinking block changed or dropped before a tool result, reasoning that cannot be read back) with their
 * status codes and error shapes, so a malformed payload fails a test the way it would fail in production.
 */

/** One scripted tool call; `arguments` may be given as an object for convenience. */
export type ScriptedToolCall = { id?: string; name: string; arguments: string | Record<string, unknown> };

/** What the server does with one request. */
export type ScriptStep =
  | {
      kind: 'reply';
      /** Text deltas, streamed in order (a string is split into words). */
      text?: string | string[];
      toolCalls?: ScriptedToolCall[];
      /**
       * Reasoning streamed before the text: Anthropic thinking (only when the request turns thinking on;
       * signed), an OpenAI Responses reasoning summary (only when it asks for an effort), or `reasoning_content`
       * deltas on chat completions. A string is split into words.
       */
      thinking?: string | string[];
      /** Anthropic only: this many redacted_thinking blocks after the thinking block (when thinking is on). */
      redactedThinking?: number;
      usage?: {
        inputTokens?: number;
        outputTokens?: number;
        cacheReadTokens?: number;
        cacheWriteTokens?: number;
        reasoningTokens?: number;
      };
      /**
       * Anthropic: the counts message_start carries, which the API calls provisional (message_delta then gives
       * the final `usage`, cumulative, input and cache counts included). Unset, message_start has the final ones.
       */
      provisionalUsage?: { inputTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number };
      /** Chat completions: no usage chunk even when `stream_options.include_usage` asks (some local servers). */
      omitUsage?: boolean;
      /** Anthropic: message_delta's usage as older API versions sent it (only `output_tokens`). */
      legacyDeltaUsage?: boolean;
      /**
       * The provider's own stop reason instead of the ordinary one: Anthropic `stop_reason` (`refusal`,
       * `max_tokens`, `pause_turn`), chat-completions `finish_reason` (`length`, `content_filter`), or the
       * Responses API's incomplete reason (`max_output_tokens`, `content_filter`: the response ends with
       * `response.incomplete`).
       */
      stopReason?: string;
      /** Anthropic: message_delta's `stop_details` (a refusal's `{type, category, explanation}`). */
      stopDetails?: Record<string, unknown>;
      /** OpenAI formats: a refusal streamed as its own part (chat `delta.refusal`, a Responses `refusal` part). */
      refusal?: string;
      /** Pause between deltas, to give a test time to stop the stream. */
      delayMs?: number;
      /** Destroy the connection after this many deltas (a failure mid-stream). */
      dropAfter?: number;
    }
  /** An HTTP error in the provider's shape; `errorType` / `code` replace the ones the status implies. */
  | {
      kind: 'fail';
      status: number;
      message?: string;
      retryAfterSeconds?: number;
      errorType?: string;
      code?: string;
    }
  /**
   * A 200 stream that carries an error event in the provider's own shape, after `text` (if any) streamed:
   * Anthropic `event: error` `{type: 'error', error: {type, message}}`; Responses `event: error` with `code` and
   * `message` at its top level as the API reference documents it (`shape: 'nested'`: inside `error`, as seen
   * for quota errors; `shape: 'failed'`: a `response.failed` event with `response.error`); chat completions a
   * chunk `{error: {message, type, code}}` (`shape: 'string'`: `{error: "message"}`, as Ollama sends it).
   */
  | {
      kind: 'streamError';
      errorType?: string;
      code?: string;
      message: string;
      text?: string;
      shape?: 'nested' | 'failed' | 'string';
    }
  /** Destroy the socket before any byte is written (connection reset). */
  | { kind: 'reset' }
  /** Send headers, then nothing until the client gives up. */
  | { kind: 'hang' };

export type WireFormat = 'openai' | 'anthropic' | 'responses';

export type RecordedRequest = {
  format: WireFormat;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** The raw body text, for byte-level prefix checks. */
  raw: string;
  /** Why the server rejected it, when it did. */
  rejected?: string;
};

export type ProviderServerOptions = {
  /** When set, requests must carry it (Authorization: Bearer for OpenAI, x-api-key for Anthropic). */
  apiKey?: string;
  /** Used when the queue is empty; the default answers with a short text. */
  respond?: (request: RecordedRequest) => ScriptStep;
  /**
   * The models `GET /v1/models` lists (Anthropic's shape when the request carries `anthropic-version`, paged
   * by `limit` / `after_id`; OpenAI's otherwise). Unset, the list is `scripted-model` and `GET /v1/models/{id}`
   * answers for any id, as a permissive proxy would; set, only these are served and any other id is a 404 in
   * the provider's own words. Changeable while running (`server.servedModels = …`).
   */
  servedModels?: readonly ServedModelSpec[];
};

/** A model the scripted server serves, with the limits Anthropic's endpoint states (`max_input_tokens`, `max_tokens`). */
export type ServedModelSpec = { id: string; maxInputTokens?: number; maxTokens?: number };

/** One request to a models endpoint, as received. */
export type ModelsRequest = { path: string; format: WireFormat; query: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Chat-completions messages without the environment block Keel sends as the last user message of each
 * turn request, so a scripted model can answer the conversation itself ("was the user the last to speak?").
 */
export function withoutEnvironment<M extends { role: string; content?: unknown }>(
  messages: readonly M[],
): M[] {
  const last = messages.at(-1);
  const isEnvironment =
    last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith(ENVIRONMENT_OPENING);
  return isEnvironment ? messages.slice(0, -1) : [...messages];
}

function splitText(text: string | string[] | undefined): string[] {
  if (text === undefined) return [];
  if (Array.isArray(text)) return text;
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A scripted provider server; `enqueue` steps, point a client at `openaiBaseUrl` or `anthropicBaseUrl`. */
export class ProviderServer {
  readonly requests: RecordedRequest[] = [];
  /** Every `GET /v1/models[/{id}]` received, in order. */
  readonly modelRequests: ModelsRequest[] = [];
  /** See ProviderServerOptions.servedModels. */
  servedModels: readonly ServedModelSpec[] | undefined;
  private readonly queue: ScriptStep[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private port = 0;
  private callCounter = 0;

  constructor(private readonly options: ProviderServerOptions = {}) {
    this.servedModels = options.servedModels;
  }

  /** Starts listening on an ephemeral loopback port. */
  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Base URL for OpenAI-style clients (they append /chat/completions). */
  get openaiBaseUrl(): string {
    return `${this.url}/v1`;
  }

  /** Base URL for Anthropic clients (they append /v1/messages). */
  get anthropicBaseUrl(): string {
    return this.url;
  }

  /** Queues steps; each request takes the next one. */
  enqueue(...steps: ScriptStep[]): this {
    this.queue.push(...steps);
    return this;
  }

  /** Steps not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  /** Drops the steps not yet taken (a failed test's), so the next test's requests take its own. */
  discardPending(): void {
    this.queue.length = 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '').split('?')[0];
    const routes: Record<string, WireFormat> = {
      '/v1/chat/completions': 'openai',
      '/v1/messages': 'anthropic',
      '/v1/responses': 'responses',
    };
    const format: WireFormat | undefined = req.method === 'POST' ? routes[path ?? ''] : undefined;
    if (!format) {
      if (req.method === 'GET' && (path === '/v1/models' || path?.startsWith('/v1/models/'))) {
        this.answerModels(req, path, res);
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Unknown route ${req.method} ${path}` } }));
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = { format, headers: req.headers, body, raw };
    this.requests.push(recorded);

    const authError = this.checkKey(format, req);
    if (authError) {
      recorded.rejected = authError;
      this.sendError(res, format, 401, authError);
      return;
    }
    const invalid =
      format === 'openai'
        ? (validateOpenAIRequest(body) ?? validateChatMedia(body as Json))
        : format === 'responses'
          ? (validateResponsesRequest(body) ?? validateResponsesMedia(body as Json))
          : (validateAnthropicRequest(body) ??
            validateAnthropicMedia(body as Json) ??
            validateThinking(body as Json, (body as Json)['messages'] as unknown[]));
    if (invalid) {
      recorded.rejected = invalid;
      this.sendError(res, format, 400, invalid);
      return;
    }
    const step = this.queue.shift() ?? this.options.respond?.(recorded) ?? { kind: 'reply', text: 'ok' };
    await this.perform(step, format, body as Json, req, res);
  }

  /** `GET /v1/models` and `GET /v1/models/{id}` in the format the client speaks, with its auth and 404s. */
  private answerModels(req: IncomingMessage, path: string, res: ServerResponse): void {
    const format: WireFormat = req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai';
    const query = new URL(req.url ?? '', 'http://x').searchParams;
    this.modelRequests.push({ path, format, query: query.toString() });
    const authError = this.checkKey(format, req);
    if (authError) {
      this.sendError(res, format, 401, authError);
      return;
    }
    const served = this.servedModels ?? [{ id: 'scripted-model' }];
    const describe = (model: ServedModelSpec) =>
      format === 'anthropic'
        ? {
            type: 'model',
            id: model.id,
            display_name: model.id,
            created_at: '2026-01-01T00:00:00Z',
            max_input_tokens: model.maxInputTokens ?? null,
            max_tokens: model.maxTokens ?? null,
          }
        : { id: model.id, object: 'model', created: 1_767_225_600, owned_by: 'scripted' };
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path !== '/v1/models') {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      const model = this.servedModels === undefined ? { id } : served.find((entry) => entry.id === id);
      if (model) return send(describe(model));
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          format === 'anthropic'
            ? { type: 'error', error: { type: 'not_found_error', message: `model: ${id}` } }
            : {
                error: {
                  message: `The model \`${id}\` does not exist or you do not have access to it.`,
                  type: 'invalid_request_error',
                  param: null,
                  code: 'model_not_found',
                },
              },
        ),
      );
      return;
    }
    if (format === 'openai') return send({ object: 'list', data: served.map(describe) });
    // Anthropic pages the list: `limit` (default 20, 1..1000) from after `after_id`.
    const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 20) || 20));
    const after = query.get('after_id');
    const start = after === null ? 0 : served.findIndex((model) => model.id === after) + 1;
    const page = served.slice(start, start + limit);
    send({
      data: page.map(describe),
      has_more: start + limit < served.length,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
    });
  }

  private checkKey(format: WireFormat, req: IncomingMessage): string | null {
    const expected = this.options.apiKey;
    if (expected === undefined) return null;
    // Anthropic takes the key as x-api-key or, as its SDK (1.x) sends it, as a bearer token.
    const bearer = String(req.headers['authorization'] ?? '').replace(/^Bearer\s+/i, '');
    const given = format !== 'anthropic' ? bearer : String(req.headers['x-api-key'] ?? '') || bearer;
    if (given === expected) return null;
    return format !== 'anthropic' ? 'Incorrect API key provided.' : 'invalid x-api-key';
  }

  private sendError(
    res: ServerResponse,
    format: WireFormat,
    status: number,
    message: string,
    retryAfter?: number,
    given: { type?: string; code?: string } = {},
  ): void {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    res.writeHead(status, headers);
    const type =
      given.type ??
      (status === 401
        ? 'authentication_error'
        : status === 429
          ? 'rate_limit_error'
          : status >= 500
            ? 'api_error'
            : 'invalid_request_error');
    res.end(
      JSON.stringify(
        format !== 'anthropic'
          ? { error: { message, type, param: null, code: given.code ?? null } }
          : { type: 'error', error: { type, message } },
      ),
    );
  }

  private async perform(
    step: ScriptStep,
    format: WireFormat,
    body: Json,
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    if (step.kind === 'fail') {
      this.sendError(
        res,
        format,
        step.status,
        step.message ?? `scripted failure ${step.status}`,
        step.retryAfterSeconds,
        { type: step.errorType, code: step.code },
      );
      return;
    }
    if (step.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    if (step.kind === 'hang') return;
    if (step.kind === 'streamError') {
      for (const event of this.streamErrorEvents(step, format, body)) res.write(event);
      res.end();
      return;
    }
    const events =
      format === 'openai'
        ? this.openaiEvents(step, body)
        : format === 'responses'
          ? this.responsesReply(step, body)
          : this.anthropicEvents(step, body);
    let deltas = 0;
    for (const event of events) {
      if (res.destroyed) return;
      if (event.delta) {
        if (step.dropAfter !== undefined && deltas >= step.dropAfter) {
          // Let what was written reach the client first: the failure is a drop *after* those deltas.
          await new Promise<void>((resolve) => res.write('', () => resolve()));
          await sleep(20);
          req.socket.destroy();
          return;
        }
        deltas++;
        if (step.delayMs) await sleep(step.delayMs);
      }
      res.write(event.data);
    }
    res.end();
  }

  private openaiEvents(
    step: Extract<ScriptStep, { kind: 'reply' }>,
    body: Json,
  ): { data: string; delta: boolean }[] {
    const id = `chatcmpl-${++this.callCounter}`;
    const model = String(body['model']);
    const chunk = (delta: Json, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1700000000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const out: { data: string; delta: boolean }[] = [
      { data: chunk({ role: 'assistant', content: '' }), delta: false },
    ];
    for (const piece of splitText(step.thinking)) {
      out.push({ data: chunk({ reasoning_content: piece }), delta: true });
    }
    for (const piece of splitText(step.text)) out.push({ data: chunk({ content: piece }), delta: true });
    for (const piece of splitText(step.refusal)) out.push({ data: chunk({ refusal: piece }), delta: true });
    (step.toolCalls ?? []).forEach((call, index) => {
      const callId = call.id ?? `call_${this.callCounter}_${index}`;
      out.push({
        data: chunk({
          tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
        delta: true,
      });
      const args = argumentsText(call);
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        if (part)
          out.push({ data: chunk({ tool_calls: [{ index, function: { arguments: part } }] }), delta: true });
      }
    });
    out.push({
      data: chunk({}, step.stopReason ?? (step.toolCalls?.length ? 'tool_calls' : 'stop')),
      delta: false,
    });
    const streamOptions = body['stream_options'];
    if (isObject(streamOptions) && streamOptions['include_usage'] === true && step.omitUsage !== true) {
      const usage = step.usage ?? {};
      out.push({
        data: `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created: 1700000000,
          model,
          choices: [],
          usage: {
            prompt_tokens: usage.inputTokens ?? 10,
            completion_tokens: usage.outputTokens ?? 5,
            total_tokens: (usage.inputTokens ?? 10) + (usage.outputTokens ?? 5),
            prompt_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
            ...(usage.reasoningTokens !== undefined
              ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }
              : {}),
          },
        })}\n\n`,
        delta: false,
      });
    }
    out.push({ data: 'data: [DONE]\n\n', delta: false });
    return out;
  }

  private responsesReply(
    step: Extract<ScriptStep, { kind: 'reply' }>,
    body: Json,
  ): { data: string; delta: boolean }[] {
    const number = ++this.callCounter;
    const usage = step.usage ?? {};
    return responsesEvents(
      {
        text: splitText(step.text),
        refusal: splitText(step.refusal),
        ...(step.stopReason ? { incomplete: step.stopReason } : {}),
        reasoning: splitText(step.thinking),
        toolCalls: (step.toolCalls ?? []).map((call, index) => ({
          id: call.id ?? `call_${number}_${index}`,
          name: call.name,
          arguments: argumentsText(call),
        })),
        usage: {
          inputTokens: usage.inputTokens ?? 10,
          outputTokens: usage.outputTokens ?? 5,
          cacheReadTokens: usage.cacheReadTokens ?? 0,
          reasoningTokens: usage.reasoningTokens ?? 0,
        },
      },
      body,
      number,
    );
  }

  private streamErrorEvents(
    step: Extract<ScriptStep, { kind: 'streamError' }>,
    format: WireFormat,
    body: Json,
  ): string[] {
    const text = splitText(step.text);
    const error = {
      type: step.errorType ?? 'api_error',
      message: step.message,
      ...(format !== 'anthropic' ? { code: step.code ?? null, param: null } : {}),
    };
    if (format === 'anthropic') {
      const sse = (type: string, data: Json) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      const started = this.anthropicEvents({ kind: 'reply', text }, body).slice(
        0,
        text.length > 0 ? 3 + text.length : 2,
      );
      return [...started.map((event) => event.data), sse('error', { error })];
    }
    if (format === 'openai') {
      const started = this.openaiEvents({ kind: 'reply', text }, body).slice(0, 1 + text.length);
      const payload = step.shape === 'string' ? { error: step.message } : { error };
      return [...started.map((event) => event.data), `data: ${JSON.stringify(payload)}\n\n`];
    }
    const started = this.responsesReply({ kind: 'reply', text }, body);
    // Up to the last text delta: what streamed before the failure.
    const cut = text.length > 0 ? started.findLastIndex((event) => event.delta) + 1 : 2;
    const sequence = cut;
    const payload =
      step.shape === 'failed'
        ? {
            type: 'response.failed',
            sequence_number: sequence,
            response: {
              id: `resp_${this.callCounter}`,
              object: 'response',
              status: 'failed',
              output: [],
              error: { code: step.code ?? 'server_error', message: step.message },
            },
          }
        : step.shape === 'nested'
          ? { type: 'error', error, sequence_number: sequence }
          : {
              type: 'error',
              code: step.code ?? null,
              message: step.message,
              param: null,
              sequence_number: sequence,
            };
    const name = step.shape === 'failed' ? 'response.failed' : 'error';
    return [
      ...started.slice(0, cut).map((event) => event.data),
      `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`,
    ];
  }

  private anthropicEvents(
    step: Extract<ScriptStep, { kind: 'reply' }>,
    body: Json,
  ): { data: string; delta: boolean }[] {
    const sse = (type: string, data: Json) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const usage = step.usage ?? {};
    const out: { data: string; delta: boolean }[] = [
      {
        data: sse('message_start', {
          message: {
            id: `msg_${++this.callCounter}`,
            type: 'message',
            role: 'assistant',
            content: [],
            model: String(body['model']),
            stop_reason: null,
            stop_sequence: null,
            usage: {
              input_tokens: step.provisionalUsage?.inputTokens ?? usage.inputTokens ?? 10,
              output_tokens: 1,
              cache_creation_input_tokens:
                step.provisionalUsage?.cacheWriteTokens ?? usage.cacheWriteTokens ?? 0,
              cache_read_input_tokens: step.provisionalUsage?.cacheReadTokens ?? usage.cacheReadTokens ?? 0,
            },
          },
        }),
        delta: false,
      },
      { data: sse('ping', {}), delta: false },
    ];
    let index = 0;
    const response = `msg_${this.callCounter}`;
    const thinking = thinkingEnabled(body) ? splitText(step.thinking) : [];
    const redacted = thinkingEnabled(body) ? (step.redactedThinking ?? 0) : 0;
    const blocks = (thinking.length > 0 ? 1 : 0) + redacted;
    if (thinking.length > 0) {
      out.push({
        data: sse('content_block_start', {
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        }),
        delta: false,
      });
      for (const piece of thinking) {
        out.push({
          data: sse('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }),
          delta: true,
        });
      }
      const signature = signThinking(response, 0, blocks, thinking.join(''));
      out.push({
        data: sse('content_block_delta', { index, delta: { type: 'signature_delta', signature } }),
        delta: false,
      });
      out.push({ data: sse('content_block_stop', { index }), delta: false });
      index++;
    }
    for (let r = 0; r < redacted; r++) {
      const data = redactedData(response, blocks - redacted + r, blocks);
      out.push({
        data: sse('content_block_start', { index, content_block: { type: 'redacted_thinking', data } }),
        delta: false,
      });
      out.push({ data: sse('content_block_stop', { index }), delta: false });
      index++;
    }
    const pieces = splitText(step.text);
    if (pieces.length > 0) {
      out.push({
        data: sse('content_block_start', { index, content_block: { type: 'text', text: '' } }),
        delta: false,
      });
      for (const piece of pieces) {
        out.push({
          data: sse('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }),
          delta: true,
        });
      }
      out.push({ data: sse('content_block_stop', { index }), delta: false });
      index++;
    }
    for (const call of step.toolCalls ?? []) {
      const id = call.id ?? `toolu_${this.callCounter}_${index}`;
      out.push({
        data: sse('content_block_start', {
          index,
          content_block: { type: 'tool_use', id, name: call.name, input: {} },
        }),
        delta: true,
      });
      const args = argumentsText(call);
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        if (part) {
          out.push({
            data: sse('content_block_delta', {
              index,
              delta: { type: 'input_json_delta', partial_json: part },
            }),
            delta: true,
          });
        }
      }
      out.push({ data: sse('content_block_stop', { index }), delta: false });
      index++;
    }
    out.push({
      data: sse('message_delta', {
        delta: {
          stop_reason: step.stopReason ?? (step.toolCalls?.length ? 'tool_use' : 'end_turn'),
          stop_sequence: null,
          ...(step.stopDetails ? { stop_details: step.stopDetails } : {}),
        },
        usage: {
          // The final, cumulative counts (the API's current shape); older versions sent output_tokens alone.
          ...(step.legacyDeltaUsage
            ? {}
            : {
                input_tokens: usage.inputTokens ?? 10,
                cache_creation_input_tokens: usage.cacheWriteTokens ?? 0,
                cache_read_input_tokens: usage.cacheReadTokens ?? 0,
              }),
          output_tokens: usage.outputTokens ?? 5,
          ...(usage.reasoningTokens !== undefined
            ? { output_tokens_details: { thinking_tokens: usage.reasoningTokens } }
            : {}),
        },
      }),
      delta: false,
    });
    out.push({ data: sse('message_stop', {}), delta: false });
    return out;
  }
}
