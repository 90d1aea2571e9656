import type { ReasoningEffort, ReasoningPart, ToolCall, Usage } from '../common/events.js';
import type { Payload } from '../common/payload.js';
import type { StopDetails } from '../common/stopReasons.js';

/** A tool as providers see it: name, description and a JSON Schema for its arguments. */
export type ToolSpec = { name: string; description: string; parameters: Record<string, unknown> };

/** One streaming request: the projected payload, the mode's tools, the pinned model. */
export type StreamRequest = {
  payload: Payload;
  tools: readonly ToolSpec[];
  model: string;
  maxOutputTokens?: number;
  /** The pinned effort; absent, the catalogue's default for the model (see `reasoningFor`). */
  reasoningEffort?: ReasoningEffort;
  signal?: AbortSignal;
  /** The session the request belongs to: a local runtime keeps its KV cache per key (issue 34). */
  cacheKey?: string;
};

/** The complete assistant message a stream ends with. */
export type CompletedMessage = {
  content: string;
  toolCalls: ToolCall[];
  /** The reasoning parts in the order they streamed, as the provider returned them; absent when none. */
  reasoning?: ReasoningPart[];
  stopReason: string;
  /** What the provider said about an unusual stop (a refusal's category and explanation). */
  stopDetails?: StopDetails;
  usage?: Usage;
};

/**
 * What a provider stream yields, in order: deltas as they arrive, `retry` when a transient failure before
 * the first delta is retried, and exactly one `done` at the end of a successful stream.
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  /** Reasoning text as it streams (Anthropic thinking, an OpenAI summary, a local server's reasoning_content). */
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; index: number; id: string; name: string }
  | { type: 'tool_arguments'; index: number; text: string }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'done'; message: CompletedMessage };

/** A configured model provider. Streams are cancelled through `signal`. */
export interface ModelProvider {
  readonly kind: 'anthropic' | 'openai' | 'openai-compatible' | 'local';
  stream(request: StreamRequest): AsyncIterable<StreamEvent>;
}
