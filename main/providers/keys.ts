import { endpointKeyOf } from '../common/appSettings.js';

/**
 * API keys from settings (the OS keychain in the app, the home's encrypted key file under `keel serve`); the
 * environment is the fallback. `endpoints`: OpenAI-compatible endpoints' own keys by base URL (endpointKeyOf).
 */
export type ProviderKeys = {
  anthropic?: string;
  openai?: string;
  openaiCompatible?: string;
  endpoints?: Readonly<Record<string, string>>;
};

/**
 * The key for `provider`: settings' first, else ANTHROPIC_API_KEY / OPENAI_API_KEY /
 * KEEL_OPENAI_COMPATIBLE_API_KEY. An OpenAI-compatible server at `baseUrl` with a key of its own gets that key
 * (issue #37), else the shared one. An empty value (`KEY=` in a shell profile) means "not set".
 */
export function providerKey(
  provider: 'anthropic' | 'openai' | 'openai-compatible',
  keys: ProviderKeys,
  env: NodeJS.ProcessEnv,
  baseUrl?: string,
): string | undefined {
  const candidates =
    provider === 'anthropic'
      ? [keys.anthropic, env['ANTHROPIC_API_KEY']]
      : provider === 'openai'
        ? [keys.openai, env['OPENAI_API_KEY']]
        : [
            baseUrl === undefined ? undefined : keys.endpoints?.[endpointKeyOf(baseUrl)],
            keys.openaiCompatible,
            env['KEEL_OPENAI_COMPATIBLE_API_KEY'],
          ];
  return candidates.find((value) => value !== undefined && value !== '');
}

/** Every key in `keys` with a name for redaction (`keel:<provider>`, `keel:endpoint:<url>`). */
export function namedKeys(keys: ProviderKeys): Record<string, string> {
  const named: Record<string, string> = {};
  for (const name of ['anthropic', 'openai', 'openaiCompatible'] as const) {
    const value = keys[name];
    if (value) named[`keel:${name}`] = value;
  }
  for (const [url, value] of Object.entries(keys.endpoints ?? {}))
    if (value) named[`keel:endpoint:${url}`] = value;
  return named;
}
