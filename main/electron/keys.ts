import { IpcFailure } from '../ipc/errors.js';
import type { KeyChanges, KeyStore } from '../ipc/keys.js';
import {
  homeKeyCipher,
  readKeyFile,
  type SecretCipher,
  type SecretEncryptor,
  writeKeyFile,
} from '../core/harness/index.js';

export { KEYS_FILE } from '../core/harness/index.js';

/** The part of Electron's safeStorage the key store uses. */
export type SafeStorageLike = {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: which secret store backs the encryption; `basic_text` is a hard-coded key, i.e. plain text. */
  getSelectedStorageBackend?: () => string;
};

/** Why keys cannot be stored here, or undefined when the OS keychain can encrypt them. */
export function keychainProblem(safeStorage: SafeStorageLike, platform: NodeJS.Platform): string | undefined {
  if (!safeStorage.isEncryptionAvailable()) {
    return 'the OS keychain is not available, so Keel will not store API keys: set ANTHROPIC_API_KEY / OPENAI_API_KEY in the environment instead';
  }
  if (platform === 'linux' && safeStorage.getSelectedStorageBackend?.() === 'basic_text') {
    return 'no keyring (GNOME Keyring, KWallet) is running, so keys could only be stored in plain text; Keel will not: start a keyring or use environment variables';
  }
  return undefined;
}

/**
 * Issue 33: the encryptor MCP sign-in tokens are kept with (handed to the core's `useKeychainForMcpTokens`), or
 * undefined where safeStorage could only write plain text: then the core keeps its 0600 key file and says so.
 */
export function mcpTokenEncryptor(
  safeStorage: SafeStorageLike,
  platform: NodeJS.Platform = process.platform,
): SecretEncryptor | undefined {
  if (keychainProblem(safeStorage, platform)) return undefined;
  return {
    encryptString: (text) => safeStorage.encryptString(text),
    decryptString: (data) => safeStorage.decryptString(data),
  };
}

/**
 * API keys in the key file (`<userData>/keys.json`), each entry sealed by the OS keychain via safeStorage: never
 * written in plain text (a store that could only write plain text refuses). Entries `keel serve` sealed with the
 * Keel home's key file are read too (issue #37: one store); unreadable entries (another machine's ciphertext)
 * count as absent.
 */
export function createSafeStorageKeyStore(
  safeStorage: SafeStorageLike,
  userData: string,
  platform: NodeJS.Platform = process.platform,
  home: string = userData,
): KeyStore {
  const os: SecretCipher = {
    encrypt: (text) => safeStorage.encryptString(text),
    decrypt: (data) => safeStorage.decryptString(data),
  };
  const file = homeKeyCipher(home);
  return {
    kind: 'keychain',
    read: () => readKeyFile(userData, keychainProblem(safeStorage, platform) ? { file } : { os, file }),
    write(changes: KeyChanges) {
      const problem = keychainProblem(safeStorage, platform);
      if (problem) throw new IpcFailure('not_available', problem);
      writeKeyFile(userData, changes, { name: 'os', cipher: os });
    },
  };
}
