import type { ModelPin } from '../common/events.js';
import { AnthropicProvider } from './anthropic.js';
import { ProviderError } from './errors.js';
import { providerKey, type ProviderKeys } from './keys.js';
import { OpenAIProvider } from './openai.js';
import { OpenAIResponsesProvider } from './openaiResponses.js';
import { LocalProvider } from './local/provider.js';
import type { ModelProvider } from './types.js';

export * from './types.js';
export * from './errors.js';
export * from './catalogue.js';
export { withRetries, backoffDelay } from './retry.js';
export { toAnthropicRequest } from './anthropic.js';
export { toOpenAIRequest, needsToolReasoning } from './openai.js';
export { toResponsesRequest, responsesReasoning } from './openaiResponses.js';
export * from './reasoning.js';
export { providerKey, namedKeys, type ProviderKeys } from './keys.js';
export * from './servedModels.js';
export { LocalProvider } from './local/provider.js';
export {
  setLocalWorkerLauncher,
  stopLocalModels,
  type WorkerLauncher,
  type WorkerHandle,
} from './local/host.js';
export { portLauncher, type PortChild } from './local/portLauncher.js';

/**
 * Builds the provider a session is pinned to (OpenAI: the Responses API; OpenAI-compatible servers: chat
 * completions). Keys come from settings, else ANTHROPIC_API_KEY /
 * OPENAI_API_KEY (or KEEL_OPENAI_COMPATIBLE_API_KEY); a missing key throws a ProviderError naming it.
 */
export function createProvider(
  pin: Pick<ModelPin, 'provider' | 'baseUrl' | 'local'>,
  keys: ProviderKeys = {},
  env: NodeJS.ProcessEnv = process.env,
): ModelProvider {
  switch (pin.provider) {
    case 'anthropic':
      return new AnthropicProvider({
        apiKey: providerKey('anthropic', keys, env),
        baseUrl: pin.baseUrl,
      });
    case 'openai':
      // OpenAI's own endpoint: the Responses API, which carries reasoning from one tool call to the next.
      return new OpenAIResponsesProvider({ apiKey: providerKey('openai', keys, env), baseUrl: pin.baseUrl });
    case 'openai-compatible':
      return new OpenAIProvider({
        kind: 'openai-compatible',
        apiKey: providerKey('openai-compatible', keys, env, pin.baseUrl),
        baseUrl: pin.baseUrl,
      });
    case 'local':
      // The file and its hash are the pin: the worker checks the hash before loading, so resume never switches weights.
      if (!pin.local)
        throw new ProviderError('bad_request', 'this local-model session has no pinned model file');
      return new LocalProvider(pin.local);
    default:
      throw new ProviderError('bad_request', `unknown provider "${String(pin.provider)}"`);
  }
}
