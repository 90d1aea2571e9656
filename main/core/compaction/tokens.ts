import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { ModelPin, SessionEvent, ToolCall, Usage } from '../../common/events.js';
import { formatFileStaged, formatInterrupted } from '../projection/projectPayload.js';
import type { Payload, PayloadMessage } from '../../common/payload.js';
import type { ToolSpec } from '../../providers/types.js';
import { chunkedCounter } from './tokensChunked.js';

/** The two tiktoken vocabularies Keel estimates with. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/**
 * Tokens a chat message costs beyond its text (role and separators), as OpenAI documents for its chat
 * models; the same constant is used for every provider.
 */
export const MESSAGE_OVERHEAD_TOKENS = 3;

/** Tokens a tool call costs beyond its name and arguments (its framing inside the assistant message). */
export const CALL_OVERHEAD_TOKENS = 3;

/** Tokens every request costs once: the priming of the assistant's reply. */
export const REPLY_PRIMING_TOKENS = 3;

/**
 * Counts tokens of text for one model pin. `count` is tiktoken's count for the chosen vocabulary (exact,
 * except in stretches of over 64 characters without a space, see tokensChunked.ts) times `factor` (rounded up): the high side, for providers whose tokenizer is not public. `countLow`
 * is the same count times `lowFactor`: the low side, used where an over-count would be the unsafe
 * direction (subtracting what a compaction removed).
 */
export type TokenEstimator = {
  encoding: TokenEncoding;
  /** Multiplier applied to tiktoken's count: 1 for OpenAI, > 1 where the real tokenizer may split finer. */
  factor: number;
  /** Multiplier of the low side: 1 for OpenAI and Anthropic, < 1 where the real tokenizer may split coarser. */
  lowFactor: number;
  /** Estimated tokens of `text` (high side); special-token strings are counted as plain text, never rejected. */
  count: (text: string) => number;
  /** Estimated tokens of `text` (low side). */
  countLow: (text: string) => number;
};

/**
 * Anthropic does not publish its tokenizer; published comparisons put Claude's counts 20–30% above
 * OpenAI's for the same text. Over-estimating only makes compaction happen a little earlier.
 */
const ANTHROPIC_FACTOR = 1.3;
/** Local models (Llama, Qwen, Mistral…) use vocabularies close to cl100k; a margin each way covers the rest. */
const COMPATIBLE_FACTOR = 1.1;
const COMPATIBLE_LOW_FACTOR = 0.9;

/** The vocabulary that best matches a pinned model: o200k for OpenAI's current models, cl100k otherwise. */
export function encodingFor(pin: Pick<ModelPin, 'provider' | 'model'>): TokenEncoding {
  if (pin.provider !== 'openai') return 'cl100k_base';
  const model = pin.model.toLowerCase();
  return /^(gpt-3\.5|gpt-4(?![o.])|text-|davinci|babbage)/.test(model) ? 'cl100k_base' : 'o200k_base';
}

/** The factor applied to tiktoken's count for a provider (see ANTHROPIC_FACTOR). */
export function factorFor(pin: Pick<ModelPin, 'provider'>): number {
  if (pin.provider === 'anthropic') return ANTHROPIC_FACTOR;
  if (pin.provider === 'openai-compatible') return COMPATIBLE_FACTOR;
  return 1;
}

/** The low-side factor for a provider (see TokenEstimator.countLow). */
export function lowFactorFor(pin: Pick<ModelPin, 'provider'>): number {
  return pin.provider === 'openai-compatible' ? COMPATIBLE_LOW_FACTOR : 1;
}

const encoders = new Map<TokenEncoding, Promise<Tiktoken>>();

/** Loads a vocabulary once per process (0.6 s for cl100k, 1.2 s for o200k); later calls share it. */
function loadEncoder(encoding: TokenEncoding): Promise<Tiktoken> {
  let pending = encoders.get(encoding);
  if (pending === undefined) {
    const ranks: Promise<{ default: TiktokenBPE }> =
      encoding === 'o200k_base'
        ? import('js-tiktoken/ranks/o200k_base')
        : import('js-tiktoken/ranks/cl100k_base');
    pending = ranks.then((module) => new Tiktoken(module.default));
    encoders.set(encoding, pending);
  }
  return pending;
}

