import type OpenAI from 'openai';
import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseInputItem,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import type { ReasoningPart } from '../common/events.js';
import type { Payload, PayloadMessage } from '../common/payload.js';
import { withImageNotes } from './toolImages.js';
import { responsesUserContent } from './attachments.js';
import { assertComplete, classifyStreamError, ProviderError, toProviderError } from './errors.js';
import { openaiClient, lazyClient } from './sdk.js';
import { effectiveEffort, reasoningSupport } from './reasoning.js';
import type { CompletedMessage, ModelProvider, StreamEvent, StreamRequest, ToolSpec } from './types.js';

/** A logged reasoning part as a stateless Responses input item; only items with encrypted content replay. */
function reasoningItem(part: ReasoningPart): ResponseReasoningItem | undefined {
  if (part.type !== 'reasoning' || part.encryptedContent === undefined) return undefined;
  return {
    type: 'reasoning',
    id: part.id,
    encrypted_content: part.encryptedContent,
    summary: part.summary.map((text) => ({ type: 'summary_text' as const, text })),
  };
}

/**
 * An assistant message as the output items it streamed as: its reasoning items first, then its text, then
 * each function_call followed by the reasoning that streamed after it (a reasoning item must be followed
 * by the item it led to, or the API rejects it).
 */
function assistantItems(message: PayloadMessage, model: string | undefined): ResponseInputItem[] {
  // Encrypted reasoning is read back by the model that wrote it: another model's is not sent.
  const own = model === undefined || message.reasoningModel === undefined || message.reasoningModel === model;
  const after = (calls: number) =>
    (own ? (message.reasoning ?? []) : [])
      .filter((part) => (part.afterCalls ?? 0) === calls)
      .map(reasoningItem)
      .filter((item): item is ResponseReasoningItem => item !== undefined);
  const items: ResponseInputItem[] = after(0);
  if (message.content) items.push({ role: 'assistant', content: message.content });
  (message.toolCalls ?? []).forEach((call, index) => {
    items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
    items.push(...after(index + 1));
  });
  return items;
}

/**
 * Translates a provider-neutral payload to Responses API `input` items and function tools: system and user
 * messages as messages, each tool result as a `function_call_output` paired by `call_id`, reasoning items
 * replayed with their encrypted content (`store: false` keeps nothing on OpenAI's side), and the
 * environment block as a last user message. Pure and byte-stable.
 */
export function toResponsesRequest(payload: Payload, tools: readonly ToolSpec[], model?: string) {
  const input: ResponseInputItem[] = [];
  for (const message of payload.messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        input.push(
          message.role === 'user' && message.attachments?.length
            ? { role: 'user', content: responsesUserContent(message.content, message.attachments) }
            : { role: message.role, content: message.content },
        );
        break;
      case 'tool': {
        const images = (message.images ?? []).filter((image) => image.data !== undefined);
        input.push({
          type: 'function_call_output',
          call_id: message.toolCallId ?? '',
          // Images as input_image parts of the output (data: URLs), after its text.
          output:
            images.length === 0
              ? withImageNotes(message.content, message.images)
              : [
                  { type: 'input_text', text: message.content },
                  ...images.map((image) => ({
                    type: 'input_image' as const,
                    image_url: `data:${image.mimeType};base64,${image.data ?? ''}`,
                  })),
                ],
        });
        break;
      }
      case 'assistant':
        input.push(...assistantItems(message, model));
        break;
    }
  }
  if (payload.environment !== undefined) input.push({ role: 'user', content: payload.environment });
  const responseTools: FunctionTool[] = tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    // Keel's schemas are not written for strict mode (every property required, no extra keys).
    strict: false,
  }));
  return { input, tools: responseTools };
}

/**
 * The `reasoning` and `include` fields for a model: the pinned (or catalogue default) effort with
 * automatic summaries, and the encrypted reasoning back so the log can replay it. `off` sends `none` where
 * the model can stop reasoning; a model the catalogue knows no reasoning of gets neither field unless the
 * pin names an effort (non-reasoning models reject them).
 */
export function responsesReasoning(
  model: string,
  pinned: StreamRequest['reasoningEffort'],
): Pick<ResponseCreateParamsStreaming, 'reasoning' | 'include'> {
  const effort = effectiveEffort(model, pinned);
  const support = reasoningSupport(model);
  if (effort === 'off') {
    return support?.canDisable ? { reasoning: { effort: 'none' } } : {};
  }
  return { reasoning: { effort, summary: 'auto' }, include: ['reasoning.encrypted_content'] };
}

type Call = { callId: string; name: string; text: string };

/** OpenAI's Responses API, streaming and stateless (`store: false`). SDK retries are off (see retry.ts). */
export class OpenAIResponsesProvider implements ModelProvider {
  readonly kind = 'openai' as const;
  private readonly client: { get: () => Promise<OpenAI> };

