import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { startMcpSession } from '../../../main/mcp/session.js';
import type { NetworkPolicy } from '../../../main/sandbox/box.js';
import type { ToolContext } from '../../../main/tools/types.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';

// A real Streamable HTTP MCP server (the SDK's server API, stateless) on loopback, reached through the
// session's network policy.
let server: http.Server;
let port: number;
let dir: string;
const seen: { authorization?: string; url?: string }[] = [];

beforeEach(async () => {
  dir = makeTempDir('keel-mcp-http-');
  server = http.createServer((req, res) => {
    seen.push({
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      url: req.url ?? '',
    });
    if (req.url === '/moved') {
      res.writeHead(307, { location: 'http://example.com/mcp' }).end();
      return;
    }
    const mcp = new McpServer({ name: 'http-fixture', version: '1.0.0' });
    mcp.registerTool(
      'shout',
      {
        description: 'Upper-cases its text.',
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      ({ text }) => Promise.resolve({ content: [{ type: 'text', text: text.toUpperCase() }] }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  seen.length = 0;
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  removeTempDir(dir);
});

async function start(network: NetworkPolicy, urlPath = '/mcp') {
  return startMcpSession({
    plan: {
      servers: [
        {
          name: 'web',
          source: 'settings',
          config: {
            url: `http://127.0.0.1:${port}${urlPath}`,
            headers: { Authorization: 'Bearer test-token' },
          },
        },
      ],
      project: { status: 'absent' },
      problems: [],
    },
    box: { sandbox: await detectSandbox(), projectRoot: dir, scratchRoot: dir, network },
  });
}

describe('Streamable HTTP servers', () => {
  it('are reached when the host is on the session allowlist, with their headers, and their tools called', async () => {
    const session = await start({ allow: [`127.0.0.1:${port}`] });
    try {
      expect(session.servers).toEqual([
        {
          name: 'web',
          source: 'settings',
          transport: 'http',
          state: { state: 'ready' },
          tools: ['mcp__web__shout'],
        },
      ]);
      const tool = session.tools[0];
      const ctx = {
        idempotencyKey: 'ev3-mcp__web__shout',
        artifactsDir: dir,
        redactor: { redact: (t: string) => t },
      };
      const outcome = await tool?.execute({ text: 'quiet' }, ctx as unknown as ToolContext);
      expect(outcome).toMatchObject({ content: 'QUIET', isError: false });
      expect(seen.every((request) => request.authorization === 'Bearer test-token')).toBe(true);
    } finally {
      await session.close();
    }
  });

  it('are refused before any request when the session allows no network or another host', async () => {
    for (const network of ['none', { allow: ['example.com'] }] as NetworkPolicy[]) {
      const session = await start(network);
      expect(session.servers[0]?.state).toEqual({
        state: 'failed',
        error: `127.0.0.1:${port} is not on this session's network allowlist (allow it with --allow-host 127.0.0.1:${port})`,
        stderrTail: '',
      });
      expect(session.tools).toEqual([]);
      await session.close();
    }
    expect(seen).toEqual([]);
  });

  it('do not follow a redirect elsewhere', async () => {
    const session = await start({ allow: [`127.0.0.1:${port}`] }, '/moved');
    expect(session.servers[0]?.state.state).toBe('failed');
    expect(seen.map((request) => request.url)).toEqual(['/moved']);
    await session.close();
  });
});
