import type Anthropic from '@anthropic-ai/sdk';
import type {
  MessageParam,
  TextBlockParam,
  Tool,
  ContentBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ReasoningPart, Usage } from '../common/events.js';
import { StopDetails } from '../common/stopReasons.js';
import type { Payload, PayloadMessage } from '../common/payload.js';
import { withImageNotes } from './toolImages.js';
import { anthropicUserBlocks } from './attachments.js';
import { thinkingRequest, toReasoningText, type ThinkingRequest } from './anthropicThinking.js';
import { assertComplete, ProviderError, toProviderError } from './errors.js';
import { anthropicClient, lazyClient } from './sdk.js';
import type { CompletedMessage, ModelProvider, StreamEvent, StreamRequest, ToolSpec } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * Translates a provider-neutral payload to the Messages API shape, with cache breakpoints on the stable
 * prefix: the last tool, the last system block (system prompt, instructions, compaction summary) and the
 * newest message, so each request reads the previous one's prefix from the cache. The environment block
 * comes last, after the breakpoint. Pure: the same payload gives the same bytes.
 */
export function toAnthropicRequest(payload: Payload, tools: readonly ToolSpec[], model?: string) {
  const system: TextBlockParam[] = [];
  const messages: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    const last = messages.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of payload.messages) {
    if (message.role === 'system') {
      if (messages.length === 0) system.push({ type: 'text', text: message.content });
      else push('user', [{ type: 'text', text: message.content }]);
    } else if (message.role === 'user') {
      push(
        'user',
        message.attachments?.length
          ? anthropicUserBlocks(message.content, message.attachments)
          : [{ type: 'text', text: message.content || '(empty message)' }],
      );
    } else if (message.role === 'tool') {
      const images = (message.images ?? []).filter((image) => image.data !== undefined);
      const text = message.content || '(no output)';
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId ?? '',
          // A failed tool says so, as the Messages API asks, so the model does not read the error as output.
          ...(message.isError ? { is_error: true } : {}),
          // Images ride in the tool_result as image blocks after its text (the Messages API takes them there).
          content:
            images.length === 0
              ? withImageNotes(text, message.images)
              : [
                  { type: 'text', text },
                  ...images.map((image) => ({
                    type: 'image' as const,
                    source: { type: 'base64' as const, media_type: image.mimeType, data: image.data ?? '' },
                  })),
                ],
        },
      ]);
    } else {
      push('assistant', assistantBlocks(message, model));
    }
  }
  const lastSystem = system.at(-1);
  if (lastSystem) lastSystem.cache_control = EPHEMERAL;
  const lastBlocks = messages.at(-1)?.content;
  const lastBlock = Array.isArray(lastBlocks) ? lastBlocks.at(-1) : undefined;
  if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking') {
    lastBlock.cache_control = EPHEMERAL;
  }
  // A reply the provider paused (`pause_turn`) goes back last, as it is (the turn sends no environment after
  // it), so the model continues it; without trailing whitespace, which the API refuses in a final assistant turn.
  const continuing = payload.environment === undefined && messages.at(-1)?.role === 'assistant';
  if (continuing && lastBlock?.type === 'text') lastBlock.text = lastBlock.text.trimEnd() || '…';
  // After the breakpoint, so the next request still reads everything before it from the cache: a text
  // block after the last user turn's blocks (tool results come first there, as the API requires).
  if (payload.environment !== undefined) push('user', [{ type: 'text', text: payload.environment }]);
  const anthropicTools: Tool[] = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as Tool['input_schema'],
  }));
  const lastTool = anthropicTools.at(-1);
  if (lastTool) lastTool.cache_control = EPHEMERAL;
  return { system, messages, tools: anthropicTools };
}

/** A logged thinking part as the block it was streamed as; other providers' reasoning has none. */
function thinkingBlock(part: ReasoningPart): ContentBlockParam | undefined {
  if (part.type === 'thinking')
    return { type: 'thinking', thinking: part.thinking, signature: part.signature };
  if (part.type === 'redacted_thinking') return { type: 'redacted_thinking', data: part.data };
  return undefined;
}

