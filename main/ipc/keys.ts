import { type ProviderKeys } from '../core/harness/index.js';

/** A provider whose API key Keel can hold. */
export type KeyName = keyof ProviderKeys;

/** Key changes: a string sets a key, null removes it, absent leaves it. */
export type KeyChanges = { [K in KeyName]?: string | null };

/** Where API keys live: the OS keychain in the app (safeStorage), the environment for the CLI and `keel serve`. */
export type KeyStore = {
  /** `keychain`: encrypted by the OS, writable; `environment`: read-only. */
  readonly kind: 'keychain' | 'environment';
  /** The keys this store holds (never logged, never sent to the UI). */
  read(): ProviderKeys;
  /** Sets or removes keys; absent when the store is read-only. */
  write?: (changes: KeyChanges) => void;
};

/** The environment variable each provider's key is read from when the store has none. */
export const KEY_ENV: Readonly<Record<KeyName, string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  openaiCompatible: 'KEEL_OPENAI_COMPATIBLE_API_KEY',
};

/** A read-only store with nothing in it: providers then read the environment (`keel serve`, the CLI). */
export function environmentKeyStore(): KeyStore {
  return { kind: 'environment', read: () => ({}) };
}

/** Which providers have a key available, from the store or the environment. */
export function keyPresence(store: KeyStore, env: NodeJS.ProcessEnv): Record<KeyName, boolean> {
  const stored = store.read();
  const has = (name: KeyName) => Boolean(stored[name]) || Boolean(env[KEY_ENV[name]]);
  return { anthropic: has('anthropic'), openai: has('openai'), openaiCompatible: has('openaiCompatible') };
}
