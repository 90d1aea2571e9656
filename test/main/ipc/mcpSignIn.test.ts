import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { type OAuthFixture, startOAuthFixture } from '../../support/oauthServer.js';
import { useIpcFixture } from './support.js';

// Issue 33: the app's Sign in over the handler table Electron mounts: the host's openExternal gets the
// authorization URL (the system browser), signInWait waits for the redirect; a refused edit changes nothing.
const opened: string[] = [];
const ipc = useIpcFixture('keel-ipc-mcp-sign-in-', {
  handlers: ({ home }) =>
    createHandlers({ home, mode: 'electron', version: '1', openExternal: (url) => opened.push(url) }),
});
const { call, fail } = ipc;
let auth: OAuthFixture;
beforeAll(async () => {
  auth = await startOAuthFixture();
});
afterAll(() => auth.close());

describe('mcp sign-in channels (the app)', () => {
  it('opens the system browser with the authorization URL and waits for the redirect', async () => {
    expect(await fail('mcp.saveServer', { name: 'web', fields: { url: 'not a url' } })).toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/^invalid MCP server: url/) as string,
    });
    expect((await call('mcp.configured', {})).servers).toEqual([]);
    await call('mcp.saveServer', { name: 'secure', fields: { url: auth.mcpUrl } });

    const started = await call('mcp.signIn', { name: 'secure', allowHosts: [] });
    expect(started.opened).toBe(true);
    expect(opened).toEqual([started.url]);
    // The browser the app opened: the authorization server redirects to Keel's loopback callback.
    const answer = await fetch(started.url ?? '', { redirect: 'manual' });
    await fetch(answer.headers.get('location') ?? '');
    const after = await call('mcp.signInWait', { name: 'secure' });
    expect(after.servers).toMatchObject([{ name: 'secure', transport: 'http', signIn: 'signed_in' }]);

    expect((await call('mcp.signOut', { name: 'secure' })).servers[0]?.signIn).toBe('signed_out');
    expect(await fail('mcp.signInWait', { name: 'secure' })).toMatchObject({ code: 'invalid_state' });
    expect((await call('mcp.removeServer', { name: 'secure' })).servers).toEqual([]);
  });
});
