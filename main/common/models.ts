import { z } from 'zod';

/*
 * Model vocabulary shared by the store (settings.json, the served-models cache), the providers' catalogue and
 * the contract. Imports only zod.
 */

/** The providers a catalogue entry can belong to (OpenAI-compatible servers have no catalogue of their own). */
export const CatalogueProvider = z.enum(['anthropic', 'openai']);
export type CatalogueProvider = z.infer<typeof CatalogueProvider>;

/**
 * Where a model is in its provider's lifecycle (Anthropic: active / legacy / deprecated / retired; OpenAI:
 * active / legacy / deprecated / shutdown). Deprecated models still answer until `retiresOn`; retired
 * models fail every request.
 */
export const ModelStatus = z.enum(['current', 'legacy', 'deprecated', 'retired']);
export type ModelStatus = z.infer<typeof ModelStatus>;

/** A UTC calendar day, YYYY-MM-DD. */
export const UtcDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a day as YYYY-MM-DD');

/**
 * A correction or an addition to the built-in catalogue (settings.json `models`): a model newer than this
 * Keel, or a lifecycle date the provider moved. Fields given replace the built-in ones; prices are never
 * taken from here (cost stays what the catalogue documents, or unknown).
 */
export const ModelOverride = z
  .object({
    provider: CatalogueProvider.optional(),
    contextWindow: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    status: ModelStatus.optional(),
    retiresOn: UtcDay.optional(),
    replacement: z.string().min(1).optional(),
  })
  .strict();
export type ModelOverride = z.infer<typeof ModelOverride>;

/** One model as a provider's models endpoint lists it; the limits only when the endpoint says them. */
export const ServedModel = z
  .object({
    id: z.string().min(1),
    contextWindow: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
  })
  .strict();
export type ServedModel = z.infer<typeof ServedModel>;

/** A provider's list of models as last read from its endpoint (`GET /v1/models`), with when. */
export const ServedModelList = z
  .object({
    provider: z.enum(['anthropic', 'openai', 'openai-compatible']),
    /** The endpoint's base URL as configured; absent for the provider's default. */
    baseUrl: z.string().optional(),
    /** ISO time of the read. */
    fetchedAt: z.string(),
    models: z.array(ServedModel),
  })
  .strict();
export type ServedModelList = z.infer<typeof ServedModelList>;
