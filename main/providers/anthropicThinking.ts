import type {
  MessageParam,
  OutputConfig,
  ThinkingConfigParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ReasoningPart } from '../common/events.js';
import { findModel } from './catalogue.js';
import { effectiveEffort, reasoningSupport, THINKING_BUDGET } from './reasoning.js';
import type { StreamRequest } from './types.js';

/** Output tokens asked for when the request names none (thinking comes on top of them). */
export const DEFAULT_MAX_TOKENS = 8192;

/** The beta that lets Claude 4.5 and older think between tool calls (adaptive thinking includes it). */
export const INTERLEAVED_THINKING_BETA = 'interleaved-thinking-2025-05-14';

/** The thinking part of one Messages request: `max_tokens`, the `thinking` / `output_config` fields, headers. */
export type ThinkingRequest = {
  maxTokens: number;
  params: { thinking?: ThinkingConfigParam; output_config?: OutputConfig };
  headers?: Record<string, string>;
};

/**
 * How one request asks for thinking, per the pinned effort and the model's style (providers/reasoning.ts).
 * Adaptive: `{type: 'adaptive', display: 'summarized'}` (newer models omit the text by default, and people
 * should see it) with `output_config.effort`. Budget: `{type: 'enabled', budget_tokens}` with `max_tokens`
 * above the budget, and the interleaved-thinking beta when tools are sent. `max_tokens` leaves the answer
 * its usual room on top of the thinking, within the model's output limit. Keel sends no temperature, which
 * thinking does not allow to change.
 *
 * One exception: a tool loop the log recorded without thinking (an older session, or one whose effort was
 * off) cannot continue with thinking on, since its last assistant turn has no thinking block; that request
 * goes without thinking where the model can turn it off.
 */
export function thinkingRequest(
  request: Pick<StreamRequest, 'model' | 'maxOutputTokens' | 'reasoningEffort'>,
  messages: readonly MessageParam[],
  hasTools: boolean,
): ThinkingRequest {
  const answer = request.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
  const effort = effectiveEffort(request.model, request.reasoningEffort);
  const support = reasoningSupport(request.model);
  const canDisable = support?.canDisable ?? true;
  if (effort === 'off' || (canDisable && continuesLoopWithoutThinking(messages))) {
    return { maxTokens: answer, params: {} };
  }
  const limit = findModel(request.model)?.maxOutputTokens;
  const budget = THINKING_BUDGET[effort];
  const maxTokens = Math.min(limit ?? Number.MAX_SAFE_INTEGER, answer + budget);
  if (support?.style === 'anthropic-budget') {
    // budget_tokens must stay below max_tokens.
    const budgetTokens = Math.max(1024, Math.min(budget, maxTokens - 1024));
    return {
      maxTokens,
      params: { thinking: { type: 'enabled', budget_tokens: budgetTokens } },
      ...(hasTools ? { headers: { 'anthropic-beta': INTERLEAVED_THINKING_BETA } } : {}),
    };
  }
  return {
    maxTokens,
    params: { thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort } },
  };
}

/**
 * True when the request continues a tool loop (its last message holds tool results) whose assistant turn
 * has no thinking block before its tool_use: Anthropic rejects such a request while thinking is on.
 */
function continuesLoopWithoutThinking(messages: readonly MessageParam[]): boolean {
  const last = messages.at(-1);
  if (last?.role !== 'user' || !Array.isArray(last.content)) return false;
  if (!last.content.some((block) => block.type === 'tool_result')) return false;
  const assistant = messages.at(-2);
  if (assistant?.role !== 'assistant' || !Array.isArray(assistant.content)) return false;
  const first = assistant.content[0];
  return first?.type !== 'thinking' && first?.type !== 'redacted_thinking';
}

/** The thinking text streamed so far, for an `interrupted` event to show. */
export function toReasoningText(parts: ReadonlyMap<number, ReasoningPart>): string {
  return [...parts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, part]) => (part.type === 'thinking' ? part.thinking : ''))
    .filter((text) => text !== '')
    .join('\n\n');
}
