/** API keys from settings (the OS keychain in the app); the environment is the fallback. */
export type ProviderKeys = { anthropic?: string; openai?: string; openaiCompatible?: string };

/**
 * The key for `provider`: settings' first, else ANTHROPIC_API_KEY / OPENAI_API_KEY /
 * KEEL_OPENAI_COMPATIBLE_API_KEY. An empty value (`KEY=` in a shell profile) means "not set".
 */
export function providerKey(
  provider: 'anthropic' | 'openai' | 'openai-compatible',
  keys: ProviderKeys,
  env: NodeJS.ProcessEnv,
): string | undefined {
  const candidates =
    provider === 'anthropic'
      ? [keys.anthropic, env['ANTHROPIC_API_KEY']]
      : provider === 'openai'
        ? [keys.openai, env['OPENAI_API_KEY']]
        : [keys.openaiCompatible, env['KEEL_OPENAI_COMPATIBLE_API_KEY']];
  return candidates.find((value) => value !== undefined && value !== '');
}
