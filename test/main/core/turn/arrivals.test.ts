import { describe, expect, it } from 'vitest';
import { runTurn, type ArrivedEvent } from '../../../../main/core/turn/engine.js';
import { kinds } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

/*
 * Issue 33: a fact that reaches a session from outside while its turn runs (TurnHost.arrivals: a subscribed MCP
 * resource changed) is recorded by the turn; one that arrives while a reply streams waits for that reply (it
 * must not sit before a reply that never saw it), and the next request tells the model. The MCP side, with
 * real servers: test/main/mcp/resourceSubscriptions.test.ts.
 */

const fx = useTurnHostFixture('keel-turn-arrivals-');

describe('facts arriving during a turn', () => {
  it('one arriving while a reply streams is recorded right after it, before its calls run', async () => {
    const log = fx.createSession({ policy: 'ask', toolMode: 'write' });
    fx.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading the file now.',
        toolCalls: [{ name: 'read_file', arguments: { path: 'missing.txt' } }],
      },
      { kind: 'reply', text: 'Done.' },
    );
    const queue: ArrivedEvent[] = [];
    let watchers = 0;
    let arrived = () => {};
    let fired = false;
    const host = fx.hostFor(log, {
      arrivals: {
        take: () => queue.splice(0),
        watch: (callback) => {
          watchers++;
          arrived = callback;
          return () => {
            watchers--;
            arrived = () => {};
          };
        },
      },
      hooks: {
        // The first delta of the first reply: the fact arrives mid-stream.
        onDelta: (delta) => {
          if (fired || delta.type !== 'text') return;
          fired = true;
          queue.push({ kind: 'mcp_resource_updated', server: 'docs', uri: 'db://t/1' });
          arrived();
        },
      },
    });
    const outcome = await runTurn(host, { prompt: 'Read missing.txt' });
    expect(outcome.status).toBe('completed');
    expect(kinds(log.read())).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'mcp_resource_updated',
      'tool_call_started',
      'tool_result',
      'assistant_message',
    ]);
    const note = 'MCP resource updated: db://t/1 on server \\"docs\\"';
    expect(fx.server.requests.map((request) => request.raw.includes(note))).toEqual([false, true]);
    // The turn stopped watching when it ended: a later arrival waits for the next turn.
    expect(watchers).toBe(0);
  });
});