/** The estimator for a pinned model; the vocabulary is loaded on first use and cached for the process. */
export async function loadEstimator(pin: Pick<ModelPin, 'provider' | 'model'>): Promise<TokenEstimator> {
  const encoding = encodingFor(pin);
  const encoder = await loadEncoder(encoding);
  const factor = factorFor(pin);
  const lowFactor = lowFactorFor(pin);
  // allowedSpecial [] and disallowedSpecial []: "<|endoftext|>" in a file is text, not an error. Long
  // stretches are cut before BPE (quadratic in a piece's length otherwise): see tokensChunked.ts.
  const raw = chunkedCounter((text) => encoder.encode(text, [], []).length);
  return {
    encoding,
    factor,
    lowFactor,
    count: (text) => Math.ceil(raw(text) * factor),
    countLow: (text) => Math.floor(raw(text) * lowFactor),
  };
}

/** The same estimator counting on the low side (its `count` is the original's `countLow`). */
export function lowSide(estimator: TokenEstimator): TokenEstimator {
  return { ...estimator, factor: estimator.lowFactor, count: estimator.countLow };
}

/**
 * An upper bound on any byte-level BPE count of `text` (every token is at least one UTF-8 byte), scaled
 * like the estimator. Lets the trigger skip loading a vocabulary when even the bound is under the limit.
 */
export function tokenUpperBound(text: string, factor = 1): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') * factor);
}

/** What one tool call costs inside an assistant message: its name and its JSON arguments. */
function callText(call: ToolCall): string {
  return `${call.name}${call.arguments}`;
}

/** The text of one payload message that the estimate counts (content, tool calls, tool call id). */
export function messageText(message: PayloadMessage): string {
  let text = `${message.role}${message.content}`;
  for (const call of message.toolCalls ?? []) text += callText(call);
  if (message.toolCallId !== undefined) text += message.toolCallId;
  return text;
}

/** Estimated tokens of one payload message, overhead included. */
export function estimateMessageTokens(message: PayloadMessage, estimator: TokenEstimator): number {
  const calls = message.toolCalls?.length ?? 0;
  return MESSAGE_OVERHEAD_TOKENS + calls * CALL_OVERHEAD_TOKENS + estimator.count(messageText(message));
}

/** Estimated tokens of tool definitions as sent with a request (their JSON schema text). */
export function estimateToolTokens(tools: readonly ToolSpec[], estimator: TokenEstimator): number {
  return tools.length === 0 ? 0 : estimator.count(JSON.stringify(tools));
}

/** Estimated input tokens of a whole request: every message, the reply priming and the tool definitions. */
export function estimatePayloadTokens(
  payload: Payload,
  estimator: TokenEstimator,
  tools: readonly ToolSpec[] = [],
): number {
  let total = REPLY_PRIMING_TOKENS + estimateToolTokens(tools, estimator);
  for (const message of payload.messages) total += estimateMessageTokens(message, estimator);
  return total;
}

/**
 * The text an event contributes to a projected payload ('' for events that are not messages), with the
 * same fixed formats the projection uses, so estimating events and estimating the payload agree.
 */
export function eventText(event: SessionEvent): string {
  switch (event.kind) {
    case 'user_message':
      return `user${event.content}`;
    case 'assistant_message':
      return `assistant${event.content}${event.toolCalls.map(callText).join('')}`;
    case 'interrupted':
      return `assistant${formatInterrupted(event)}${event.toolCalls.map(callText).join('')}`;
    case 'tool_result':
    case 'subagent_result':
      return `tool${event.content}${event.toolCallId ?? ''}`;
    case 'file_staged':
      return `user${formatFileStaged(event)}`;
    default:
      return '';
  }
}

/** Fixed tokens of an event's message: the message overhead plus the framing of its tool calls. */
function eventOverhead(event: SessionEvent): number {
  const calls =
    event.kind === 'assistant_message' || event.kind === 'interrupted' ? event.toolCalls.length : 0;
  return MESSAGE_OVERHEAD_TOKENS + calls * CALL_OVERHEAD_TOKENS;
}

/** Estimated tokens an event adds to a projected payload (0 for events that are not messages). */
export function estimateEventTokens(event: SessionEvent, estimator: TokenEstimator): number {
  const text = eventText(event);
  return text === '' ? 0 : eventOverhead(event) + estimator.count(text);
}

/** Upper bound of estimateEventTokens without a vocabulary (see tokenUpperBound). */
export function eventTokenUpperBound(event: SessionEvent, factor = 1): number {
  const text = eventText(event);
  return text === '' ? 0 : eventOverhead(event) + tokenUpperBound(text, factor);
}

/** Everything a provider reported for one request: what it read (fresh and cached) and what it wrote. */
export function usageTotal(usage: Usage): number {
  return (
    usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
  );
}
