import { describe, expect, it } from 'vitest';
import type { SettingsChange } from '../../../../main/core/turn/engine.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { kinds } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

/*
 * Issue #37: a session's model, effort or policy changed while its turn runs (the app's header) is taken
 * before the turn's next request: recorded then, and that request is made with it.
 */

const fx = useTurnHostFixture('keel-settings-changes-');

type Body = { model?: string; reasoning_effort?: string };

describe('settings changed during a turn', () => {
  it('apply from the next request: the model, its effort and the policy', async () => {
    const log = fx.createSession({ policy: 'ask', toolMode: 'write' });
    // The first request reads a file (allowed under any policy); the change arrives while it is answered.
    fx.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading.',
        toolCalls: [{ name: 'read_file', arguments: { path: 'missing.txt' } }],
      },
      { kind: 'reply', text: 'Done.' },
    );
    const queued: SettingsChange[][] = [
      [],
      [
        { kind: 'policy_changed', policy: 'full-auto' },
        {
          kind: 'model_changed',
          provider: 'openai-compatible',
          model: 'scripted-other',
          baseUrl: fx.server.openaiBaseUrl,
          contextWindow: 32_000,
        },
        { kind: 'reasoning_changed', effort: 'high' },
        // The policy in force already: dropped, not recorded twice.
        { kind: 'policy_changed', policy: 'full-auto' },
      ],
    ];
    const host = fx.hostFor(log, { settingsChanges: () => queued.shift() ?? [] });
    const outcome = await runTurn(host, { prompt: 'Read missing.txt' });
    expect(outcome.status).toBe('completed');
    const bodies = fx.server.requests.map((request) => request.body as Body);
    expect(bodies.map((body) => [body.model, body.reasoning_effort])).toEqual([
      ['scripted-model', undefined],
      ['scripted-other', 'high'],
    ]);
    const events = log.read();
    expect(kinds(events)).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'tool_call_started',
      'tool_result',
      'policy_changed',
      'model_changed',
      'reasoning_changed',
      'assistant_message',
    ]);
  });

  it('drops a writing policy for a session created read-only', async () => {
    const log = fx.createSession({ policy: 'read-only', toolMode: 'read-only' });
    fx.server.enqueue({ kind: 'reply', text: 'Hello.' });
    const host = fx.hostFor(log, {
      settingsChanges: () => [{ kind: 'policy_changed', policy: 'full-auto' }],
    });
    await runTurn(host, { prompt: 'Hi' });
    expect(kinds(log.read())).not.toContain('policy_changed');
  });
});
