import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { CANCELLED_RESULT, projectPayload } from '../../../../main/core/projection/projectPayload.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { loadSessionState } from '../../../../main/core/turn/loadState.js';
import { foldSession } from '../../../../main/core/turn/state.js';
import { kinds } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

/*
 * Issue 20, item 7: stopped during the first of two tool calls, the turn used to end with `interrupted` and no
 * result for the second call, ever (the projection closed it, so requests stayed valid, but the log did not
 * say what happened to it). Every call the stopped turn never ran now gets a cancelled result first.
 */

let log: SessionLog;

const fx = useTurnHostFixture('keel-stop-cancels-', {
  prepare: () => {
    log = fx.createSession({ policy: 'full-auto', toolMode: 'write' });
  },
  cleanup: () => {
    expect(loadSessionState(log)).toEqual(foldSession(log.read()));
  },
});

describe('a turn stopped between its tool calls', () => {
  it('records a cancelled result for every call it never ran, before interrupted', async () => {
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'c1', name: 'run_command', arguments: { command: 'echo first; sleep 5' } },
        { id: 'c2', name: 'run_command', arguments: { command: 'echo second > second.txt' } },
        { id: 'c3', name: 'read_file', arguments: { path: 'second.txt' } },
      ],
    });
    const controller = new AbortController();
    const outcome = await runTurn(
      fx.hostFor(log, {
        signal: controller.signal,
        hooks: { onToolOutput: (_id, chunk) => chunk.includes('first') && controller.abort() },
      }),
      { prompt: 'two commands' },
    );
    expect(outcome.status).toBe('interrupted');
    const events = log.read();
    expect(kinds(events).slice(2)).toEqual([
      'assistant_message',
      'tool_call_started',
      'tool_result',
      'tool_result',
      'tool_result',
      'interrupted',
    ]);
    const results = events.filter((event) => event.kind === 'tool_result');
    expect(results.map((r) => r.kind === 'tool_result' && r.toolCallId)).toEqual(['c1', 'c2', 'c3']);
    expect(results[0]?.kind === 'tool_result' && results[0].content).toMatch(/stopped by the user/);
    for (const cancelled of results.slice(1)) {
      expect(cancelled).toMatchObject({ content: CANCELLED_RESULT, isError: true });
    }
    expect(existsSync(path.join(fx.project, 'second.txt'))).toBe(false);
    // What the model is told next is what the projection told it before: the same cancelled answers.
    const tools = projectPayload(events, { system: '' }).messages.filter(
      (message) => message.role === 'tool',
    );
    expect(tools.map((message) => message.content).slice(1)).toEqual([CANCELLED_RESULT, CANCELLED_RESULT]);
  });
});
