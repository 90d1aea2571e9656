import path from 'node:path';
import type { SecretCipher } from '../../store/mcpCredentials.js';

/*
 * Where MCP sign-in tokens are kept (issue 33). The core never imports Electron: a host that has an OS
 * keychain hands in its encryptor once at start (the app: Electron's safeStorage, `main/electron`), and the
 * credential files are then encrypted by it; every other host (the CLI, `keel serve`) keeps the default, an
 * AES-256-GCM key in a 0600 file beside them. Settings and `keel mcp list` say which one is in use.
 */

/** The part of an OS keychain's encryptor the store uses (Electron's safeStorage has this shape). */
export type SecretEncryptor = {
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
};

/** How tokens are kept now: the cipher of the credential files, and the words that say where. */
export type McpTokenStore = {
  kind: 'keychain' | 'key_file';
  /** One sentence for Settings and `keel mcp list`. */
  where: string;
  /** The keychain's cipher; absent for the key file (main/store's default). */
  cipher?: SecretCipher;
};

let keychain: { encryptor: SecretEncryptor; name: string } | undefined;

/**
 * Keeps MCP tokens encrypted by an OS keychain from now on in this process (the app calls it when safeStorage
 * is available); `undefined` goes back to the key file.
 */
export function useKeychainForMcpTokens(
  encryptor: SecretEncryptor | undefined,
  name = 'the OS keychain',
): void {
  keychain = encryptor ? { encryptor, name } : undefined;
}

/** The token store this process uses for a home. */
export function mcpTokenStore(home: string): McpTokenStore {
  const folder = path.join(home, 'mcp-credentials');
  if (keychain) {
    const { encryptor, name } = keychain;
    return {
      kind: 'keychain',
      where: `encrypted by ${name} in ${folder}`,
      cipher: {
        encrypt: (text) => encryptor.encryptString(text),
        decrypt: (data) => encryptor.decryptString(data),
      },
    };
  }
  return {
    kind: 'key_file',
    where: `encrypted in ${folder} with a key file readable only by you (mode 0600); no OS keychain in this host`,
  };
}
