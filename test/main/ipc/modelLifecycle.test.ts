import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { channels } from '../../../main/ipc/contract.js';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import { MODEL_CATALOGUE, SUGGESTED_MODEL } from '../../../main/providers/catalogue.js';
import type { ProviderServer } from '../../support/providerServer.js';
import { closeSessionFixture, eventsOf, startSessionFixture } from '../../support/sessionFixture.js';
import { ipcCalls, pushWaiter } from './support.js';
import type { Push } from '../../../main/ipc/hub.js';

/*
 * The catalogue as the UI reads it (lifecycle, pricing, suggestions) and the app's model switch: a session
 * pinned to a retiring model is moved to another one, and its next request goes out with the new model.
 */

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let handlers: Handlers;
let pushes: Push[];

// The scripted server speaks Anthropic's format too: a catalogue model can be pinned honestly.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ANTHROPIC_API_KEY: 'test-key' };

beforeEach(async () => {
  ({ dir, home, project, server } = await startSessionFixture('keel-ipc-models-'));
  handlers = createHandlers({ home, mode: 'serve', version: '1', env });
  pushes = [];
  handlers.hub.subscribe((push) => pushes.push(push));
});

afterEach(async () => {
  await handlers.close();
  await closeSessionFixture({ dir, server });
});

const { call, fail } = ipcCalls(() => handlers);
const waitForPush = pushWaiter(
  () => handlers,
  () => pushes,
  15_000,
);

async function anthropicSession(model: string): Promise<string> {
  const { session } = await call('sessions.create', {
    projectFolder: project,
    provider: 'anthropic',
    model,
    baseUrl: server.anthropicBaseUrl,
    checkout: 'direct',
  });
  return session.id;
}

async function runTurn(sessionId: string, prompt: string): Promise<void> {
  const { turnId } = await call('turns.send', { sessionId, prompt });
  await waitForPush('session.status', (p) => p.sessionId === sessionId && p.turnId === turnId && !p.running);
}

describe('providers.catalogue', () => {
  it("lists every catalogue model with its lifecycle, output limit and whether it is priced, and each provider's suggested model", async () => {
    const { models, suggested } = await call('providers.catalogue');
    expect(models.map((model) => model.id)).toEqual(MODEL_CATALOGUE.map((model) => model.id));
    expect(models.find((model) => model.id === 'claude-sonnet-4-5')).toEqual({
      id: 'claude-sonnet-4-5',
      provider: 'anthropic',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      status: 'deprecated',
      retiresOn: '2026-11-30',
      replacement: 'claude-sonnet-5-5',
      priced: true,
    });
    // Unpriced and undocumented figures are absent or false, never invented.
    const astra = models.find((model) => model.id === 'gpt-6.2-astra');
    expect(astra).toMatchObject({ status: 'current', priced: false });
    expect(astra).not.toHaveProperty('retiresOn');
    expect(models.find((model) => model.id === 'claude-opus-4-1')).toMatchObject({
      status: 'retired',
      priced: true,
    });
    expect(models.find((model) => model.id === 'claude-opus-4-1')).not.toHaveProperty('maxOutputTokens');
    for (const model of MODEL_CATALOGUE) {
      expect(models.find((entry) => entry.id === model.id)?.priced, model.id).toBe(
        model.prices !== undefined,
      );
    }

    expect(suggested).toEqual(SUGGESTED_MODEL);
    for (const id of Object.values(suggested)) {
      expect(models.find((model) => model.id === id)).toMatchObject({ status: 'current', priced: true });
    }
  });

  it('still reads as the old shape (id, provider, contextWindow): the new fields are additions', async () => {
    const value = await call('providers.catalogue');
    const before = z.object({
      models: z.array(
        z.object({
          id: z.string(),
          provider: z.enum(['anthropic', 'openai', 'openai-compatible']),
          contextWindow: z.number().int().positive(),
        }),
      ),
    });
    expect(before.parse(value).models.length).toBe(MODEL_CATALOGUE.length);
    // And the contract refuses a status the UI would not know how to show.
    const output = channels['providers.catalogue'].output;
    const first = { ...value.models[0], status: 'sunset' };
    expect(output.safeParse({ ...value, models: [first] }).success).toBe(false);
  });
});

