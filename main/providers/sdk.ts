import type Anthropic from '@anthropic-ai/sdk';
import type { ClientOptions as AnthropicOptions } from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ClientOptions as OpenAIOptions } from 'openai';

/*
 * The provider SDKs, loaded at the first request rather than when this folder is imported: together they are
 * ~420 files and ~0.25 s of start-up, paid before then by every `keel` command (`--help` included) and by
 * every host that imports `createProvider`. A provider is still built synchronously (a missing key still
 * throws at once); only its client waits for the first request, which is async anyway. Each SDK is imported
 * once per process.
 */

let anthropic: Promise<typeof Anthropic> | undefined;
let openai: Promise<typeof OpenAI> | undefined;

/** A new Anthropic client, its SDK imported on first use. */
export async function anthropicClient(options: AnthropicOptions): Promise<Anthropic> {
  anthropic ??= import('@anthropic-ai/sdk').then((sdk) => sdk.default);
  const Client = await anthropic;
  return new Client(options);
}

/** A new OpenAI client (OpenAI or an OpenAI-compatible server), its SDK imported on first use. */
export async function openaiClient(options: OpenAIOptions): Promise<OpenAI> {
  openai ??= import('openai').then((sdk) => sdk.default);
  const Client = await openai;
  return new Client(options);
}

/** One client per provider object, made at its first request (`get()` answers the same promise after). */
export function lazyClient<T>(make: () => Promise<T>): { get: () => Promise<T> } {
  let client: Promise<T> | undefined;
  return {
    get: () => {
      // A failed import is not kept: the next request tries again.
      client ??= make().catch((error: unknown) => {
        client = undefined;
        throw error;
      });
      return client;
    },
  };
}
