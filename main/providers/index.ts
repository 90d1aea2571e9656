import type { ModelPin } from '../core/log/events.js';
import { AnthropicProvider } from './anthropic.js';
import { ProviderError } from './errors.js';
import { OpenAIProvider } from './openai.js';
import type { ModelProvider } from './types.js';

export * from './types.js';
export * from './errors.js';
export * from './catalogue.js';
export { withRetries, backoffDelay } from './retry.js';
export { toAnthropicRequest } from './anthropic.js';
export { toOpenAIRequest } from './openai.js';

/** API keys from settings (the OS keychain in the app); the environment is the fallback. */
export type ProviderKeys = { anthropic?: string; openai?: string; openaiCompatible?: string };

/**
 * Builds the provider a session is pinned to. Keys come from settings, else ANTHROPIC_API_KEY /
 * OPENAI_API_KEY (or KEEL_OPENAI_COMPATIBLE_API_KEY); a missing key throws a ProviderError naming it.
 */
export function createProvider(
  pin: Pick<ModelPin, 'provider' | 'baseUrl'>,
  keys: ProviderKeys = {},
  env: NodeJS.ProcessEnv = process.env,
): ModelProvider {
  // An empty value (`KEY=` in a shell profile) means "not set", not "send an empty key".
  const key = (...candidates: (string | undefined)[]) =>
    candidates.find((value) => value !== undefined && value !== '');
  switch (pin.provider) {
    case 'anthropic':
      return new AnthropicProvider({
        apiKey: key(keys.anthropic, env['ANTHROPIC_API_KEY']),
        baseUrl: pin.baseUrl,
      });
    case 'openai':
      return new OpenAIProvider({
        kind: 'openai',
        apiKey: key(keys.openai, env['OPENAI_API_KEY']),
        baseUrl: pin.baseUrl,
      });
    case 'openai-compatible':
      return new OpenAIProvider({
        kind: 'openai-compatible',
        apiKey: key(keys.openaiCompatible, env['KEEL_OPENAI_COMPATIBLE_API_KEY']),
        baseUrl: pin.baseUrl,
      });
    default:
      throw new ProviderError('bad_request', `unknown provider "${String(pin.provider)}"`);
  }
}
