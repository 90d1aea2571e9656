import { createHash, randomUUID } from 'node:crypto';
import { ProviderError } from '../errors.js';
import type { CompletedMessage, ModelProvider, StreamEvent, StreamRequest } from '../types.js';
import { dropOptionalNulls, toFunctions, toHistory } from './history.js';
import { localModelHost, type LocalModelHost, type WorkerLauncher } from './host.js';
import type { FromWorker, GenerationStats, LocalModelSettings } from './protocol.js';

/** A reply's length when the host names none: a model caught in a loop stops here. */
const DEFAULT_MAX_TOKENS = 4096;

/** Calls a request may produce at most; each gets an id before the request is sent. */
const MAX_CALLS = 8;

/** The environment each user message was first sent with, per session key, so it re-renders the same. */
const environments = new Map<string, Map<string, string>>();

const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * A GGUF model run by node-llama-cpp in a separate process (see `host.ts`, `worker.ts`). Text, reasoning and
 * calls stream as the model writes them; calls are constrained by a grammar built from the tools' schemas, in the
 * model's own chat-template syntax. Usage is the runtime's counters: `inputTokens` the prompt tokens evaluated for
 * this request, `cacheReadTokens` those its session's kept KV cache already held.
 */
export class LocalProvider implements ModelProvider {
  readonly kind = 'local' as const;
  /** The last request's figures (tests, bench). */
  lastStats: GenerationStats | undefined;
  private readonly host: LocalModelHost;

  constructor(
    readonly settings: LocalModelSettings,
    options: { launcher?: WorkerLauncher; script?: string; temperature?: number } = {},
  ) {
    this.host = localModelHost(settings, options);
    this.temperature = options.temperature;
  }

  private readonly temperature: number | undefined;

  /** The process's id while it runs (a test kills it to prove a crash is survived). */
  get pid(): number | undefined {
    return this.host.pid;
  }

  async *stream(request: StreamRequest): AsyncIterable<StreamEvent> {
    if (request.signal?.aborted) throw new ProviderError('aborted', 'stopped by the user');
    const loaded = await this.host.ready();
    const messages = request.payload.messages;
    const key =
      request.cacheKey ??
      digest(JSON.stringify(messages.filter((m) => m.role === 'system' || m.role === 'user').slice(0, 2)));
    let remembered: Map<string, string> | undefined = environments.get(key);
    if (!remembered) environments.set(key, (remembered = new Map<string, string>()));
    const memory = remembered;
    const { history, sentEnvironment } = toHistory(request.payload, (index, text) =>
      memory.get(`${index}:${digest(text)}`),
    );
    if (sentEnvironment) {
      memory.set(`${sentEnvironment.userIndex}:${digest(sentEnvironment.text)}`, sentEnvironment.environment);
    }

    const inbox: FromWorker[] = [];
    let failure: ProviderError | undefined;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      wake?.();
      wake = undefined;
    };
    const callIds = Array.from({ length: MAX_CALLS }, () => `call_${randomUUID().slice(0, 12)}`);
    const id = this.host.generate(
      {
        key,
        history,
        functions: toFunctions(request.tools),
        callIds,
        maxTokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
        ...(this.temperature !== undefined ? { temperature: this.temperature } : {}),
      },
      (message) => {
        inbox.push(message);
        notify();
      },
      (error) => {
        failure = error;
        notify();
      },
    );
    const onAbort = (): void => {
      this.host.abort(id);
      notify();
    };
    request.signal?.addEventListener('abort', onAbort, { once: true });

    let partial = '';
    let partialReasoning = '';
    const fail = (error: ProviderError): never => {
      error.partial = partial;
      error.partialReasoning = partialReasoning;
      throw error;
    };
    try {
      for (;;) {
        // Stopping answers at once: the worker is told, and the partial text is the turn's.
        if (request.signal?.aborted) fail(new ProviderError('aborted', 'stopped by the user'));
        if (failure) fail(failure);
        const message = inbox.shift();
        if (!message) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        switch (message.type) {
          case 'text':
            partial += message.text;
            yield { type: 'text', text: message.text };
            break;
          case 'reasoning':
            partialReasoning += message.text;
            yield { type: 'reasoning', text: message.text };
            break;
          case 'call':
            yield {
              type: 'tool_call',
              index: message.index,
              id: callIds[message.index] ?? `local_${id}_${message.index}`,
              name: message.name,
            };
            break;
          case 'arguments':
            yield { type: 'tool_arguments', index: message.index, text: message.text };
            break;
          case 'failed':
            fail(
              new ProviderError(
                message.tooLong ? 'context_too_long' : 'server',
                `local model (${loaded.chatWrapper}): ${message.message}`,
              ),
            );
            break;
          case 'done': {
            this.lastStats = message.stats;
            const completed: CompletedMessage = {
              content: message.text,
              toolCalls: message.calls.map((call) => ({
                ...call,
                arguments: dropOptionalNulls(
                  call.arguments,
                  request.tools.find((tool) => tool.name === call.name)?.parameters,
                ),
              })),
              ...(message.reasoning
                ? { reasoning: [{ type: 'reasoning_text', text: message.reasoning }] }
                : {}),
              stopReason: message.stopReason,
              usage: {
                inputTokens: message.stats.evaluatedTokens,
                outputTokens: message.stats.outputTokens,
                cacheReadTokens: message.stats.reusedTokens,
              },
            };
            yield { type: 'done', message: completed };
            return;
          }
          default:
            break;
        }
      }
    } finally {
      request.signal?.removeEventListener('abort', onAbort);
    }
  }
}
