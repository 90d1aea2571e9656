import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Payload } from '../common/payload.js';
import { assertComplete, ProviderError, toProviderError } from './errors.js';
import type { CompletedMessage, ModelProvider, StreamEvent, StreamRequest, ToolSpec } from './types.js';

/**
 * Translates a provider-neutral payload to chat-completions messages and tools, the environment block as
 * a last user message. Pure and byte-stable.
 */
export function toOpenAIRequest(payload: Payload, tools: readonly ToolSpec[]) {
  const messages: ChatCompletionMessageParam[] = payload.messages.map(
    (message): ChatCompletionMessageParam => {
      switch (message.role) {
        case 'system':
          return { role: 'system', content: message.content };
        case 'user':
          return { role: 'user', content: message.content };
        case 'tool':
          return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
        case 'assistant':
          return message.toolCalls?.length
            ? {
                role: 'assistant',
                content: message.content || null,
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : { role: 'assistant', content: message.content };
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

/**
 * OpenAI chat completions, streaming; also any OpenAI-compatible server by base URL (Ollama, LM Studio,
 * llama.cpp, vLLM), which needs no key unless one is configured. SDK retries are off (see retry.ts).
 */
export class OpenAIProvider implements ModelProvider {
  readonly kind: 'openai' | 'openai-compatible';
  private readonly client: OpenAI;
  private readonly label: string;

  constructor(options: OpenAIOptions) {
    this.kind = options.kind;
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
    this.client = new OpenAI({ apiKey: options.apiKey ?? 'no-key', baseURL: options.baseUrl, maxRetries: 0 });
  }

  async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
    const { messages, tools } = toOpenAIRequest(request.payload, request.tools);
    const completed: CompletedMessage = { content: '', toolCalls: [], stopReason: 'stop' };
    const calls = new Map<number, { id: string; name: string; text: string }>();
    let finished = false;
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: request.model,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
          ...(request.maxOutputTokens ? { max_completion_tokens: request.maxOutputTokens } : {}),
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
        }
        const choice = chunk.choices[0];
        if (!choice) continue;
        if (choice.finish_reason) {
          completed.stopReason = choice.finish_reason;
          finished = true;
        }
        const delta = choice.delta;
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
      throw failure;
    }
    assertComplete(finished, completed.content, this.label, request.signal);
    completed.toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, name: call.name, arguments: call.text || '{}' }));
    yield { type: 'done', message: completed };
  }
}
