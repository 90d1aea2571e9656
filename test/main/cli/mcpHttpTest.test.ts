import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
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
    expect(listed.stdout).toBe('web (settings, http): ready\n  mcp__web__shout\n');
  }, 60_000);
});
