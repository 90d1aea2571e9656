import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { eventsOf, rejected } from '../../support/sessionFixture.js';
import { useIpcFixture } from './support.js';

/* The app's reasoning effort: pinned at sessions.create, switched with sessions.setReasoning. */

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ANTHROPIC_API_KEY: 'test-key' };

const ipc = useIpcFixture('keel-ipc-reasoning-', {
  prepare: ({ home, server }) => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({ providers: { anthropic: { baseUrl: server.anthropicBaseUrl } } }),
    );
  },
  handlers: ({ home }) => createHandlers({ home, mode: 'serve', version: '1', env }),
});
const { call, fail, waitForPush } = ipc;

async function runTurn(sessionId: string, prompt: string): Promise<void> {
  const { turnId } = await call('turns.send', { sessionId, prompt });
  await waitForPush('session.status', (p) => p.sessionId === sessionId && p.turnId === turnId && !p.running);
}

type Body = { thinking?: unknown; output_config?: unknown };

describe('reasoning effort through the IPC contract', () => {
  it('pins the effort at sessions.create and switches it with sessions.setReasoning (reasoning_changed)', async () => {
    const { session } = await call('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'scripted-model',
      contextWindow: 32_000,
      checkout: 'direct',
      reasoningEffort: 'low',
    });
    expect(eventsOf(ipc.home, session.id)[0]).toMatchObject({ reasoningEffort: 'low' });
    expect((await call('sessions.open', { sessionId: session.id })).pin.reasoningEffort).toBe('low');
    ipc.server.enqueue({ kind: 'reply', thinking: 'Short.', text: 'one' });
    await runTurn(session.id, 'first');
    expect((ipc.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'low' });

    expect(await call('sessions.setReasoning', { sessionId: session.id, effort: 'high' })).toEqual({
      effort: 'high',
      previous: 'low',
    });
    expect(eventsOf(ipc.home, session.id).at(-1)).toMatchObject({
      kind: 'reasoning_changed',
      effort: 'high',
    });
    ipc.server.enqueue({ kind: 'reply', thinking: 'Longer.', text: 'two' });
    await runTurn(session.id, 'second');
    expect((ipc.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'high' });
    expect(rejected(ipc.server)).toEqual([]);
  });

  it('refuses off for a model that always reasons, at create and at the switch', async () => {
    const refused = await fail('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'claude-opus-5-5',
      checkout: 'direct',
      reasoningEffort: 'off',
    });
    expect(refused.message).toBe('claude-opus-5-5 always reasons: choose low, medium, high');
    const { session } = await call('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'claude-opus-5-5',
      checkout: 'direct',
    });
    const switched = await fail('sessions.setReasoning', { sessionId: session.id, effort: 'off' });
    expect(switched.code).toBe('invalid_input');
    expect(eventsOf(ipc.home, session.id).map((event) => event.kind)).toEqual(['session_created']);
  });

  it('a model switch keeps the pinned effort the new model takes, else falls back to its default and says so', async () => {
    const { session } = await call('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'scripted-model',
      contextWindow: 32_000,
      checkout: 'direct',
      reasoningEffort: 'off',
    });
    // Off is not taken by a model that always reasons: its default (medium), with the warning.
    const toAlways = await call('sessions.setModel', {
      sessionId: session.id,
      provider: 'anthropic',
      model: 'claude-opus-5-5',
    });
    expect(toAlways.pin.reasoningEffort).toBeUndefined();
    expect(toAlways.effortWarning).toBe(
      'claude-opus-5-5 does not take the reasoning effort off (it takes low, medium, high): it reasons at medium, its default',
    );
    ipc.server.enqueue({ kind: 'reply', thinking: 'Hm.', text: 'one' });
    await runTurn(session.id, 'first');
    expect((ipc.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'medium' });

    // A pinned effort the new model takes is kept, without a warning.
    await call('sessions.setReasoning', { sessionId: session.id, effort: 'low' });
    const kept = await call('sessions.setModel', {
      sessionId: session.id,
      provider: 'anthropic',
      model: 'scripted-model',
      contextWindow: 32_000,
    });
    expect(kept.pin.reasoningEffort).toBe('low');
    expect(kept.effortWarning).toBeUndefined();
    expect(eventsOf(ipc.home, session.id).at(-1)).toMatchObject({
      kind: 'model_changed',
      model: 'scripted-model',
      reasoningEffort: 'low',
    });
    ipc.server.enqueue({ kind: 'reply', thinking: 'Hm.', text: 'two' });
    await runTurn(session.id, 'second');
    expect((ipc.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'low' });

    // The switch may name the effort: one the new model refuses appends nothing; null is its default.
    const before = eventsOf(ipc.home, session.id).length;
    const refused = await fail('sessions.setModel', {
      sessionId: session.id,
      provider: 'anthropic',
      model: 'claude-opus-5-5',
      reasoningEffort: 'off',
    });
    expect(refused).toMatchObject({
      code: 'invalid_input',
      message: 'claude-opus-5-5 always reasons: choose a reasoning effort of low, medium, high',
    });
    expect(eventsOf(ipc.home, session.id)).toHaveLength(before);
    const named = await call('sessions.setModel', {
      sessionId: session.id,
      provider: 'anthropic',
      model: 'claude-opus-5-5',
      reasoningEffort: 'high',
    });
    expect(named.pin.reasoningEffort).toBe('high');
    const toDefault = await call('sessions.setModel', {
      sessionId: session.id,
      provider: 'anthropic',
      model: 'scripted-model',
      contextWindow: 32_000,
      reasoningEffort: null,
    });
    expect(toDefault.pin.reasoningEffort).toBeUndefined();
    expect(rejected(ipc.server)).toEqual([]);
  });
});
