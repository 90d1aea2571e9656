import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { endpointKeyOf } from '../common/appSettings.js';
import { fileKeyCipher, type SecretCipher } from './mcpCredentials.js';

/*
 * Issue #37: the one file Keel keeps API keys in, `keys.json` (the app's `<userData>`, `keel serve`'s home; the
 * same folder unless KEEL_HOME moves the home). Each entry is encrypted by the cipher of the host that wrote it
 * and says which: `os` is the desktop app's OS keychain (Electron's safeStorage), `file` is AES-256-GCM under the
 * Keel home's 0600 key file (the MCP grants' cipher), for plain Node (`keel serve`). A host reads the entries its
 * ciphers open and leaves the others as they are; an entry that does not decrypt counts as not set. Keys are
 * never written in plain text, never in settings.json, a log or an export, and the home is hidden from the box.
 */

export const KEYS_FILE = 'keys.json';

/** Which cipher wrote an entry. */
export type KeyCipherName = 'os' | 'file';

/** A provider whose one key Keel can hold. */
export type ProviderKeyName = 'anthropic' | 'openai' | 'openaiCompatible';

/** The keys a host could open (the shape of the providers' ProviderKeys: the store imports only common). */
export type StoredKeys = { [K in ProviderKeyName]?: string } & { endpoints?: Record<string, string> };

/** Key changes: a string sets a key, null removes it, absent leaves it; `endpoints` by base URL. */
export type KeyChanges = { [K in ProviderKeyName]?: string | null } & {
  endpoints?: Readonly<Record<string, string | null>>;
};

const Entry = z.object({ cipher: z.enum(['os', 'file']), data: z.string() });
type Entry = z.infer<typeof Entry>;
// Version 1 (the app before issue #37): providers only, every entry the OS keychain's.
const V1 = z.object({
  version: z.literal(1),
  keys: z.partialRecord(z.enum(['anthropic', 'openai', 'openaiCompatible']), z.string()),
});
// Version 2: `providers` by name, `endpoints` by normalized base URL (endpointKeyOf).
const V2 = z.object({
  version: z.literal(2),
  providers: z.partialRecord(z.enum(['anthropic', 'openai', 'openaiCompatible']), Entry),
  endpoints: z.record(z.string(), Entry),
});
type Stored = z.infer<typeof V2>;

function readStored(file: string): Stored {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return { version: 2, providers: {}, endpoints: {} };
  }
  const v2 = V2.safeParse(raw);
  if (v2.success) return v2.data;
  const v1 = V1.safeParse(raw);
  if (!v1.success) return { version: 2, providers: {}, endpoints: {} };
  const providers: Stored['providers'] = {};
  for (const [name, data] of Object.entries(v1.data.keys) as [ProviderKeyName, string][])
    providers[name] = { cipher: 'os', data };
  return { version: 2, providers, endpoints: {} };
}

/** The keys of `folder`'s key file that `ciphers` open (the others are not set for this host). */
export function readKeyFile(
  folder: string,
  ciphers: Partial<Record<KeyCipherName, SecretCipher>>,
): StoredKeys {
  const stored = readStored(path.join(folder, KEYS_FILE));
  const open = (entry: Entry): string | undefined => {
    const cipher = ciphers[entry.cipher];
    if (!cipher) return undefined;
    try {
      return cipher.decrypt(Buffer.from(entry.data, 'base64'));
    } catch {
      // Encrypted by another user, machine or key file: not set.
      return undefined;
    }
  };
  const keys: StoredKeys = {};
  for (const [name, entry] of Object.entries(stored.providers) as [ProviderKeyName, Entry][]) {
    const value = open(entry);
    if (value !== undefined) keys[name] = value;
  }
  const endpoints: Record<string, string> = {};
  for (const [url, entry] of Object.entries(stored.endpoints)) {
    const value = open(entry);
    if (value !== undefined) endpoints[url] = value;
  }
  if (Object.keys(endpoints).length > 0) keys.endpoints = endpoints;
  return keys;
}

/** Applies `changes` to `folder`'s key file, encrypting new entries with `cipher` (atomically, mode 0600). */
export function writeKeyFile(
  folder: string,
  changes: KeyChanges,
  cipher: { name: KeyCipherName; cipher: SecretCipher },
): void {
  const file = path.join(folder, KEYS_FILE);
  const stored = readStored(file);
  const seal = (value: string): Entry => ({
    cipher: cipher.name,
    data: cipher.cipher.encrypt(value).toString('base64'),
  });
  for (const name of ['anthropic', 'openai', 'openaiCompatible'] as const) {
    const value = changes[name];
    if (value === null) delete stored.providers[name];
    else if (value !== undefined) stored.providers[name] = seal(value);
  }
  for (const [url, value] of Object.entries(changes.endpoints ?? {})) {
    const key = endpointKeyOf(url);
    if (value === null) delete stored.endpoints[key];
    else stored.endpoints[key] = seal(value);
  }
  fs.mkdirSync(folder, { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
}

/** The home's key-file cipher, made (and its key file read) only when an entry is sealed or opened. */
export function homeKeyCipher(home: string): SecretCipher {
  return {
    encrypt: (text) => fileKeyCipher(home).encrypt(text),
    decrypt: (data) => fileKeyCipher(home).decrypt(data),
  };
}

/**
 * The keys plain Node can open in `<home>/keys.json` (those `keel serve` saved; the app's OS-keychain entries
 * cannot be opened without Electron): what `keel serve` and the `keel` CLI use before the environment's.
 */
export function homeStoredKeys(home: string): StoredKeys {
  return readKeyFile(home, { file: homeKeyCipher(home) });
}