describe('sessions.setModel', () => {
  it('switches an idle session: model_changed is recorded and the next request uses the new model at the same endpoint', async () => {
    const id = await anthropicSession('claude-sonnet-4-5');
    await runTurn(id, 'first');
    expect((server.requests.at(-1)?.body as { model: string }).model).toBe('claude-sonnet-4-5');

    const switched = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
    });
    expect(switched).toEqual({
      pin: {
        provider: 'anthropic',
        model: 'claude-sonnet-5-5',
        baseUrl: server.anthropicBaseUrl,
        contextWindow: 1_000_000,
      },
      previous: {
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        baseUrl: server.anthropicBaseUrl,
        contextWindow: 200_000,
      },
    });
    expect(eventsOf(home, id).at(-1)).toMatchObject({ kind: 'model_changed', model: 'claude-sonnet-5-5' });
    expect(pushes).toContainEqual({
      topic: 'event.appended',
      payload: { sessionId: id, event: expect.objectContaining({ kind: 'model_changed' }) as unknown },
    });
    expect((await call('sessions.open', { sessionId: id })).pin.model).toBe('claude-sonnet-5-5');
    expect((await call('sessions.list')).sessions.find((s) => s.id === id)?.model).toBe('claude-sonnet-5-5');

    await runTurn(id, 'second');
    const last = server.requests.at(-1);
    expect(last?.format).toBe('anthropic');
    expect((last?.body as { model: string }).model).toBe('claude-sonnet-5-5');
  });

  it('refuses a retired model, a model whose window is unknown, and a session whose turn is running', async () => {
    const id = await anthropicSession('claude-sonnet-4-5');
    const retired = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-opus-4-1',
    });
    expect(retired.code).toBe('invalid_input');
    expect(retired.message).toMatch(
      /claude-opus-4-1 was retired: choose a current model such as claude-opus-5-5/,
    );

    // Nor can a new session be made on one (it could never answer); the CLI refuses it the same way.
    const created = await fail('sessions.create', {
      projectFolder: project,
      provider: 'anthropic',
      model: 'claude-opus-4-1',
      baseUrl: server.anthropicBaseUrl,
    });
    expect(created.code).toBe('invalid_input');
    expect(created.message).toMatch(/claude-opus-4-1 was retired/);

    const unknown = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'openai-compatible',
      model: 'qwen-local',
      baseUrl: server.openaiBaseUrl,
    });
    expect(unknown.code).toBe('invalid_input');
    expect(unknown.message).toMatch(/context window/);
    // Another provider does not inherit the session's endpoint: a local server needs its own.
    const noUrl = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'openai-compatible',
      model: 'qwen-local',
      contextWindow: 32_768,
    });
    expect(noUrl.code).toBe('invalid_input');
    expect(noUrl.message).toMatch(/base URL/);
    // A local model with its window given is fine.
    const local = await call('sessions.setModel', {
      sessionId: id,
      provider: 'openai-compatible',
      model: 'qwen-local',
      baseUrl: server.openaiBaseUrl,
      contextWindow: 32_768,
    });
    expect(local.pin).toEqual({
      provider: 'openai-compatible',
      model: 'qwen-local',
      baseUrl: server.openaiBaseUrl,
      contextWindow: 32_768,
    });
    expect(eventsOf(home, id).filter((event) => event.kind === 'model_changed')).toHaveLength(1);

    server.enqueue({ kind: 'reply', text: 'one two three four five six', delayMs: 150 });
    const { turnId } = await call('turns.send', { sessionId: id, prompt: 'slow' });
    const busy = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
    });
    expect(busy.code).toBe('busy');
    await waitForPush('session.status', (p) => p.sessionId === id && p.turnId === turnId && !p.running);
  });
});
