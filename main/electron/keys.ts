import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IpcFailure } from '../ipc/errors.js';
import type { KeyChanges, KeyName, KeyStore } from '../ipc/keys.js';
import { type ProviderKeys, type SecretEncryptor } from '../core/harness/index.js';

/** The part of Electron's safeStorage the key store uses. */
export type SafeStorageLike = {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: which secret store backs the encryption; `basic_text` is a hard-coded key, i.e. plain text. */
  getSelectedStorageBackend?: () => string;
};

/** `<userData>/keys.json`: each provider's key encrypted by the OS (base64 of safeStorage's ciphertext). */
export const KEYS_FILE = 'keys.json';

const KeysFile = z.object({
  version: z.literal(1),
  keys: z.partialRecord(z.enum(['anthropic', 'openai', 'openaiCompatible']), z.string()),
});

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
 * API keys in the OS keychain via safeStorage: encrypted on disk, never written in plain text (a store that
 * could only write plain text refuses). Unreadable entries (another machine's ciphertext) count as absent.
 */
export function createSafeStorageKeyStore(
  safeStorage: SafeStorageLike,
  userData: string,
  platform: NodeJS.Platform = process.platform,
): KeyStore {
  const file = path.join(userData, KEYS_FILE);
  const readFile = (): Partial<Record<KeyName, string>> => {
    try {
      const parsed = KeysFile.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      return parsed.success ? parsed.data.keys : {};
    } catch {
      return {};
    }
  };
  return {
    kind: 'keychain',
    read(): ProviderKeys {
      if (keychainProblem(safeStorage, platform)) return {};
      const keys: ProviderKeys = {};
      for (const [name, encrypted] of Object.entries(readFile()) as [KeyName, string][]) {
        try {
          keys[name] = safeStorage.decryptString(Buffer.from(encrypted, 'base64'));
        } catch {
          // Encrypted by another user or machine: treat as not set.
        }
      }
      return keys;
    },
    write(changes: KeyChanges) {
      const problem = keychainProblem(safeStorage, platform);
      if (problem) throw new IpcFailure('not_available', problem);
      const stored = readFile();
      for (const [name, value] of Object.entries(changes) as [KeyName, string | null | undefined][]) {
        if (value === undefined) continue;
        if (value === null) delete stored[name];
        else stored[name] = safeStorage.encryptString(value).toString('base64');
      }
      fs.mkdirSync(userData, { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, `${JSON.stringify({ version: 1, keys: stored }, null, 2)}\n`, { mode: 0o600 });
      fs.renameSync(temp, file);
    },
  };
}