/**
 * An assistant message's blocks in the order they streamed: its thinking blocks first (unchanged: their
 * signatures cover the exact text), then the text, then each tool_use followed by any thinking streamed
 * after it. Every message keeps its blocks, so the prefix of the next request is the same bytes; the API
 * itself ignores the thinking of turns before the current tool loop.
 */
function assistantBlocks(message: PayloadMessage, model: string | undefined): ContentBlockParam[] {
  // A signature is bound to the model that made it: another model's thinking is not sent (a model switch).
  const own = model === undefined || message.reasoningModel === undefined || message.reasoningModel === model;
  const after = (calls: number) =>
    (own ? (message.reasoning ?? []) : [])
      .filter((part) => (part.afterCalls ?? 0) === calls)
      .map(thinkingBlock)
      .filter((block): block is ContentBlockParam => block !== undefined);
  const blocks: ContentBlockParam[] = after(0);
  if (message.content) blocks.push({ type: 'text', text: message.content });
  (message.toolCalls ?? []).forEach((call, index) => {
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseArguments(call.arguments) });
    blocks.push(...after(index + 1));
  });
  if (blocks.length === 0) blocks.push({ type: 'text', text: '(no content)' });
  return blocks;
}

export type AnthropicOptions = { apiKey?: string; baseUrl?: string };

/** The Anthropic Messages API, streaming. SDK retries are off: Keel retries visibly (see retry.ts). */
export class AnthropicProvider implements ModelProvider {
  readonly kind = 'anthropic' as const;
  private readonly client: { get: () => Promise<Anthropic> };

  constructor(options: AnthropicOptions) {
    if (!options.apiKey) {
      throw new ProviderError(
        'missing_key',
        'Anthropic needs an API key: set ANTHROPIC_API_KEY or add the key in Settings → Providers',
      );
    }
    const { apiKey, baseUrl } = options;
    this.client = lazyClient(() => anthropicClient({ apiKey, baseURL: baseUrl, maxRetries: 0 }));
  }

