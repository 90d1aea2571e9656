import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configuredMcpServers,
  inspectMcpServers,
  loginMcpServer,
  logoutMcpServer,
  mcpSignInState,
  mcpTokenStore,
  type SecretEncryptor,
  useKeychainForMcpTokens,
} from '../../../main/core/harness/index.js';
import { signInStateOf } from '../../../main/core/mcp/auth.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { type OAuthFixture, startOAuthFixture } from '../../support/oauthServer.js';

// Issue 33: MCP sign-in tokens kept by an injected OS keychain encryptor (the app's safeStorage) instead of the
// key file, proved with a fake encryptor whose ciphertext is recognisable; the CLI's key-file grant still read.
let auth: OAuthFixture;
let home: string;
let allow: string[];
const encrypted: string[] = [];

/** A stand-in for safeStorage: reversible, marked, and never the plaintext. */
const fakeKeychain: SecretEncryptor = {
  encryptString(text) {
    encrypted.push(text);
    return Buffer.concat([Buffer.from('FAKEKC:'), Buffer.from(text, 'utf8').map((byte) => byte ^ 0x5a)]);
  },
  decryptString(data) {
    if (!data.subarray(0, 7).equals(Buffer.from('FAKEKC:'))) throw new Error('not ours');
    return Buffer.from(data.subarray(7).map((byte) => byte ^ 0x5a)).toString('utf8');
  },
};

beforeEach(async () => {
  auth = await startOAuthFixture();
  home = makeTempDir('keel-mcp-tokens-');
  allow = [`127.0.0.1:${auth.port}`];
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { secure: { url: auth.mcpUrl, headers: {} } } } }),
  );
  encrypted.length = 0;
});
afterEach(async () => {
  useKeychainForMcpTokens(undefined);
  await auth.close();
  removeTempDir(home);
});

const browser = async (url: URL) => {
  const answer = await fetch(url, { redirect: 'manual' });
  await fetch(answer.headers.get('location') ?? '');
};
const credentialFiles = () => fs.readdirSync(path.join(home, 'mcp-credentials')).sort();
const bytesOf = (name: string) =>
  fs.readFileSync(path.join(home, 'mcp-credentials', name)).toString('latin1');

describe('MCP tokens in the OS keychain', () => {
  it('encrypts with the injected keychain: no key file, no plaintext on disk, and the grant works', async () => {
    useKeychainForMcpTokens(fakeKeychain, 'the test keychain');
    expect(mcpTokenStore(home)).toMatchObject({
      kind: 'keychain',
      where: expect.stringContaining('the test keychain') as unknown,
    });
    await loginMcpServer(home, 'secure', { networkAllow: allow, open: browser });
    expect(mcpSignInState(home, 'secure')).toBe('signed_in');

    const files = credentialFiles();
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.keychain\.bin$/);
    expect(files).not.toContain('key');
    const bytes = bytesOf(files[0] ?? '');
    expect(bytes.startsWith('FAKEKC:')).toBe(true);
    // The encryptor was handed the tokens, and none of them (nor its plaintext) is in the file.
    expect(encrypted.some((text) => text.includes(auth.issued[0] ?? '?'))).toBe(true);
    for (const token of auth.issued) expect(bytes).not.toContain(token);
    for (const text of encrypted) expect(bytes).not.toContain(text);

    // A session's use of the server goes through the same store.
    const inspected = await inspectMcpServers(home, undefined, { only: 'secure', networkAllow: allow });
    expect(inspected.servers[0]?.state).toEqual({ state: 'ready' });
    expect(configuredMcpServers(home)).toMatchObject({
      servers: [{ name: 'secure', transport: 'http', signIn: 'signed_in' }],
      tokenStorage: expect.stringContaining('the test keychain') as unknown,
    });

    // Without the keychain (the CLI), the keychain's file is not read: not signed in, and it says where tokens go.
    useKeychainForMcpTokens(undefined);
    expect(mcpSignInState(home, 'secure')).toBe('signed_out');
    expect(mcpTokenStore(home)).toMatchObject({
      kind: 'key_file',
      where: expect.stringContaining('0600') as unknown,
    });
  });

  it('reads a grant the CLI kept in the key file, and signing out removes both', async () => {
    await loginMcpServer(home, 'secure', { networkAllow: allow, open: browser });
    expect(credentialFiles()).toEqual(expect.arrayContaining(['key']));
    useKeychainForMcpTokens(fakeKeychain);
    expect(mcpSignInState(home, 'secure')).toBe('signed_in');
    expect(
      (await inspectMcpServers(home, undefined, { only: 'secure', networkAllow: allow })).servers[0]?.state,
    ).toEqual({
      state: 'ready',
    });
    logoutMcpServer(home, 'secure');
    expect(credentialFiles().filter((name) => name.endsWith('.bin'))).toEqual([]);
    useKeychainForMcpTokens(undefined);
    expect(mcpSignInState(home, 'secure')).toBe('signed_out');
  });

  it('tells expired from signed in by the saved time, the lifetime and a refresh token', () => {
    const tokens = { access_token: 'a', token_type: 'Bearer', expires_in: 60 };
    expect(signInStateOf(undefined, 0)).toBe('signed_out');
    expect(signInStateOf({ revoked: true }, 0)).toBe('revoked');
    expect(signInStateOf({ tokens, tokensSavedAt: 1_000 }, 30_000)).toBe('signed_in');
    expect(signInStateOf({ tokens, tokensSavedAt: 1_000 }, 61_000)).toBe('expired');
    expect(signInStateOf({ tokens: { ...tokens, refresh_token: 'r' }, tokensSavedAt: 1_000 }, 61_000)).toBe(
      'signed_in',
    );
  });
});
