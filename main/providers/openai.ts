import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ReasoningPart } from '../common/events.js';
import type { Payload, PayloadMessage } from '../common/payload.js';
import { withImageNotes } from './toolImages.js';
import { chatUserContent } from './attachments.js';
import { assertComplete, ProviderError, toProviderError } from './errors.js';
import { openaiClient, lazyClient } from './sdk.js';
import { effectiveEffort } from './reasoning.js';
import type { CompletedMessage, ModelProvider, StreamEvent, StreamRequest, ToolSpec } from './types.js';

/** Options of toOpenAIRequest. */
export type ChatRequestOptions = {
  /**
   * Send the logged `reasoning_content` back on assistant messages that made tool calls: DeepSeek's thinking
   * mode requires it there (and ignores it elsewhere); other servers are not sent reasoning at all.
   */
  replayToolReasoning?: boolean;
};

/** The reasoning text an OpenAI-compatible server streamed for a message, joined. */
function reasoningText(message: PayloadMessage): string {
  return (message.reasoning ?? [])
    .filter(
      (part): part is Extract<ReasoningPart, { type: 'reasoning_text' }> => part.type === 'reasoning_text',
    )
    .map((part) => part.text)
    .join('');
}

/**
 * True for DeepSeek's API, whose thinking-mode guide documents that an assistant turn with tool calls must
 * carry its `reasoning_content` in every later request (a 400 otherwise).
 */
export function needsToolReasoning(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return false;
  try {
    return new URL(baseUrl).hostname === 'api.deepseek.com';
  } catch {
    return false;
  }
}

/**
 * Translates a provider-neutral payload to chat-completions messages and tools, the environment block as
 * a last user message. Pure and byte-stable.
 */
export function toOpenAIRequest(
  payload: Payload,
  tools: readonly ToolSpec[],
  options: ChatRequestOptions = {},
) {
  const messages: ChatCompletionMessageParam[] = payload.messages.map(
    (message): ChatCompletionMessageParam => {
      switch (message.role) {
        case 'system':
          return { role: 'system', content: message.content };
        case 'user':
          return message.attachments?.length
            ? { role: 'user', content: chatUserContent(message.content, message.attachments) }
            : { role: 'user', content: message.content };
        case 'tool':
          // Chat Completions tool messages are text only: an image is told, not shown.
          return {
            role: 'tool',
            tool_call_id: message.toolCallId ?? '',
            content: withImageNotes(message.content, message.images, { unsupported: true }),
          };
        case 'assistant':
          if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
          {
            const reasoning = options.replayToolReasoning ? reasoningText(message) : '';
            return {
              role: 'assistant',
              content: message.content || null,
              // Not a field of the SDK's type: DeepSeek's extension, sent only to DeepSeek.
              ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            };
          }
      }
    },
  );
  // Volatile per request, so after everything that is cached: a user message of its own, last.
  if (payload.environment !== undefined) messages.push({ role: 'user', content: payload.environment });
  const openaiTools: ChatCompletionTool[] = tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return { messages, tools: openaiTools };
}

export type OpenAIOptions = {
  kind: 'openai' | 'openai-compatible';
  apiKey?: string;
  baseUrl?: string;
};

/** A chat-completions delta with the reasoning fields local servers add (not in the SDK's types). */
type ReasoningDelta = { reasoning_content?: string | null; reasoning?: string | null };

/**
 * Chat completions, streaming: any OpenAI-compatible server by base URL (Ollama, LM Studio, llama.cpp,
 * vLLM, DeepSeek), which needs no key unless one is configured. Their `reasoning_content` (or `reasoning`)
 * deltas are shown and logged as `reasoning_text`; only DeepSeek is sent them back (toOpenAIRequest).
 * OpenAI's own endpoint uses the Responses API (openaiResponses.ts). SDK retries are off (see retry.ts).
 */
export class OpenAIProvider implements ModelProvider {
  readonly kind: 'openai' | 'openai-compatible';
  private readonly client: { get: () => Promise<OpenAI> };
  private readonly label: string;
  private readonly replayToolReasoning: boolean;

