import { type ProviderKeys } from '../core/harness/index.js';

/** A provider whose API key Keel can hold. */
export type KeyName = keyof ProviderKeys;

/** Key changes: a string sets a key, null removes it, absent leaves it. */
export type KeyChanges = { [K in KeyName]?: string | null };

/**
 * Where API keys live: the OS keychain in the app (safeStorage), the process's memory over the environment in
 * `keel serve`, the environment alone for the CLI.
 */
export type KeyStore = {
  /** `keychain`: encrypted by the OS, writable; `memory`: writable, gone when the process stops; `environment`: read-only. */
  readonly kind: 'keychain' | 'memory' | 'environment';
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

/**
 * Issue #37: `keel serve`'s keys typed in the page. Plain Node has no OS keychain (Electron's safeStorage is the
 * app's), and Keel never writes a key in plain text, so they are held in this process's memory until it stops;
 * a key set here is used before the environment's. The page is told only whether a key is set.
 */
export function memoryKeyStore(): KeyStore {
  const held: ProviderKeys = {};
  return {
    kind: 'memory',
    read: () => ({ ...held }),
    write(changes: KeyChanges) {
      for (const [name, value] of Object.entries(changes) as [KeyName, string | null | undefined][]) {
        if (value === undefined) continue;
        if (value === null) delete held[name];
        else held[name] = value;
      }
    },
  };
}
