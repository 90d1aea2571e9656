import type { ModelOverride, ModelStatus } from '../common/models.js';
import type { Usage } from '../common/events.js';

export type { ModelStatus } from '../common/models.js';

/**
 * USD per million tokens. `cacheRead` is required: a model whose cache-hit price is not documented gets no
 * prices at all, because billing cache hits at the input price would overstate its cost 10–40×. A missing
 * `cacheWrite` bills cache writes as input (providers that do not price writes separately).
 */
export type Prices = { input: number; output: number; cacheRead: number; cacheWrite?: number };

/**
 * A model's list prices: `base` for every request, `longContext` for a whole request whose prompt (input +
 * cache reads + cache writes) is more than `above` tokens — the provider then bills every token of it,
 * output included, at the higher rates.
 */
export type PriceSchedule = { base: Prices; longContext?: { above: number; prices: Prices } };

/** What Keel knows about a model: context window, output limit, list prices and lifecycle. */
export type ModelInfo = {
  id: string;
  provider: 'anthropic' | 'openai';
  contextWindow: number;
  /** The most output tokens one request may ask for; undefined when not documented. */
  maxOutputTokens?: number;
  /** Undefined when a billed rate is not documented: its cost is then reported as unknown. */
  prices?: PriceSchedule;
  status: ModelStatus;
  /** First day (UTC, YYYY-MM-DD) the provider no longer serves the model, when announced. */
  retiresOn?: string;
  /** The provider's recommended replacement, when it names one. */
  replacement?: string;
};

