import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/*
 * MCP servers' OAuth grants, encrypted at rest in the Keel home (`<home>/mcp-credentials/`): one file per
 * server, AES-256-GCM under a random key kept beside them with mode 0600, or, when the host hands in its OS
 * keychain's cipher (the app: safeStorage), a `.keychain.bin` file encrypted by it and no key file at all. A
 * keychain host still reads a grant the CLI stored with the key file (one it has not replaced), so signing in
 * once in a terminal works in the app too. The home is hidden from every box, never exported, and no event
 * names a token. A file that does not decrypt (another key, damage) reads as "not signed in", never as an error
 * with its bytes.
 */

/** Encrypts and decrypts the credential files (the default: a key file; the app: safeStorage). */
export type SecretCipher = { encrypt(text: string): Buffer; decrypt(data: Buffer): string };

const FOLDER = 'mcp-credentials';

function folderOf(home: string): string {
  const folder = path.join(home, FOLDER);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  return folder;
}

/** The default cipher: AES-256-GCM with `<home>/mcp-credentials/key` (made on first use, mode 0600). */
export function fileKeyCipher(home: string): SecretCipher {
  const keyFile = path.join(folderOf(home), 'key');
  const key = (): Buffer => {
    try {
      const existing = fs.readFileSync(keyFile);
      if (existing.length === 32) return existing;
    } catch {
      // made below
    }
    const fresh = crypto.randomBytes(32);
    fs.writeFileSync(keyFile, fresh, { mode: 0o600 });
    return fresh;
  };
  return {
    encrypt(text) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key(), iv);
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decrypt(data) {
      const decipher = crypto.createDecipheriv('aes-256-gcm', key(), data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * A server's credential file (named by a hash of the server's name and URL: a changed URL signs in anew); a
 * keychain's has its own name, so the CLI never tries to read what only the app's keychain decrypts.
 */
function fileOf(home: string, server: string, url: string, keychain: boolean): string {
  const id = crypto.createHash('sha256').update(`${server}\n${url}`).digest('hex').slice(0, 32);
  return path.join(folderOf(home), keychain ? `${id}.keychain.bin` : `${id}.bin`);
}

function decryptFile(file: string, cipher: () => SecretCipher): Record<string, unknown> | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(cipher().decrypt(data));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a server's credentials; undefined when there are none or they cannot be decrypted. `keychain`: the
 * host's OS keychain cipher (its file first, then a grant the key file holds, if a key file exists).
 */
export function readMcpCredentials(
  home: string,
  server: string,
  url: string,
  keychain?: SecretCipher,
): Record<string, unknown> | undefined {
  if (keychain) {
    const own = decryptFile(fileOf(home, server, url, true), () => keychain);
    if (own) return own;
    // Never made here: a keychain host does not create the key file just to find it has nothing.
    if (!fs.existsSync(path.join(folderOf(home), 'key'))) return undefined;
  }
  return decryptFile(fileOf(home, server, url, false), () => fileKeyCipher(home));
}

/**
 * Writes a server's credentials (atomically, mode 0600) with the keychain's cipher when given, else the key
 * file's; an empty object removes them (both files: signing out in the app signs out the CLI too).
 */
export function writeMcpCredentials(
  home: string,
  server: string,
  url: string,
  credentials: Record<string, unknown>,
  keychain?: SecretCipher,
): void {
  const file = fileOf(home, server, url, keychain !== undefined);
  const kept = Object.fromEntries(Object.entries(credentials).filter(([, value]) => value !== undefined));
  if (Object.keys(kept).length === 0) {
    fs.rmSync(fileOf(home, server, url, true), { force: true });
    fs.rmSync(fileOf(home, server, url, false), { force: true });
    return;
  }
  const cipher = keychain ?? fileKeyCipher(home);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, cipher.encrypt(JSON.stringify(kept)), { mode: 0o600 });
  fs.renameSync(temp, file);
}
