import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ServedModel } from '../common/models.js';
import { ProviderError, providerMessage, toProviderError } from './errors.js';
import { anthropicClient, openaiClient } from './sdk.js';

/*
 * The provider's own word on which models it serves: `GET /v1/models` (Anthropic, OpenAI, and the
 * OpenAI-compatible servers: Ollama, LM Studio, llama.cpp, vLLM) and `GET /v1/models/{id}` for one model.
 * Through the official SDKs, so paging, headers and error bodies are the providers' own.
 */

/** Where to ask: a provider, its base URL (absent for the provider's default) and the key, if any. */
export type ModelsEndpoint = {
  provider: 'anthropic' | 'openai' | 'openai-compatible';
  baseUrl?: string;
  apiKey?: string;
};

/** How long one read may take before it counts as "could not check". */
export const MODELS_ENDPOINT_TIMEOUT_MS = 5_000;

const LABEL = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  'openai-compatible': 'The OpenAI-compatible server',
};

type Client = { kind: 'anthropic'; client: Anthropic } | { kind: 'openai'; client: OpenAI };

async function clientFor(endpoint: ModelsEndpoint, timeoutMs: number): Promise<Client> {
  const label = LABEL[endpoint.provider];
  if (endpoint.provider === 'anthropic') {
    if (!endpoint.apiKey)
      throw new ProviderError('missing_key', `${label} needs an API key to list its models`);
    return {
      kind: 'anthropic',
      client: await anthropicClient({
        apiKey: endpoint.apiKey,
        baseURL: endpoint.baseUrl,
        maxRetries: 0,
        timeout: timeoutMs,
      }),
    };
  }
  if (endpoint.provider === 'openai' && !endpoint.apiKey) {
    throw new ProviderError('missing_key', `${label} needs an API key to list its models`);
  }
  if (endpoint.provider === 'openai-compatible' && !endpoint.baseUrl) {
    throw new ProviderError('bad_request', `${label} needs a base URL to list its models`);
  }
  return {
    kind: 'openai',
    client: await openaiClient({
      // Local servers ignore the key, but the SDK insists on a string.
      apiKey: endpoint.apiKey ?? 'no-key',
      baseURL: endpoint.baseUrl,
      maxRetries: 0,
      timeout: timeoutMs,
    }),
  };
}

const positive = (value: number | null | undefined) =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;

/** An entry of either provider's list, with the limits only where the endpoint states them. */
function toServed(model: { id: string; max_input_tokens?: number | null; max_tokens?: number | null }) {
  const served: ServedModel = { id: model.id };
  const window = positive(model.max_input_tokens);
  const output = positive(model.max_tokens);
  if (window !== undefined) served.contextWindow = window;
  if (output !== undefined) served.maxOutputTokens = output;
  return served;
}

/**
 * Every model the endpoint lists (all pages). Throws a ProviderError in words a person can act on (no key,
 * rejected key, unreachable, timed out).
 */
export async function listServedModels(
  endpoint: ModelsEndpoint,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ServedModel[]> {
  const timeoutMs = options.timeoutMs ?? MODELS_ENDPOINT_TIMEOUT_MS;
  const client = await clientFor(endpoint, timeoutMs);
  const models: ServedModel[] = [];
  try {
    if (client.kind === 'anthropic') {
      for await (const model of client.client.models.list({ limit: 1000 }, { signal: options.signal })) {
        models.push(toServed(model));
      }
    } else {
      for await (const model of client.client.models.list({ signal: options.signal })) {
        models.push(toServed({ id: model.id }));
      }
    }
  } catch (error) {
    throw toProviderError(error, LABEL[endpoint.provider], options.signal);
  }
  return models;
}

/**
 * Asks the endpoint about one model (`GET /v1/models/{id}`, which also resolves aliases): served, or not
 * served with the provider's own words for why (its error text and status). Other failures throw a
 * ProviderError.
 */
export async function checkServedModel(
  endpoint: ModelsEndpoint,
  id: string,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<{ served: true; model: ServedModel } | { served: false; message: string }> {
  const timeoutMs = options.timeoutMs ?? MODELS_ENDPOINT_TIMEOUT_MS;
  const client = await clientFor(endpoint, timeoutMs);
  try {
    if (client.kind === 'anthropic') {
      return {
        served: true,
        model: toServed(await client.client.models.retrieve(id, {}, { signal: options.signal })),
      };
    }
    const model = await client.client.models.retrieve(id, { signal: options.signal });
    return { served: true, model: toServed({ id: model.id }) };
  } catch (error) {
    if ((error as { status?: number }).status === 404) {
      return { served: false, message: `${providerMessage(error)} (404)` };
    }
    throw toProviderError(error, LABEL[endpoint.provider], options.signal);
  }
}
