import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventOf } from '../../../main/common/events.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { McpPool } from '../../../main/core/mcp/pool.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { createScriptedSession, useSessionFixture } from '../../support/sessionFixture.js';
import { writeMcpSettings } from '../../support/turnHost.js';

// A Streamable HTTP server (the SDK's server API, stateless: no GET stream, so its tools/list_changed reaches
// no one) that changes its tools between a kept session's turns; the real turn engine and scripted provider.
// Only the re-list at each turn's start can notice the change.
let server: http.Server;
let port = 0;
/** Tools the server offers now; `add_tool` adds "added" (and the SDK sends a list_changed nobody gets). */
let tools: Set<string>;
let lists = 0;
/** While set, every request gets a 500 (the server is broken). */
let broken = false;

const fixture = useSessionFixture('keel-mcp-http-list-', {
  prepare: async () => {
    tools = new Set(['shout', 'add_tool']);
    lists = 0;
    broken = false;
    server = http.createServer((req, res) => {
      if (broken) {
        res.writeHead(500).end('broken');
        return;
      }
      const mcp = new McpServer({ name: 'http-list-fixture', version: '1.0.0' });
      const register = (name: string) =>
        mcp.registerTool(
          name,
          { description: `The ${name} tool.`, inputSchema: { text: z.string().optional() } },
          ({ text }) => {
            if (name === 'add_tool') {
              tools.add('added');
              register('added');
            }
            return Promise.resolve({
              content: [{ type: 'text', text: `${name} ran${text ? `: ${text}` : ''}` }],
            });
          },
        );
      for (const name of tools) register(name);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => void transport.close());
      void mcp.connect(transport).then(() => {
        // Counts the tools/list requests (each turn's start lists once).
        const handled = transport.onmessage;
        transport.onmessage = (message, extra) => {
          if ('method' in message && message.method === 'tools/list') lists++;
          handled?.(message, extra);
        };
        return transport.handleRequest(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    writeMcpSettings(fixture.home, { web: { url: `http://127.0.0.1:${port}/mcp` } });
  },
  cleanup: async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  },
});

const session = (): SessionLog =>
  createScriptedSession(fixture, {
    policy: 'full-auto',
    toolMode: 'write',
    networkAllow: [`127.0.0.1:${port}`],
  });

async function turn(log: SessionLog, pool: McpPool, name: string, notices: string[] = []) {
  fixture.server.enqueue(
    { kind: 'reply', text: '', toolCalls: [{ id: 'c1', name, arguments: {} }] },
    { kind: 'reply', text: 'done' },
  );
  const host = await createTurnHost(log, {
    env: { PATH: process.env.PATH },
    hooks: { onNotice: (text) => notices.push(text) },
    mcpPool: pool,
  });
  try {
    return await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
}
type ToolsBody = { tools?: { function: { name: string } }[] };
/** The MCP tools the i-th provider request offered. */
const toolsOfRequest = (i: number) =>
  ((fixture.server.requests[i]?.body as ToolsBody).tools ?? [])
    .map((t) => t.function.name)
    .filter((name) => name.startsWith('mcp__'));
const listed = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');
const lastResult = (log: SessionLog) =>
  log
    .read()
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')
    .at(-1);

describe('a kept Streamable HTTP server whose tools change between turns', () => {
  it('is listed again at the next turn start: the new tool is offered and called, and the change recorded', async () => {
    const log = session();
    const pool = new McpPool();
    try {
      expect(await turn(log, pool, 'mcp__web__add_tool')).toEqual({ status: 'completed', text: 'done' });
      expect(lastResult(log)?.content).toBe('add_tool ran');
      // Within the turn the list stays what the turn started with.
      expect(toolsOfRequest(0)).toEqual(['mcp__web__shout', 'mcp__web__add_tool']);
      expect(toolsOfRequest(1)).toEqual(['mcp__web__shout', 'mcp__web__add_tool']);
      expect(listed(log)).toHaveLength(1);
      expect(lists).toBe(1);

      // The server's notice went nowhere (no GET stream); the next turn's re-list finds the new tool.
      expect(await turn(log, pool, 'mcp__web__added')).toEqual({ status: 'completed', text: 'done' });
      expect(lists).toBe(2);
      expect(toolsOfRequest(2)).toContain('mcp__web__added');
      expect(lastResult(log)?.content).toBe('added ran');
      expect(listed(log)).toHaveLength(2);
      expect(listed(log)[1]).toMatchObject({
        changedBy: ['web'],
        servers: [
          {
            name: 'web',
            transport: 'http',
            tools: ['mcp__web__shout', 'mcp__web__add_tool', 'mcp__web__added'],
          },
        ],
      });

      // A tool the server drops is gone at the next turn; an unchanged list records nothing new.
      tools.delete('shout');
      await turn(log, pool, 'mcp__web__shout');
      expect(lastResult(log)?.content).toMatch(/unknown tool/);
      expect(toolsOfRequest(4)).not.toContain('mcp__web__shout');
      expect(listed(log)).toHaveLength(3);
      expect(listed(log)[2]).toMatchObject({ changedBy: ['web'] });
      await turn(log, pool, 'mcp__web__added');
      expect(lists).toBe(4);
      expect(listed(log)).toHaveLength(3);

      // A re-list that fails leaves the turn without the server's tools, on record and said; the next turn
      // starts the server anew rather than keeping a closed connection.
      broken = true;
      const notices: string[] = [];
      await turn(log, pool, 'mcp__web__added', notices);
      expect(lastResult(log)?.content).toMatch(/unknown tool/);
      expect(listed(log).at(-1)?.servers[0]).toMatchObject({ state: 'failed', tools: [] });
      expect(notices.join('\n')).toMatch(
        /MCP server "web" failed: tools\/list failed: .*; it restarts at the next turn/,
      );
      broken = false;
      await turn(log, pool, 'mcp__web__added');
      expect(lastResult(log)?.content).toBe('added ran');
      expect(listed(log).at(-1)?.servers[0]).toMatchObject({ state: 'ready' });
    } finally {
      await pool.stop();
      log.close();
    }
  });
});