  constructor(options: OpenAIOptions) {
    this.kind = options.kind;
    this.replayToolReasoning = needsToolReasoning(options.baseUrl);
    this.label = options.kind === 'openai' ? 'OpenAI' : `the server at ${options.baseUrl ?? '(no base URL)'}`;
    if (options.kind === 'openai' && !options.apiKey) {
      throw new ProviderError(
        'missing_key',
        'OpenAI needs an API key: set OPENAI_API_KEY or add the key in Settings → Providers',
      );
    }
    if (options.kind === 'openai-compatible' && !options.baseUrl) {
      throw new ProviderError(
        'bad_request',
        'an OpenAI-compatible provider needs a base URL (e.g. --base-url http://127.0.0.1:11434/v1)',
      );
    }
    // Local servers ignore the key, but the SDK insists on a string.
    const apiKey = options.apiKey ?? 'no-key';
    const { baseUrl } = options;
    this.client = lazyClient(() => openaiClient({ apiKey, baseURL: baseUrl, maxRetries: 0 }));
  }

  async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
    const { messages, tools } = toOpenAIRequest(request.payload, request.tools, {
      replayToolReasoning: this.replayToolReasoning,
    });
    const completed: CompletedMessage = { content: '', toolCalls: [], stopReason: 'stop' };
    let reasoning = '';
    let refusal = '';
    // Only a pinned effort is sent: what a local model accepts is not in Keel's catalogue.
    const effort = effectiveEffort(request.model, request.reasoningEffort);
    const calls = new Map<number, { id: string; name: string; text: string }>();
    let finished = false;
    // The SDK is imported at the first request (sdk.ts); a failure to load it is not a network error.
    const client = await this.client.get();
    try {
      const stream = await client.chat.completions.create(
        {
          model: request.model,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
          ...(request.maxOutputTokens ? { max_completion_tokens: request.maxOutputTokens } : {}),
          ...(effort !== 'off' ? { reasoning_effort: effort } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: request.signal },
      );
      for await (const chunk of stream) {
        if (chunk.usage) {
          const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
          completed.usage = {
            inputTokens: Math.max(0, chunk.usage.prompt_tokens - cached),
            outputTokens: chunk.usage.completion_tokens,
            cacheReadTokens: cached,
            cacheWriteTokens: 0,
          };
          const reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens;
          if (typeof reasoningTokens === 'number') completed.usage.reasoningTokens = reasoningTokens;
        }
        const choice = chunk.choices[0];
        if (!choice) continue;
        if (choice.finish_reason) {
          completed.stopReason = choice.finish_reason;
          finished = true;
        }
        const delta = choice.delta;
        const extra = delta as ReasoningDelta;
        const thought = extra.reasoning_content ?? extra.reasoning;
        if (thought) {
          reasoning += thought;
          yield { type: 'reasoning', text: thought };
        }
        // A refusal (OpenAI's structured `refusal` delta) is the stop's explanation, not the reply's text.
        if (delta.refusal) refusal += delta.refusal;
        if (delta.content) {
          completed.content += delta.content;
          yield { type: 'text', text: delta.content };
        }
        for (const part of delta.tool_calls ?? []) {
          let call = calls.get(part.index);
          if (!call) {
            call = { id: part.id ?? `call_${part.index}`, name: part.function?.name ?? '', text: '' };
            calls.set(part.index, call);
            yield { type: 'tool_call', index: part.index, id: call.id, name: call.name };
          }
          const text = part.function?.arguments;
          if (text) {
            call.text += text;
            yield { type: 'tool_arguments', index: part.index, text };
          }
        }
      }
    } catch (error) {
      const failure = toProviderError(error, this.label, request.signal);
      failure.partial = completed.content;
      failure.partialReasoning = reasoning;
      throw failure;
    }
    try {
      assertComplete(finished, completed.content, this.label, request.signal);
    } catch (error) {
      if (error instanceof ProviderError) error.partialReasoning = reasoning;
      throw error;
    }
    if (reasoning !== '') completed.reasoning = [{ type: 'reasoning_text', text: reasoning }];
    if (refusal !== '') {
      completed.stopReason = 'refusal';
      completed.stopDetails = { explanation: refusal };
    }
    completed.toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, name: call.name, arguments: call.text || '{}' }));
    yield { type: 'done', message: completed };
  }
}