  async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
    const { system, messages, tools } = toAnthropicRequest(request.payload, request.tools, request.model);
    const thinking: ThinkingRequest = thinkingRequest(request, messages, tools.length > 0);
    const completed: CompletedMessage = { content: '', toolCalls: [], stopReason: 'end_turn' };
    const argumentsByIndex = new Map<number, { id: string; name: string; text: string }>();
    // Thinking blocks by content index, each placed after the tool_use blocks that streamed before it.
    const reasoningByIndex = new Map<number, ReasoningPart>();
    let finished = false;
    // The SDK is imported at the first request (sdk.ts); a failure to load it is not a network error.
    const client = await this.client.get();
    try {
      const stream = await client.messages.create(
        {
          model: request.model,
          max_tokens: thinking.maxTokens,
          system,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
          ...thinking.params,
          stream: true,
        },
        { signal: request.signal, ...(thinking.headers ? { headers: thinking.headers } : {}) },
      );
      for await (const event of stream) {
        switch (event.type) {
          case 'message_start': {
            const usage = event.message.usage;
            completed.usage = {
              inputTokens: usage.input_tokens,
              outputTokens: usage.output_tokens,
              cacheReadTokens: usage.cache_read_input_tokens ?? 0,
              cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
            };
            break;
          }
          case 'content_block_start': {
            const block = event.content_block;
            const afterCalls = argumentsByIndex.size > 0 ? { afterCalls: argumentsByIndex.size } : {};
            if (block.type === 'thinking') {
              reasoningByIndex.set(event.index, {
                type: 'thinking',
                thinking: block.thinking,
                signature: '',
                ...afterCalls,
              });
            } else if (block.type === 'redacted_thinking') {
              reasoningByIndex.set(event.index, {
                type: 'redacted_thinking',
                data: block.data,
                ...afterCalls,
              });
            }
            if (block.type === 'tool_use') {
              argumentsByIndex.set(event.index, {
                id: block.id,
                name: block.name,
                text: '',
              });
              yield {
                type: 'tool_call',
                index: event.index,
                id: block.id,
                name: block.name,
              };
            }
            break;
          }
          case 'content_block_delta':
            if (event.delta.type === 'thinking_delta') {
              const part = reasoningByIndex.get(event.index);
              if (part?.type === 'thinking') part.thinking += event.delta.thinking;
              yield { type: 'reasoning', text: event.delta.thinking };
            } else if (event.delta.type === 'signature_delta') {
              const part = reasoningByIndex.get(event.index);
              if (part?.type === 'thinking') part.signature = event.delta.signature;
            } else if (event.delta.type === 'text_delta') {
              completed.content += event.delta.text;
              yield { type: 'text', text: event.delta.text };
            } else if (event.delta.type === 'input_json_delta') {
              const call = argumentsByIndex.get(event.index);
              if (call) call.text += event.delta.partial_json;
              yield { type: 'tool_arguments', index: event.index, text: event.delta.partial_json };
            }
            break;
          case 'message_stop':
            finished = true;
            break;
          case 'message_delta': {
            completed.stopReason = event.delta.stop_reason ?? completed.stopReason;
            const details = stopDetailsOf(event.delta);
            if (details) completed.stopDetails = details;
            completed.usage = finalUsage(completed.usage, event.usage);
            break;
          }
          default:
            break;
        }
      }
    } catch (error) {
      const failure = toProviderError(error, 'Anthropic', request.signal);
      failure.partial = completed.content;
      failure.partialReasoning = toReasoningText(reasoningByIndex);
      throw failure;
    }
    try {
      assertComplete(finished, completed.content, 'Anthropic', request.signal);
    } catch (error) {
      if (error instanceof ProviderError) error.partialReasoning = toReasoningText(reasoningByIndex);
      throw error;
    }
    const reasoning = [...reasoningByIndex.entries()].sort(([a], [b]) => a - b).map(([, part]) => part);
    if (reasoning.length > 0) completed.reasoning = reasoning;
    completed.toolCalls = [...argumentsByIndex.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, name: call.name, arguments: call.text || '{}' }));
    yield { type: 'done', message: completed };
  }
}

/** A refusal's `stop_details` (category, explanation), when the message_delta carries them. */
function stopDetailsOf(delta: object): StopDetails | undefined {
  const parsed = StopDetails.safeParse((delta as { stop_details?: unknown }).stop_details);
  return parsed.success && (parsed.data.category || parsed.data.explanation) ? parsed.data : undefined;
}

type DeltaUsage = {
  input_tokens?: number | null;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
};

/**
 * The message's usage with message_delta's figures, which are final and cumulative: message_start's counts are
 * provisional (input and cache counts there may be lower than what is billed), so each count the delta gives
 * replaces the provisional one. Older streams give only `output_tokens` here; the others then stay.
 */
export function finalUsage(provisional: Usage | undefined, delta: DeltaUsage): Usage {
  const usage: Usage = { ...(provisional ?? { inputTokens: 0, outputTokens: 0 }) };
  if (typeof delta.input_tokens === 'number') usage.inputTokens = delta.input_tokens;
  if (typeof delta.cache_read_input_tokens === 'number')
    usage.cacheReadTokens = delta.cache_read_input_tokens;
  if (typeof delta.cache_creation_input_tokens === 'number')
    usage.cacheWriteTokens = delta.cache_creation_input_tokens;
  usage.outputTokens = delta.output_tokens;
  // Thinking is billed as output: reasoningTokens is the part of outputTokens spent on it.
  const thinkingTokens = delta.output_tokens_details?.thinking_tokens;
  if (typeof thinkingTokens === 'number') usage.reasoningTokens = thinkingTokens;
  return usage;
}
