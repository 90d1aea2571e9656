import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { McpPool } from '../../../main/core/mcp/pool.js';
import { resourceArrivals, resourcesReadIn } from '../../../main/core/mcp/resourceSubscriptions.js';
import type { McpSession } from '../../../main/mcp/session.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Issue 33: MCP resource subscriptions with real servers over stdio in the box: one no one here wrote
// (@modelcontextprotocol/server-everything) and the SDK fixture server (--resources: its touch_note tool sends
// notifications/resources/updated before it answers). The session subscribes to a resource the model read; an
// update arriving during a turn is recorded as mcp_resource_updated as it arrives, and the turn's next request
// tells the model (projected from the log); one arriving between turns (servers kept by a pool) is recorded at the
// next turn's start.
const EVERYTHING = path.resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const URI = 'demo://resource/dynamic/text/1';
const NOTE = 'note://fixture/note';
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

/** One turn of `log` whose model makes these calls, one per request, then says done; the requests it sent. */
async function turn(
  log: SessionLog,
  calls: { name: string; arguments: Record<string, unknown> }[],
  options: { pool?: McpPool; onEvent?: (event: SessionEvent) => void } = {},
): Promise<string[]> {
  fixture.server.enqueue(
    ...calls.map((call, i) => ({
      kind: 'reply' as const,
      text: '',
      toolCalls: [{ id: `c${i + 1}`, ...call }],
    })),
    { kind: 'reply', text: 'done' },
  );
  const host = await fixture.keelHost(log, {
    env: { PATH: process.env.PATH },
    ...(options.pool ? { mcpPool: options.pool } : {}),
    ...(options.onEvent ? { hooks: { onEvent: options.onEvent } } : {}),
  });
  const before = fixture.server.requests.length;
  const outcome = await runTurn(host, { prompt: 'go' });
  await fixture.dispose(host);
  expect(outcome.status).toBe('completed');
  return fixture.server.requests.slice(before).map((request) => request.raw);
}

const updatesIn = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'mcp_resource_updated'> => e.kind === 'mcp_resource_updated');
/** The note a request carries for this update (as JSON text). */
const noteOf = (uri: string, server: string) => `MCP resource updated: ${uri} on server \\"${server}\\"`;

describe("a turn's resource arrivals", () => {
  it('hands over each update once as the event to record, leaving out what the log would refuse', () => {
    const queued = [
      { server: 'docs', uri: 'db://t/1' },
      { server: 'docs', uri: `file:///${'x'.repeat(2100)}` },
    ];
    const session = { takeResourceUpdates: () => queued.splice(0) } as unknown as McpSession;
    const arrivals = resourceArrivals(session);
    expect(arrivals.take()).toEqual([{ kind: 'mcp_resource_updated', server: 'docs', uri: 'db://t/1' }]);
    expect(arrivals.take()).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux')('resource subscriptions with server-everything (boxed)', () => {
  it('subscribes to a read resource and records the update it sends during the turn, told at the next request', async () => {
    writeMcpSettings(fixture.home, {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    const pool = new McpPool();
    try {
      // Read (which subscribes), then switch on the server's simulated updates (one at once, then every 5 s).
      const sent = await turn(
        log,
        [
          { name: 'read_mcp_resource', arguments: { server: 'everything', uri: URI } },
          { name: 'mcp__everything__toggle-subscriber-updates', arguments: {} },
        ],
        { pool },
      );
      expect(updatesIn(log)[0]).toMatchObject({ server: 'everything', uri: URI });
      // The request after the toggle (projected from the log) tells the model its read may be stale.
      expect(sent.map((raw) => raw.includes(noteOf(URI, 'everything')))).toEqual([false, false, true]);
    } finally {
      await pool.stop();
    }
  }, 60_000);
});

describe.runIf(process.platform === 'linux')('resource updates with the fixture server (boxed)', () => {
  it('records an update as it arrives while the tool that caused it runs, and one from between turns at the next start', async () => {
    writeMcpSettings(fixture.home, {
      notes: { command: process.execPath, args: [SERVER, '--resources', '--tools=echo'] },
    });
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    const pool = new McpPool();
    const pushed: SessionEvent[] = [];
    try {
      const sent = await turn(
        log,
        [
          { name: 'read_mcp_resource', arguments: { server: 'notes', uri: NOTE } },
          { name: 'mcp__notes__touch_note', arguments: { text: 'second version' } },
        ],
        { pool, onEvent: (event) => pushed.push(event) },
      );
      const events = log.read();
      const updated = updatesIn(log);
      expect(updated).toMatchObject([{ server: 'notes', uri: NOTE }]);
      // Recorded while touch_note ran (the server sent it before its answer), not at a later turn.
      const seqOf = (found: SessionEvent | undefined) => found?.seq ?? -1;
      const started = events.find((e) => e.kind === 'tool_call_started' && e.toolCallId === 'c2');
      const result = events.find((e) => e.kind === 'tool_result' && e.toolCallId === 'c2');
      expect(seqOf(updated[0])).toBeGreaterThan(seqOf(started));
      expect(seqOf(updated[0])).toBeLessThan(seqOf(result));
      // Pushed to the host's subscribers (the session view) when recorded.
      expect(pushed.filter((e) => e.kind === 'mcp_resource_updated')).toEqual(updated);
      // The turn's request after touch_note tells the model; the one after the read does not.
      expect(sent.map((raw) => raw.includes(noteOf(NOTE, 'notes')))).toEqual([false, false, true]);

      // Between turns (no turn runs): the kept server's update waits for the next turn's start.
      const kept = pool.take(log.id);
      if (!kept) throw new Error('the pool kept no servers');
      await kept.session.callTool('notes', 'touch_note', { text: 'third version' });
      await pool.keep(log.id, kept);
      expect(updatesIn(log)).toHaveLength(1);
      const next = await turn(log, [], { pool });
      expect(updatesIn(log)).toHaveLength(2);
      const lastUser = log.read().findLast((e) => e.kind === 'user_message');
      expect(seqOf(updatesIn(log)[1])).toBeLessThan(seqOf(lastUser));
      expect(next.map((raw) => raw.split(noteOf(NOTE, 'notes')).length - 1)).toEqual([2]);
    } finally {
      await pool.stop();
    }
  }, 60_000);
});
