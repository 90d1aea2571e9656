import {
  homeKeyCipher,
  homeStoredKeys,
  type KeyChanges,
  type ProviderKeyName,
  type ProviderKeys,
  writeKeyFile,
} from '../core/harness/index.js';

/** A provider whose one API key Keel can hold. */
export type KeyName = ProviderKeyName;
export type { KeyChanges };

/**
 * Where API keys live: the key file in the app (entries sealed by the OS keychain, safeStorage) and under
 * `keel serve` (entries sealed by the Keel home's 0600 key file), both over the environment; the environment
 * alone for a table made without either (the CLI reads the home's key file itself: homeStoredKeys).
 */
export type KeyStore = {
  /** `keychain`: encrypted by the OS; `file`: encrypted in the Keel home (serve); `environment`: read-only. */
  readonly kind: 'keychain' | 'file' | 'environment';
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

/** A read-only store with nothing in it: providers then read the environment. */
export function environmentKeyStore(): KeyStore {
  return { kind: 'environment', read: () => ({}) };
}

/** Which providers have a key available, from the store or the environment. */
export function keyPresence(store: KeyStore, env: NodeJS.ProcessEnv): Record<KeyName, boolean> {
  const stored = store.read();
  const has = (name: KeyName) => Boolean(stored[name]) || Boolean(env[KEY_ENV[name]]);
  return { anthropic: has('anthropic'), openai: has('openai'), openaiCompatible: has('openaiCompatible') };
}

/** The endpoints (base URLs as stored, see endpointKeyOf) with a key of their own this host can use. */
export function endpointKeyUrls(store: KeyStore): string[] {
  return Object.keys(store.read().endpoints ?? {}).sort();
}

/**
 * Issue #37: `keel serve`'s keys typed in the page, kept as the app keeps its own: in the key file
 * (`<home>/keys.json`), each entry AES-256-GCM under the home's 0600 key file (plain Node has no OS keychain;
 * Keel never writes a key in plain text), so a restart keeps them. Entries the app sealed with the OS keychain
 * cannot be opened here and count as not set. A key set here is used before the environment's.
 */
export function fileKeyStore(home: string): KeyStore {
  const cipher = homeKeyCipher(home);
  return {
    kind: 'file',
    read: () => homeStoredKeys(home),
    write: (changes) => writeKeyFile(home, changes, { name: 'file', cipher }),
  };
}
