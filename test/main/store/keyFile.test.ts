import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endpointKeyOf } from '../../../main/common/appSettings.js';
import { sessionRedactor } from '../../../main/core/harness/workspace.js';
import { createSafeStorageKeyStore, type SafeStorageLike } from '../../../main/electron/keys.js';
import { fileKeyStore } from '../../../main/ipc/keys.js';
import { providerKey } from '../../../main/providers/keys.js';
import { KEYS_FILE, readKeyFile } from '../../../main/store/keyFile.js';

/*
 * Issue #37: the one API key file. `keel serve` keeps keys typed in the page in `<home>/keys.json` sealed by the
 * home's 0600 key file (a restart keeps them); the app seals its entries with the OS keychain in the same file
 * format and reads serve's; neither writes a key in plain text. OpenAI-compatible endpoints have keys of their own,
 * by base URL, sent only to that URL and redacted from every tool's output.
 */

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-keyfile-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** A stand-in for Electron's safeStorage: AES-GCM under a key only this "OS" knows. */
function keychain(): SafeStorageLike {
  const key = crypto.randomBytes(32);
  return {
    isEncryptionAvailable: () => true,
    getSelectedStorageBackend: () => 'gnome_libsecret',
    encryptString: (text) => {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decryptString: (data) => {
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

const GATEWAY = 'http://127.0.0.1:8000/v1';

describe('the API key file (#37)', () => {
  it("keeps serve's keys encrypted in the home across a new store (a restart), never in plain text", () => {
    const serve = fileKeyStore(home);
    serve.write?.({
      openaiCompatible: 'sk-shared-secret-1',
      endpoints: { [`${GATEWAY}/`]: 'sk-gateway-secret-2' },
    });
    // A restart is a new store over the same home.
    const again = fileKeyStore(home);
    expect(again.read()).toEqual({
      openaiCompatible: 'sk-shared-secret-1',
      endpoints: { [GATEWAY]: 'sk-gateway-secret-2' },
    });
    const file = path.join(home, KEYS_FILE);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('secret');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(home, 'mcp-credentials', 'key')).mode & 0o777).toBe(0o600);
    again.write?.({ endpoints: { [GATEWAY]: null } });
    expect(fileKeyStore(home).read()).toEqual({ openaiCompatible: 'sk-shared-secret-1' });
    // Another home's key file cannot open these entries: not set, not an error.
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-keyfile-other-'));
    try {
      fs.copyFileSync(file, path.join(other, KEYS_FILE));
      expect(fileKeyStore(other).read()).toEqual({});
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it("is one store: the app reads serve's entries, serve leaves the app's keychain entries as they are", () => {
    const os = keychain();
    // An app key file of before issue #37 (version 1) is still read.
    const legacy = os.encryptString('sk-ant-legacy-3').toString('base64');
    fs.writeFileSync(path.join(home, KEYS_FILE), JSON.stringify({ version: 1, keys: { anthropic: legacy } }));
    const app = createSafeStorageKeyStore(os, home, 'linux', home);
    expect(app.read()).toEqual({ anthropic: 'sk-ant-legacy-3' });

    fileKeyStore(home).write?.({ endpoints: { [GATEWAY]: 'sk-gateway-from-serve' } });
    // Serve cannot open the keychain's entry (plain Node has no OS keychain): it counts as not set there.
    expect(fileKeyStore(home).read()).toEqual({ endpoints: { [GATEWAY]: 'sk-gateway-from-serve' } });
    expect(app.read()).toEqual({
      anthropic: 'sk-ant-legacy-3',
      endpoints: { [GATEWAY]: 'sk-gateway-from-serve' },
    });
    app.write?.({ openai: 'sk-openai-app-4' });
    expect(readKeyFile(home, {})).toEqual({});
    expect(app.read()).toMatchObject({ anthropic: 'sk-ant-legacy-3', openai: 'sk-openai-app-4' });
    expect(fs.readFileSync(path.join(home, KEYS_FILE), 'utf8')).not.toMatch(/sk-/);
  });

  it("sends an endpoint's own key only to its URL, else the shared key; every key is redacted by name", () => {
    const keys = { openaiCompatible: 'sk-shared-5', endpoints: { [GATEWAY]: 'sk-gateway-own-6' } };
    const env = { KEEL_OPENAI_COMPATIBLE_API_KEY: 'sk-env-7' };
    expect(providerKey('openai-compatible', keys, env, 'HTTP://127.0.0.1:8000/v1/')).toBe('sk-gateway-own-6');
    expect(providerKey('openai-compatible', keys, env, 'http://127.0.0.1:8001/v1')).toBe('sk-shared-5');
    expect(providerKey('openai-compatible', keys, env)).toBe('sk-shared-5');
    expect(providerKey('openai-compatible', { endpoints: keys.endpoints }, env, 'http://x.test/v1')).toBe(
      'sk-env-7',
    );
    expect(endpointKeyOf(' https://Gateway.example:443/v1// ')).toBe('https://gateway.example/v1');

    // Shapes no pattern knows: only the names Keel gives its own keys redact them.
    const plain = { openaiCompatible: 'plainshared5', endpoints: { [GATEWAY]: 'plaingateway6' } };
    const shown = sessionRedactor(home, {}, plain).redact('printed plaingateway6 and plainshared5');
    expect(shown).toMatch(
      /^printed \[REDACTED:keel_endpoint_http_+127\.0\.0\.1_8000_v1\] and \[REDACTED:keel_openaiCompatible\]$/,
    );
  });
});
