import type { Usage } from '../core/log/events.js';

/** USD per million tokens. */
export type Prices = { input: number; output: number; cacheRead?: number; cacheWrite?: number };

/** What Keel knows about a model: its context window and list prices. */
export type ModelInfo = {
  id: string;
  provider: 'anthropic' | 'openai';
  contextWindow: number;
  prices: Prices;
};

/** Common models; list prices as published by the providers (USD per million tokens). */
export const MODEL_CATALOGUE: readonly ModelInfo[] = [
  {
    id: 'claude-opus-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  },
  {
    id: 'claude-opus-4-1',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  },
  {
    id: 'claude-sonnet-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  },
  {
    id: 'claude-sonnet-4',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  },
  {
    id: 'claude-haiku-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  },
  {
    id: 'gpt-5',
    provider: 'openai',
    contextWindow: 400_000,
    prices: { input: 1.25, output: 10, cacheRead: 0.125 },
  },
  {
    id: 'gpt-5-mini',
    provider: 'openai',
    contextWindow: 400_000,
    prices: { input: 0.25, output: 2, cacheRead: 0.025 },
  },
  {
    id: 'gpt-4.1',
    provider: 'openai',
    contextWindow: 1_047_576,
    prices: { input: 2, output: 8, cacheRead: 0.5 },
  },
  {
    id: 'gpt-4.1-mini',
    provider: 'openai',
    contextWindow: 1_047_576,
    prices: { input: 0.4, output: 1.6, cacheRead: 0.1 },
  },
  {
    id: 'gpt-4o',
    provider: 'openai',
    contextWindow: 128_000,
    prices: { input: 2.5, output: 10, cacheRead: 1.25 },
  },
  {
    id: 'o4-mini',
    provider: 'openai',
    contextWindow: 200_000,
    prices: { input: 1.1, output: 4.4, cacheRead: 0.275 },
  },
];

/**
 * Finds a model by id, also under a dated id (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`): the
 * longest catalogue id the given id starts with. Unknown (local) models return undefined.
 */
export function findModel(id: string): ModelInfo | undefined {
  let best: ModelInfo | undefined;
  for (const model of MODEL_CATALOGUE) {
    if ((id === model.id || id.startsWith(`${model.id}-`)) && (!best || model.id.length > best.id.length))
      best = model;
  }
  return best;
}

/** Cost in USD of one request's usage, or undefined for a model without known prices. */
export function costOf(usage: Usage, model: string): number | undefined {
  const prices = findModel(model)?.prices;
  if (!prices) return undefined;
  const perToken = (n: number | undefined, price: number | undefined) =>
    ((n ?? 0) * (price ?? prices.input)) / 1e6;
  return (
    perToken(usage.inputTokens, prices.input) +
    perToken(usage.outputTokens, prices.output) +
    perToken(usage.cacheReadTokens, prices.cacheRead) +
    perToken(usage.cacheWriteTokens, prices.cacheWrite)
  );
}

/**
 * The context window to pin for a model: an explicit value wins, then the catalogue; a model the catalogue
 * does not know (a local one) needs an explicit value, and the error says how to give it.
 */
export function resolveContextWindow(model: string, explicit?: number): number {
  if (explicit !== undefined) return explicit;
  const known = findModel(model);
  if (known) return known.contextWindow;
  throw new Error(
    `the context window of model "${model}" is unknown: pass --context-window N (or set it for the model in settings)`,
  );
}
