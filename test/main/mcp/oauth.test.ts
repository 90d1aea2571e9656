import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  inspectMcpServers,
  loginMcpServer,
  logoutMcpServer,
  mcpSignInState,
} from '../../../main/core/harness/index.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { type OAuthFixture, startOAuthFixture } from '../../support/oauthServer.js';

// OAuth for a Streamable HTTP MCP server, against a loopback authorization server speaking the spec.
let auth: OAuthFixture;
let home: string;
let allow: string[];

beforeEach(async () => {
  auth = await startOAuthFixture();
  home = makeTempDir('keel-mcp-oauth-');
  allow = [`127.0.0.1:${auth.port}`];
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { secure: { url: auth.mcpUrl, headers: {} } } } }),
  );
});
afterEach(async () => {
  await auth.close();
  removeTempDir(home);
});

const stateOf = async () =>
  (await inspectMcpServers(home, undefined, { only: 'secure', networkAllow: allow })).servers[0]?.state;

/** Every file under the home, as bytes joined (to prove a token is nowhere in the clear). */
function homeBytes(): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else parts.push(fs.readFileSync(full).toString('latin1'));
    }
  };
  walk(home);
  return parts.join('\n');
}

/** The browser: follows the authorization URL and its redirect to Keel's loopback callback. */
async function browser(url: URL) {
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('code_challenge')).toBeTruthy();
  expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  expect(location).toBeTruthy();
  const back = await fetch(location ?? '');
  expect(back.status).toBe(200);
}

describe('MCP OAuth', () => {
  it('signs in (discovery, registration, PKCE, loopback redirect), refreshes, and says so when revoked', async () => {
    expect(await stateOf()).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/keel mcp login secure/) as unknown,
    });
    expect(mcpSignInState(home, 'secure')).toBe('signed_out');

    let opened = 0;
    expect(
      await loginMcpServer(home, 'secure', {
        networkAllow: allow,
        open: async (url) => {
          opened += 1;
          await browser(url);
        },
      }),
    ).toBe('signed_in');
    expect(opened).toBe(1);
    expect(mcpSignInState(home, 'secure')).toBe('signed_in');
    expect(auth.grants).toEqual(['authorization_code']);
    expect(await stateOf()).toEqual({ state: 'ready' });

    // An expired access token is refreshed with the stored refresh token, no browser.
    auth.expireAccessTokens();
    expect(await stateOf()).toEqual({ state: 'ready' });
    expect(auth.grants).toEqual(['authorization_code', 'refresh_token']);

    // No token is anywhere in the home in the clear (the credentials are encrypted; no log or listing has them).
    const bytes = homeBytes();
    for (const token of auth.issued) expect(bytes.includes(token)).toBe(false);

    // A revoked grant: the server does not start, the state says sign in again, the stored tokens are gone.
    auth.revokeAll();
    expect(await stateOf()).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/sign-in|sign in/) as unknown,
    });
    expect(mcpSignInState(home, 'secure')).toBe('revoked');
  });

  it('refuses a sign-in whose host is not allowed, and signs out', async () => {
    await expect(loginMcpServer(home, 'secure', { networkAllow: [], open: () => undefined })).rejects.toThrow(
      /not on this session's network allowlist/,
    );
    await loginMcpServer(home, 'secure', { networkAllow: allow, open: browser });
    expect(mcpSignInState(home, 'secure')).toBe('signed_in');
    logoutMcpServer(home, 'secure');
    expect(mcpSignInState(home, 'secure')).toBe('signed_out');
    expect(fs.readdirSync(path.join(home, 'mcp-credentials')).filter((f) => f.endsWith('.bin'))).toEqual([]);
  });
});
