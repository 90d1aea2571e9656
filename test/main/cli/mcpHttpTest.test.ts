import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../../support/cli.js';
import { keel, startKeel } from '../../support/keelProcess.js';
import { startOAuthFixture } from '../../support/oauthServer.js';
import { type LoopbackMcpServer, startLoopbackMcpServer } from '../../support/mcpHttpServer.js';

// `keel mcp test NAME --allow-host H` against a real Streamable HTTP MCP server on loopback.
let server: LoopbackMcpServer;
let home: string;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);
beforeEach(async () => {
  server = await startLoopbackMcpServer();
  home = makeTempDir('keel-mcp-http-cli-');
});
afterEach(async () => {
  await server.close();
  removeTempDir(home);
});

describe('keel mcp test on a Streamable HTTP server', () => {
  it('is refused without the host, saying which flag allows it, and ready with --allow-host', async () => {
    expect(await keel(home, ['mcp', 'add', 'web', '--url', server.url])).toMatchObject({ code: 0 });
    const refused = await keel(home, ['mcp', 'test', 'web']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`--allow-host 127.0.0.1:${server.port}`);
    expect(server.requests).toBe(0);

    const allowed = await keel(home, ['mcp', 'test', 'web', '--allow-host', `127.0.0.1:${server.port}`]);
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toBe('web (settings, http): ready\n  mcp__web__shout\n');
    expect(server.requests).toBeGreaterThan(0);
    // Another host on the list does not open this one.
    const other = await keel(home, ['mcp', 'test', 'web', '--allow-host', 'example.com']);
    expect(other.code).toBe(1);
    // list takes the same flag.
    const listed = await keel(home, ['mcp', 'list', '--allow-host', `127.0.0.1:${server.port}`]);
    expect(listed.stdout).toBe(
      'web (settings, http): ready\n  mcp__web__shout\n' +
        'web: not signed in (keel mcp login web if it asks for a sign-in)\n' +
        `sign-in tokens: encrypted in ${home}/mcp-credentials with a key file readable only by you (mode 0600); no OS keychain in this host\n`,
    );
  }, 60_000);

  it('keel mcp login signs in to a server that needs OAuth: the URL printed, the browser answered on loopback', async () => {
    const auth = await startOAuthFixture();
    try {
      const allow = `127.0.0.1:${auth.port}`;
      expect(await keel(home, ['mcp', 'add', 'secure', '--url', auth.mcpUrl])).toMatchObject({ code: 0 });
      const before = await keel(home, ['mcp', 'test', 'secure', '--allow-host', allow]);
      expect(before.code).toBe(1);
      expect(before.stdout).toContain('keel mcp login secure');

      const login = startKeel(home, ['mcp', 'login', 'secure', '--allow-host', allow]);
      await login.waitFor(/^http:\/\/\S+\n/);
      const url = login.stdout().trim();
      // The browser: the authorization server redirects to Keel's loopback callback.
      const answer = await fetch(url, { redirect: 'manual' });
      expect((await fetch(answer.headers.get('location') ?? '')).status).toBe(200);
      const done = await login.done;
      expect(done.code, done.stderr).toBe(0);
      expect(done.stderr).toContain('signed in to secure');

      const after = await keel(home, ['mcp', 'test', 'secure', '--allow-host', allow]);
      expect(after.stdout).toBe(
        'secure (settings, http): ready\n  mcp__secure__shout\n  mcp__secure__whoami\n',
      );
      expect((await keel(home, ['mcp', 'list'])).stdout).toContain('secure: signed in\n');
      // Issue 33: one tool called directly with the stored grant.
      const called = await keel(home, [
        'mcp',
        'call',
        'secure',
        'shout',
        '--args',
        '{"text":"hi"}',
        '--allow-host',
        allow,
      ]);
      expect(called).toMatchObject({ code: 0, stdout: 'HI\n' });
      expect(await keel(home, ['mcp', 'logout', 'secure'])).toMatchObject({ code: 0 });
      expect((await keel(home, ['mcp', 'test', 'secure', '--allow-host', allow])).code).toBe(1);
    } finally {
      await auth.close();
    }
  }, 90_000);
});
