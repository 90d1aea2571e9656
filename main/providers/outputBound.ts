import { thinkingRequest } from './anthropicThinking.js';
import { findModel } from './catalogue.js';
import type { ModelProvider, StreamRequest } from './types.js';

/**
 * Output tokens a capped request asks OpenAI's APIs for when the host names no limit: without one they would
 * allow the model's whole output limit, which a spend cap would have to assume (#31).
 */
export const CAPPED_OUTPUT_TOKENS = 32_000;

/**
 * The most output tokens one request can be billed for, as the provider will be asked (`max_tokens`,
 * `max_output_tokens`, `max_completion_tokens`): Anthropic's answer room plus the thinking budget within the
 * model's limit (the most `thinkingRequest` ever asks); OpenAI's `maxOutputTokens`, which a capped request
 * always sends (`cappedRequestOutput`).
 */
export function maxOutputTokensOf(
  kind: ModelProvider['kind'],
  request: Pick<StreamRequest, 'model' | 'maxOutputTokens' | 'reasoningEffort'>,
): number {
  if (kind === 'anthropic') return thinkingRequest(request, [], false).maxTokens;
  return request.maxOutputTokens ?? cappedRequestOutput(request.model);
}

/** The output limit a capped request to OpenAI's APIs sends when the host sets none. */
export function cappedRequestOutput(model: string): number {
  const limit = findModel(model)?.maxOutputTokens;
  return Math.min(limit ?? CAPPED_OUTPUT_TOKENS, CAPPED_OUTPUT_TOKENS);
}
