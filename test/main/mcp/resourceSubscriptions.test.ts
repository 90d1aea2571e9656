import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import { McpPool } from '../../../main/core/mcp/pool.js';
import { resourcesReadIn } from '../../../main/core/mcp/resourceSubscriptions.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Issue 33: MCP resource subscriptions with a real server no one here wrote (@modelcontextprotocol/server-everything,
// boxed over stdio): the session subscribes to a resource the model read; the server's
// notifications/resources/updated is recorded at the next turn as mcp_resource_updated, and that turn's request
// tells the model (projected from the log).
const EVERYTHING = path.resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const URI = 'demo://resource/dynamic/text/1';
const fixture = useTurnHostFixture('keel-mcp-subscribe-');

describe('resources a session read or attached', () => {
  it('are the read_mcp_resource calls and the <mcp-resource> blocks of user messages, each once', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const events = [
      {
        seq: 2,
        at,
        kind: 'user_message',
        content: 'see <mcp-resource server="docs" uri="file:///a&#34;b">\nx\n</mcp-resource>',
      },
      {
        seq: 3,
        at,
        kind: 'assistant_message',
        content: '',
        toolCalls: [
          {
            id: 'c1',
            name: 'read_mcp_resource',
            arguments: JSON.stringify({ server: 'docs', uri: 'db://t/1' }),
          },
          { id: 'c2', name: 'read_mcp_resource', arguments: '{not json' },
          { id: 'c3', name: 'read_file', arguments: JSON.stringify({ server: 'x', uri: 'y' }) },
          {
            id: 'c4',
            name: 'read_mcp_resource',
            arguments: JSON.stringify({ server: 'docs', uri: 'db://t/1' }),
          },
        ],
      },
    ] as unknown as SessionEvent[];
    expect(resourcesReadIn(events)).toEqual([
      { server: 'docs', uri: 'file:///a"b' },
      { server: 'docs', uri: 'db://t/1' },
    ]);
  });
});

describe.runIf(process.platform === 'linux')('resource subscriptions with server-everything (boxed)', () => {
  it('subscribes to a read resource and records its update for the next turn, where the model is told', async () => {
    writeMcpSettings(fixture.home, {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    const pool = new McpPool();
    const turn = async (calls: { name: string; arguments: Record<string, unknown> }[]) => {
      fixture.server.enqueue(
        ...calls.map((call, i) => ({
          kind: 'reply' as const,
          text: '',
          toolCalls: [{ id: `c${i + 1}`, ...call }],
        })),
        { kind: 'reply', text: 'done' },
      );
      const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH }, mcpPool: pool });
      const outcome = await runTurn(host, { prompt: 'go' });
      await fixture.dispose(host);
      expect(outcome.status).toBe('completed');
    };
    const updates = () =>
      log.read().filter((e): e is EventOf<'mcp_resource_updated'> => e.kind === 'mcp_resource_updated');
    try {
      // Read (which subscribes), then switch on the server's simulated updates (one at once, then every 5 s).
      await turn([
        { name: 'read_mcp_resource', arguments: { server: 'everything', uri: URI } },
        { name: 'mcp__everything__toggle-subscriber-updates', arguments: {} },
      ]);
      expect(updates()).toEqual([]);
      const requestsBefore = fixture.server.requests.length;
      await turn([]);
      expect(updates()).toMatchObject([{ server: 'everything', uri: URI }]);
      // The turn's request (projected from the log) tells the model its read may be stale.
      const sent = fixture.server.requests.slice(requestsBefore).map((request) => request.raw);
      expect(
        sent.some((raw) => raw.includes(`MCP resource updated: ${URI} on server \\"everything\\"`)),
      ).toBe(true);
    } finally {
      await pool.stop();
    }
  }, 60_000);
});