// Every figure below was read on 2026-11-29 from the provider page cited next to it; "the pricing page"
// is https://platform.claude.com/docs/en/about-claude/pricing. Anthropic cache writes are the 5-minute
// rate: Keel's cache breakpoints use the default 5-minute TTL.
/** Models Keel knows, newest first per provider; prices only where every billed rate is documented. */
export const MODEL_CATALOGUE: readonly ModelInfo[] = [
  // https://platform.claude.com/docs/en/models/opus-5-5/overview — "Latest"; 1M / 128K; $4 in, $20 out,
  // 5m cache write $5, cache read $0.20.
  {
    id: 'claude-opus-5-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 } },
    status: 'current',
  },
  // https://platform.claude.com/docs/en/models/sonnet-5-5/overview — "Latest"; 1M / 128K; $2 in, $10 out,
  // 5m cache write $2.50, cache read $0.20 (the figure on the official page; see the catalogue tests).
  {
    id: 'claude-sonnet-5-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 } },
    status: 'current',
  },
  // https://platform.claude.com/docs/en/models/haiku-5-5/overview — "Latest"; 1M / 128K; priced by prompt
  // length ("from $0.10 / $0.50"): the cache rates and the long-prompt band are not on the official pages
  // read, so it has no prices here.
  {
    id: 'claude-haiku-5-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  // https://platform.claude.com/docs/id/models/sonnet-5/overview (current-lineup table) — Fable 5.2:
  // 1M / 128K, $8 / $40; its cache rates were not found, so it has no prices here.
  {
    id: 'claude-fable-5-2',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  // Fable 5.1: 1M / 128K (https://platform.claude.com/docs/en/models/fable-5/overview lineup table);
  // prices from the pricing page: $10 / $50, 5m write $12.50, cache hits $0.25. Legacy is inferred: the
  // newest lineup table lists Fable 5.2 in its place.
  {
    id: 'claude-fable-5-1',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 } },
    status: 'legacy',
    replacement: 'claude-fable-5-2',
  },
  // https://platform.claude.com/docs/en/models/fable-5/overview — "Legacy"; 1M / 128K; the pricing page:
  // $10 / $50, 5m write $12.50, cache hits $1.
  {
    id: 'claude-fable-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 } },
    status: 'legacy',
    replacement: 'claude-fable-5-1',
  },
  // https://platform.claude.com/docs/en/models/opus-5/overview — "Legacy" (retirement not sooner than
  // 2027-07-24); 1M / 128K; $5 / $25, 5m write $6.25, cache read $0.50.
  {
    id: 'claude-opus-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
    status: 'legacy',
    replacement: 'claude-opus-5-5',
  },
  // https://platform.claude.com/docs/en/models/sonnet-5/overview — "Legacy"; 1M / 128K; $2 / $10,
  // 5m write $2.50, cache read $0.20.
  {
    id: 'claude-sonnet-5',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 } },
    status: 'legacy',
    replacement: 'claude-sonnet-5-5',
  },
  // https://platform.claude.com/docs/en/models/opus-4-8/overview — "Legacy"; 1M / 128K; the pricing page:
  // $5 / $25, 5m write $6.25, cache hits $0.50.
  {
    id: 'claude-opus-4-8',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
    status: 'legacy',
    replacement: 'claude-opus-5-5',
  },
  // 1M / 128K from the partner model cards (https://docs.aws.amazon.com/bedrock/latest/userguide/
  // model-card-anthropic-claude-opus-4-7.md; Google Cloud's Opus 4.7 page); the pricing page: $5 / $25,
  // 5m write $6.25, cache hits $0.50. Legacy is inferred: Opus 4.6 and 4.8 are legacy.
  {
    id: 'claude-opus-4-7',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
    status: 'legacy',
    replacement: 'claude-opus-5-5',
  },
  // https://platform.claude.com/docs/en/models/opus-4-6/overview — "Legacy"; 1M / 128K; the pricing page:
  // $5 / $25, 5m write $6.25, cache hits $0.50.
  {
    id: 'claude-opus-4-6',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    prices: { base: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
    status: 'legacy',
    replacement: 'claude-opus-5-5',
  },
  // https://platform.claude.com/docs/en/models/sonnet-4-6/overview — "Legacy"; 1M / 128K; $3 / $15. Its
  // cache rates were not found, so it has no prices here.
  {
    id: 'claude-sonnet-4-6',
    provider: 'anthropic',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    status: 'legacy',
    replacement: 'claude-sonnet-5-5',
  },
  // 200K / 64K, $5 / $25, 5m write $6.25, cache read $0.50: https://platform.claude.com/docs/en/models/
  // opus-4-5/overview. Deprecated, end of life January 22nd, 2027: Anthropic's SDK (@anthropic-ai/sdk
  // 1.14, internal/data/deprecated-models.js), newer than the docs copy read, which still said legacy.
  {
    id: 'claude-opus-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    prices: { base: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
    status: 'deprecated',
    retiresOn: '2027-01-22',
    replacement: 'claude-opus-5-5',
  },
  // https://platform.claude.com/docs/en/models/haiku-4-5/overview — "Legacy"; 200K / 64K; $1 / $5. Cache
  // rates ($1.25 write, $0.10 read) are the catalogue's earlier figures, not re-read this time.
  {
    id: 'claude-haiku-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    prices: { base: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
    status: 'legacy',
    replacement: 'claude-haiku-5-5',
  },
  // https://platform.claude.com/docs/en/models/sonnet-4-5/overview — "Deprecated … retires on November 30,
  // 2026. Recommended replacement: Claude Sonnet 5.5"; 200K / 64K; $3 / $15. Cache rates ($3.75 write,
  // $0.30 read) are the catalogue's earlier figures.
  {
    id: 'claude-sonnet-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    prices: { base: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
    status: 'deprecated',
    retiresOn: '2026-11-30',
    replacement: 'claude-sonnet-5-5',
  },
  // the pricing page: "Claude Opus 4.1 (retired, except on Bedrock and Google Cloud)", $15 / $75, 5m write
  // $18.75, cache hits $1.50. Kept so old sessions keep their cost and get a clear error.
  {
    id: 'claude-opus-4-1',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { base: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 } },
    status: 'retired',
    replacement: 'claude-opus-5-5',
  },
  // Retired on the Claude API: no longer in the SDK's Model list (@anthropic-ai/sdk 1.14); the date was not
  // found on an official page. Figures are the catalogue's earlier ones, kept for old sessions' costs.
  {
    id: 'claude-sonnet-4',
    provider: 'anthropic',
    contextWindow: 200_000,
    prices: { base: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
    status: 'retired',
    replacement: 'claude-sonnet-5-5',
  },

  // https://developers.openai.com/api/docs/models/gpt-6.2-sol — 1,050,000 context (922,000 input), 128,000
  // output; $2 in, $0.10 cached, $2.50 cache writes, $10 out; "for requests with more than 272K input
  // tokens, input and cache rates double and output costs 1.5 times … for the full request".
  {
    id: 'gpt-6.2-sol',
    provider: 'openai',
    contextWindow: 1_050_000,
    maxOutputTokens: 128_000,
    prices: {
      base: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
      longContext: { above: 272_000, prices: { input: 4, output: 15, cacheRead: 0.2, cacheWrite: 5 } },
    },
    status: 'current',
  },
  // https://developers.openai.com/api/docs/models — GPT-6.2 Astra: 1.05M context, 128K output, $8 / $40;
  // its cached-input rate was not found, so it has no prices here.
  {
    id: 'gpt-6.2-astra',
    provider: 'openai',
    contextWindow: 1_050_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  // https://developers.openai.com/api/docs/models/compare.md — GPT-5.6 Sol / Terra / Luna: 1,050,000 /
  // 128,000, Chat Completions supported. Sol's page gives promotional prices "at least until November 21,
  // 2026" and the current rates were not found, so none of the three has prices here.
  {
    id: 'gpt-5.6-sol',
    provider: 'openai',
    contextWindow: 1_050_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  {
    id: 'gpt-5.6-terra',
    provider: 'openai',
    contextWindow: 1_050_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  {
    id: 'gpt-5.6-luna',
    provider: 'openai',
    contextWindow: 1_050_000,
    maxOutputTokens: 128_000,
    status: 'current',
  },
  // https://developers.openai.com/api/docs/deprecations — gpt-5 and gpt-5-mini: deprecated, shutdown
  // Dec 11, 2026, replaced by gpt-6.1-sol / gpt-6.1-terra. Windows and prices are the catalogue's earlier
  // figures.
  {
    id: 'gpt-5',
    provider: 'openai',
    contextWindow: 400_000,
    prices: { base: { input: 1.25, output: 10, cacheRead: 0.125 } },
    status: 'deprecated',
    retiresOn: '2026-12-11',
    replacement: 'gpt-6.1-sol',
  },
  {
    id: 'gpt-5-mini',
    provider: 'openai',
    contextWindow: 400_000,
    prices: { base: { input: 0.25, output: 2, cacheRead: 0.025 } },
    status: 'deprecated',
    retiresOn: '2026-12-11',
    replacement: 'gpt-6.1-terra',
  },
  // Deprecations page, 2026-10-14 notice: GPT-4o, GPT-4.1 and GPT-4.1 mini shut down Jan 14, 2027, replaced
  // by gpt-6-luna (read from a verbatim copy of the page; the stored official copy was cut before it).
  {
    id: 'gpt-4.1',
    provider: 'openai',
    contextWindow: 1_047_576,
    prices: { base: { input: 2, output: 8, cacheRead: 0.5 } },
    status: 'deprecated',
    retiresOn: '2027-01-14',
    replacement: 'gpt-6-luna',
  },
  {
    id: 'gpt-4.1-mini',
    provider: 'openai',
    contextWindow: 1_047_576,
    prices: { base: { input: 0.4, output: 1.6, cacheRead: 0.1 } },
    status: 'deprecated',
    retiresOn: '2027-01-14',
    replacement: 'gpt-6-luna',
  },
  {
    id: 'gpt-4o',
    provider: 'openai',
    contextWindow: 128_000,
    prices: { base: { input: 2.5, output: 10, cacheRead: 1.25 } },
    status: 'deprecated',
    retiresOn: '2027-01-14',
    replacement: 'gpt-6-luna',
  },
  // Shut down 2026-10-23 per secondary copies of the deprecations page (replacement gpt-5.6-terra); kept so
  // old sessions keep their cost and get a clear error.
  {
    id: 'o4-mini',
    provider: 'openai',
    contextWindow: 200_000,
    prices: { base: { input: 1.1, output: 4.4, cacheRead: 0.275 } },
    status: 'retired',
    retiresOn: '2026-10-23',
    replacement: 'gpt-5.6-terra',
  },
];

/**
 * The model a new session or a connection test should suggest per provider: a current model with
 * documented prices (Anthropic's docs say to start with Opus 5.5; OpenAI's everyday model is GPT-6.2 Sol).
 */
export const SUGGESTED_MODEL: Readonly<Record<ModelInfo['provider'], string>> = {
  anthropic: 'claude-opus-5-5',
  openai: 'gpt-6.2-sol',
};

/** A catalogue: the models Keel knows and the model to suggest per provider. */
export type ModelCatalogue = {
  readonly models: readonly ModelInfo[];
  readonly suggested: Readonly<Record<ModelInfo['provider'], string>>;
};

/** The catalogue this build of Keel ships with. */
export const BUILT_IN_CATALOGUE: ModelCatalogue = { models: MODEL_CATALOGUE, suggested: SUGGESTED_MODEL };

/**
 * The built-in catalogue with settings.json's `models` applied: a known id takes the fields given (its prices
 * stay), a new id needs provider and contextWindow and joins its provider's list first. Throws an Error naming
 * the entry when a new one lacks them.
 */
export function withOverrides(
  base: ModelCatalogue,
  overrides: Readonly<Record<string, ModelOverride>>,
): ModelCatalogue {
  const models = [...base.models];
  const added: ModelInfo[] = [];
  for (const [id, override] of Object.entries(overrides)) {
    const at = models.findIndex((model) => model.id === id);
    const known = models[at];
    if (known) {
      models[at] = { ...known, ...override };
      continue;
    }
    if (override.provider === undefined || override.contextWindow === undefined) {
      throw new Error(
        `settings.json models.${id}: a model Keel does not know needs "provider" (anthropic or openai) and "contextWindow"`,
      );
    }
    added.push({
      status: 'current',
      ...override,
      id,
      provider: override.provider,
      contextWindow: override.contextWindow,
    });
  }
  return { models: [...added, ...models], suggested: base.suggested };
}

// A snapshot id is the alias plus a date (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`). Anything
// else after the alias is another model (`claude-opus-5-5` is not a snapshot of `claude-opus-5`).
const SNAPSHOT_SUFFIX = /^-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** True when `id` names `alias` or a dated snapshot of it (`claude-sonnet-4-5-20250929` of `claude-sonnet-4-5`). */
export function isSnapshotOf(id: string, alias: string): boolean {
  return id === alias || (id.startsWith(alias) && SNAPSHOT_SUFFIX.test(id.slice(alias.length)));
}

/**
 * Finds a model by id, also under a dated snapshot id (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`).
 * Unknown models (local ones, or ones newer than the catalogue) return undefined, never a near namesake.
 */
export function findModel(id: string, catalogue: ModelCatalogue = BUILT_IN_CATALOGUE): ModelInfo | undefined {
  return catalogue.models.find((model) => isSnapshotOf(id, model.id));
}

/**
 * True when Keel's catalogue says the provider no longer serves the model on `today` (YYYY-MM-DD, UTC): it is
 * marked retired, or its announced retirement day has come. A hint, not the truth: the provider's models
 * endpoint decides (see core/models).
 */
export function isRetired(model: ModelInfo, today: string): boolean {
  if (model.status === 'retired') return true;
  return model.retiresOn !== undefined && today >= model.retiresOn;
}

/** The day (UTC) the catalogue's prices were read from the providers' pages: costs are list prices as of then. */
export const PRICES_AS_OF = '2026-11-29';

/** One request's cost split by what was billed (USD); reasoning is part of output. */
export type CostParts = {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
};

/**
 * One request's cost by kind, at the rates `costOf` uses (long-context ones included), or undefined for a model
 * without documented prices. The parts other than `reasoning` sum to `costOf`.
 */
export function costParts(usage: Usage, model: string): CostParts | undefined {
  const schedule = findModel(model)?.prices;
  if (!schedule) return undefined;
  const prompt = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  const long = schedule.longContext;
  const prices = long && prompt > long.above ? long.prices : schedule.base;
  return {
    input: (usage.inputTokens * prices.input) / 1e6,
    cacheRead: ((usage.cacheReadTokens ?? 0) * prices.cacheRead) / 1e6,
    cacheWrite: ((usage.cacheWriteTokens ?? 0) * (prices.cacheWrite ?? prices.input)) / 1e6,
    output: (usage.outputTokens * prices.output) / 1e6,
    reasoning: ((usage.reasoningTokens ?? 0) * prices.output) / 1e6,
  };
}

/**
 * Cost in USD of one request's usage, or undefined for a model without documented prices. A request whose
 * prompt passes the model's long-context threshold is billed entirely at the long-context rates.
 */
export function costOf(usage: Usage, model: string): number | undefined {
  const schedule = findModel(model)?.prices;
  if (!schedule) return undefined;
  const prompt = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  const long = schedule.longContext;
  const prices = long && prompt > long.above ? long.prices : schedule.base;
  return (
    (usage.inputTokens * prices.input +
      usage.outputTokens * prices.output +
      (usage.cacheReadTokens ?? 0) * prices.cacheRead +
      (usage.cacheWriteTokens ?? 0) * (prices.cacheWrite ?? prices.input)) /
    1e6
  );
}

/**
 * The context window to pin for a model: an explicit value wins, then the catalogue; a model the catalogue
 * does not know (a local one) needs an explicit value, and the error says how to give it.
 */
export function resolveContextWindow(
  model: string,
  explicit?: number,
  catalogue: ModelCatalogue = BUILT_IN_CATALOGUE,
): number {
  if (explicit !== undefined) return explicit;
  const known = findModel(model, catalogue);
  if (known) return known.contextWindow;
  throw new Error(
    `the context window of model "${model}" is unknown: pass --context-window N (or set it for the model in settings)`,
  );
}
