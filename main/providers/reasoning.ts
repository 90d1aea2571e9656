import type { ReasoningEffort } from '../common/events.js';
import { findModel } from './catalogue.js';

/**
 * How a model is asked to reason:
 * - `anthropic-adaptive`: `thinking: {type: 'adaptive'}` with `output_config.effort` (Claude 4.6 and later;
 *   Claude 4.7+ and the 5.x models reject a budget). Interleaved thinking between tool calls comes with it.
 * - `anthropic-budget`: `thinking: {type: 'enabled', budget_tokens}` below `max_tokens`, with the
 *   `interleaved-thinking-2025-05-14` beta header when tools are sent (Claude 4.5 and older).
 * - `openai-effort`: the Responses API's `reasoning: {effort, summary: 'auto'}`.
 */
export type ReasoningStyle = 'anthropic-adaptive' | 'anthropic-budget' | 'openai-effort';

/** What Keel knows of one model's reasoning: how to ask, whether it can be turned off, and the default. */
export type ReasoningSupport = { style: ReasoningStyle; canDisable: boolean; defaultEffort: ReasoningEffort };

const ADAPTIVE_ALWAYS: ReasoningSupport = {
  style: 'anthropic-adaptive',
  canDisable: false,
  defaultEffort: 'high',
};
const ADAPTIVE: ReasoningSupport = { style: 'anthropic-adaptive', canDisable: true, defaultEffort: 'high' };
const BUDGET: ReasoningSupport = { style: 'anthropic-budget', canDisable: true, defaultEffort: 'medium' };
const OPENAI: ReasoningSupport = { style: 'openai-effort', canDisable: true, defaultEffort: 'medium' };
const OPENAI_ALWAYS: ReasoningSupport = {
  style: 'openai-effort',
  canDisable: false,
  defaultEffort: 'medium',
};

// Claude 5.5 / Fable 5.x: thinking is always adaptive, turning it off or a budget is a 400 (the 5.5 migration
// notes; Bedrock's adaptive-thinking page for Fable 5). Opus 5 / Sonnet 5 could still disable it. Opus 4.7
// and 4.8 accept adaptive only; 4.6 deprecates the budget; 4.5 and older know only the budget. OpenAI's
// reasoning models take an effort; `none` (off) since GPT-5.1, gpt-5 and o4-mini only go down to low/minimal.
const SUPPORT: Readonly<Record<string, ReasoningSupport>> = {
  // Its default effort is medium (the Opus 5.5 model page: "Adaptive (always on)", default effort medium).
  'claude-opus-5-5': { ...ADAPTIVE_ALWAYS, defaultEffort: 'medium' },
  'claude-sonnet-5-5': ADAPTIVE_ALWAYS,
  'claude-haiku-5-5': ADAPTIVE_ALWAYS,
  'claude-fable-5-2': ADAPTIVE_ALWAYS,
  'claude-fable-5-1': ADAPTIVE_ALWAYS,
  'claude-fable-5': ADAPTIVE_ALWAYS,
  'claude-opus-5': ADAPTIVE,
  'claude-sonnet-5': ADAPTIVE,
  'claude-opus-4-8': ADAPTIVE_ALWAYS,
  'claude-opus-4-7': ADAPTIVE_ALWAYS,
  'claude-opus-4-6': ADAPTIVE,
  'claude-sonnet-4-6': ADAPTIVE,
  'claude-opus-4-5': BUDGET,
  'claude-haiku-4-5': BUDGET,
  'claude-sonnet-4-5': BUDGET,
  'claude-opus-4-1': BUDGET,
  'claude-sonnet-4': BUDGET,
  'gpt-6.2-sol': OPENAI,
  'gpt-6.2-astra': OPENAI,
  'gpt-5.6-sol': OPENAI,
  'gpt-5.6-terra': OPENAI,
  'gpt-5.6-luna': OPENAI,
  'gpt-5': OPENAI_ALWAYS,
  'gpt-5-mini': OPENAI_ALWAYS,
  'o4-mini': OPENAI_ALWAYS,
};

/** What the catalogue says of a model's reasoning (dated snapshots included); undefined: none known. */
export function reasoningSupport(model: string): ReasoningSupport | undefined {
  const known = findModel(model);
  return known ? SUPPORT[known.id] : undefined;
}

/** The efforts a person may pick for a model: `off` only where the model can stop reasoning. */
export function reasoningChoices(model: string): ReasoningEffort[] {
  const support = reasoningSupport(model);
  if (!support) return ['off', 'low', 'medium', 'high'];
  return support.canDisable ? ['off', 'low', 'medium', 'high'] : ['low', 'medium', 'high'];
}

/**
 * The effort a request uses: the pinned one, else the catalogue's default for the model; a model the
 * catalogue does not know (a local one, or one newer than Keel) reasons only when the pin asks for it.
 */
export function effectiveEffort(model: string, pinned: ReasoningEffort | undefined): ReasoningEffort {
  return pinned ?? reasoningSupport(model)?.defaultEffort ?? 'off';
}

/** Thinking budgets for the budget style, by effort: at least 1,024 as the API requires. */
export const THINKING_BUDGET: Readonly<Record<Exclude<ReasoningEffort, 'off'>, number>> = {
  low: 4_096,
  medium: 16_000,
  high: 32_000,
};