  constructor(options: { apiKey?: string; baseUrl?: string }) {
    if (!options.apiKey) {
      throw new ProviderError(
        'missing_key',
        'OpenAI needs an API key: set OPENAI_API_KEY or add the key in Settings → Providers',
      );
    }
    const { apiKey, baseUrl } = options;
    this.client = lazyClient(() => openaiClient({ apiKey, baseURL: baseUrl, maxRetries: 0 }));
  }

  async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
    const { input, tools } = toResponsesRequest(request.payload, request.tools, request.model);
    const completed: CompletedMessage = { content: '', toolCalls: [], stopReason: 'completed' };
    // Output items by output_index: function calls, and reasoning placed after the calls before it.
    const calls = new Map<number, Call>();
    const reasoning = new Map<number, Extract<ReasoningPart, { type: 'reasoning' }>>();
    let reasoningText = '';
    let refusal = '';
    let finished = false;
    // The SDK is imported at the first request (sdk.ts); a failure to load it is not a network error.
    const client = await this.client.get();
    try {
      const stream = await client.responses.create(
        {
          model: request.model,
          input,
          ...(tools.length > 0 ? { tools } : {}),
          ...responsesReasoning(request.model, request.reasoningEffort),
          ...(request.maxOutputTokens ? { max_output_tokens: request.maxOutputTokens } : {}),
          store: false,
          stream: true,
        },
        { signal: request.signal },
      );
      for await (const event of stream) {
        switch (event.type) {
          case 'response.output_item.added': {
            const item = event.item;
            if (item.type === 'function_call') {
              calls.set(event.output_index, { callId: item.call_id, name: item.name, text: '' });
              yield { type: 'tool_call', index: event.output_index, id: item.call_id, name: item.name };
            } else if (item.type === 'reasoning') {
              reasoning.set(event.output_index, {
                type: 'reasoning',
                id: item.id,
                summary: [],
                ...(calls.size > 0 ? { afterCalls: calls.size } : {}),
              });
            }
            break;
          }
          case 'response.output_text.delta':
            completed.content += event.delta;
            yield { type: 'text', text: event.delta };
            break;
          case 'response.refusal.delta':
            // A refusal is its own content part: kept as the stop's explanation, not as the reply's text.
            refusal += event.delta;
            break;
          case 'response.reasoning_summary_text.delta':
            reasoningText += event.delta;
            yield { type: 'reasoning', text: event.delta };
            break;
          case 'response.function_call_arguments.delta': {
            const call = calls.get(event.output_index);
            if (call) call.text += event.delta;
            yield { type: 'tool_arguments', index: event.output_index, text: event.delta };
            break;
          }
          case 'response.output_item.done': {
            const item = event.item;
            const part = reasoning.get(event.output_index);
            if (item.type === 'reasoning' && part) {
              // The finished item is the one to replay: its summaries and encrypted content, as sent.
              part.summary = item.summary.map((summary) => summary.text);
              if (item.encrypted_content) part.encryptedContent = item.encrypted_content;
            } else if (item.type === 'function_call') {
              const call = calls.get(event.output_index);
              if (call) call.text = item.arguments;
            }
            break;
          }
          case 'response.completed':
          case 'response.incomplete': {
            const response = event.response;
            finished = true;
            if (event.type === 'response.incomplete') {
              completed.stopReason = response.incomplete_details?.reason ?? 'incomplete';
            } else if (refusal) {
              completed.stopReason = 'refusal';
              completed.stopDetails = { explanation: refusal };
            } else if (calls.size > 0) {
              completed.stopReason = 'tool_calls';
            }
            const usage = response.usage;
            if (usage) {
              const cached = usage.input_tokens_details?.cached_tokens ?? 0;
              completed.usage = {
                inputTokens: Math.max(0, usage.input_tokens - cached),
                outputTokens: usage.output_tokens,
                cacheReadTokens: cached,
                cacheWriteTokens: 0,
                reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
              };
            }
            break;
          }
          case 'response.failed': {
            const failed = event.response.error;
            throw classifyStreamError(
              'OpenAI',
              undefined,
              failed?.code,
              failed?.message ?? 'no reason given',
            );
          }
          case 'error':
            throw classifyStreamError('OpenAI', undefined, event.code ?? undefined, event.message);
          default:
            break;
        }
      }
    } catch (error) {
      const failure =
        error instanceof ProviderError ? error : toProviderError(error, 'OpenAI', request.signal);
      failure.partial = completed.content;
      failure.partialReasoning = reasoningText;
      throw failure;
    }
    try {
      assertComplete(finished, completed.content, 'OpenAI', request.signal);
    } catch (error) {
      if (error instanceof ProviderError) error.partialReasoning = reasoningText;
      throw error;
    }
    completed.toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.callId, name: call.name, arguments: call.text || '{}' }));
    const parts = [...reasoning.entries()].sort(([a], [b]) => a - b).map(([, part]) => part);
    if (parts.length > 0) completed.reasoning = parts;
    yield { type: 'done', message: completed };
  }
}
