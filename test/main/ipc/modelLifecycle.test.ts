import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fixedClock, type Clock } from '../../../main/common/clock.js';
import { channels } from '../../../main/ipc/contract.js';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { MODEL_CATALOGUE, SUGGESTED_MODEL } from '../../../main/providers/catalogue.js';
import { eventsOf } from '../../support/sessionFixture.js';
import { useIpcFixture } from './support.js';

/*
 * The catalogue as the UI reads it (lifecycle, pricing, suggestions, the provider's own list) and the app's
 * model switch: a session pinned to a retiring model is moved to another one, and its next request goes out
 * with the new model. Lifecycle is judged by a pinned clock against a catalogue fixture (settings.json
 * `models`), never by a real catalogue entry against the real calendar.
 */

let clock: Clock;

// The scripted server speaks Anthropic's format too (messages and models): provider `anthropic` is honest.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ANTHROPIC_API_KEY: 'test-key' };
const TODAY = '2031-03-10';
/** Fictional models in every lifecycle state, dated against TODAY. */
const FIXTURE_MODELS = {
  'claude-test-current': { provider: 'anthropic', contextWindow: 500_000, status: 'current' },
  'claude-test-retiring': {
    provider: 'anthropic',
    contextWindow: 200_000,
    status: 'deprecated',
    retiresOn: '2031-03-22',
    replacement: 'claude-test-current',
  },
  'claude-test-gone': {
    provider: 'anthropic',
    contextWindow: 200_000,
    status: 'deprecated',
    retiresOn: '2031-01-15',
    replacement: 'claude-test-current',
  },
} as const;

function writeSettings(extra: Record<string, unknown> = {}) {
  fs.mkdirSync(ipc.home, { recursive: true });
  fs.writeFileSync(
    path.join(ipc.home, 'settings.json'),
    JSON.stringify({
      models: FIXTURE_MODELS,
      providers: { anthropic: { baseUrl: ipc.server.anthropicBaseUrl } },
      ...extra,
    }),
  );
}

const ipc = useIpcFixture('keel-ipc-models-', {
  server: { apiKey: 'test-key' },
  prepare: ({ server }) => {
    server.servedModels = [{ id: 'claude-test-current' }, { id: 'claude-test-retiring' }];
    writeSettings();
    clock = fixedClock(TODAY);
  },
  handlers: ({ home }) =>
    createHandlers({ home, mode: 'serve', version: '1', env, clock: { now: () => clock.now() } }),
});
const { call, fail, waitForPush } = ipc;

async function anthropicSession(model: string): Promise<string> {
  const { session } = await call('sessions.create', {
    projectFolder: ipc.project,
    provider: 'anthropic',
    model,
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
    fs.rmSync(path.join(ipc.home, 'settings.json'));
    const { models, suggested, today, served } = await call('providers.catalogue');
    expect(models.map((model) => model.id)).toEqual(MODEL_CATALOGUE.map((model) => model.id));
    // Main's clock, and no provider list read yet: nothing is marked listed or not.
    expect(today).toBe(TODAY);
    expect(served).toEqual([]);
    expect(models.some((model) => 'listed' in model)).toBe(false);
    expect(models.find((model) => model.id === 'claude-sonnet-4-5')).toEqual({
      id: 'claude-sonnet-4-5',
      provider: 'anthropic',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      status: 'deprecated',
      retiresOn: '2026-11-30',
      replacement: 'claude-sonnet-5-5',
      priced: true,
      reasoning: { choices: ['off', 'low', 'medium', 'high'], defaultEffort: 'medium' },
    });
    // A model that always reasons offers no "off" (providers/reasoning.ts).
    expect(models.find((model) => model.id === 'claude-opus-5-5')?.reasoning).toEqual({
      choices: ['low', 'medium', 'high'],
      defaultEffort: 'medium',
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
    fs.rmSync(path.join(ipc.home, 'settings.json'));
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

describe("the provider's list is the truth", () => {
  it('reads the models endpoint in the background, caches it with its age, and marks each model listed or not', async () => {
    ipc.server.servedModels = [
      { id: 'claude-test-current' },
      { id: 'claude-test-retiring' },
      // A model Keel does not know whose window the endpoint states joins the list.
      { id: 'claude-brand-new', maxInputTokens: 300_000, maxTokens: 32_000 },
      ...Array.from({ length: 25 }, (_, i) => ({ id: `claude-filler-${i}` })),
    ];
    const refreshed = await call('providers.refreshModels', { provider: 'anthropic' });
    expect(refreshed.served).toEqual({
      provider: 'anthropic',
      baseUrl: ipc.server.anthropicBaseUrl,
      fetchedAt: clock.now().toISOString(),
      age: 'just now',
      stale: false,
      count: 28,
    });
    // Every page was read (Anthropic pages by after_id), in Anthropic's format with the key.
    expect(ipc.server.modelRequests.every((request) => request.format === 'anthropic')).toBe(true);
    const cache = JSON.parse(fs.readFileSync(path.join(ipc.home, 'served-models.json'), 'utf8')) as {
      lists: { models: unknown[] }[];
    };
    expect(cache.lists[0]?.models).toHaveLength(28);

    clock = fixedClock(new Date(Date.parse(`${TODAY}T12:00:00Z`) + 3 * 3_600_000));
    const { models, served } = await call('providers.catalogue');
    expect(served).toEqual([expect.objectContaining({ provider: 'anthropic', age: '3 h ago', stale: true })]);
    expect(models.find((model) => model.id === 'claude-test-retiring')?.listed).toBe(true);
    expect(models.find((model) => model.id === 'claude-test-gone')?.listed).toBe(false);
    expect(models.find((model) => model.id === 'claude-opus-5-5')?.listed).toBe(false);
    expect(models.find((model) => model.id === 'claude-brand-new')).toEqual({
      id: 'claude-brand-new',
      provider: 'anthropic',
      contextWindow: 300_000,
      maxOutputTokens: 32_000,
      status: 'current',
      priced: false,
      listed: true,
      // Keel does not know it: any effort, and it reasons only when one is pinned.
      reasoning: { choices: ['off', 'low', 'medium', 'high'], defaultEffort: 'off' },
    });
    // Models a list lacks a window for are not offered as picks (the window would be a guess).
    expect(models.some((model) => model.id === 'claude-filler-0')).toBe(false);
  });

  it("fails a refresh with the provider's own error in one line", async () => {
    // Nothing listens on port 9 of the loopback: the connection is refused at once.
    const refused = await fail('providers.refreshModels', {
      provider: 'anthropic',
      baseUrl: 'http://127.0.0.1:9',
    });
    expect(refused.code).toBe('provider');
    expect(refused.message).toMatch(/^Anthropic: could not reach the server \(.+\)$/);
    expect(refused.message).not.toContain('\n');
    await ipc.handlers.close();
    ipc.handlers = createHandlers({
      home: ipc.home,
      mode: 'serve',
      version: '1',
      env: { ...env, ANTHROPIC_API_KEY: 'wrong' },
    });
    const rejected = await fail('providers.refreshModels', { provider: 'anthropic' });
    expect(rejected).toEqual({
      code: 'provider',
      message: 'Anthropic rejected the API key (401): invalid x-api-key',
    });
  });

  it('never refuses a model the provider lists because a catalogue date passed: it warns', async () => {
    ipc.server.servedModels = [{ id: 'claude-test-gone' }, { id: 'claude-test-current' }];
    const created = await call('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'claude-test-gone',
      checkout: 'direct',
    });
    expect(created.warning).toBe(
      "Keel's catalogue says claude-test-gone was retired on 2031-01-15, but Anthropic still lists it (checked just now): it works for now",
    );
    await runTurn(created.session.id, 'still there?');
    expect((ipc.server.requests.at(-1)?.body as { model: string }).model).toBe('claude-test-gone');
    expect(ipc.server.requests.at(-1)?.rejected).toBeUndefined();
  });

  it("refuses a model the provider does not serve with the provider's own error, naming one it lists", async () => {
    const refused = await fail('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'claude-test-gone',
    });
    expect(refused).toEqual({
      code: 'invalid_input',
      message:
        'Anthropic does not serve claude-test-gone (model: claude-test-gone (404)): choose a model it lists, such as claude-test-current',
    });
    // It asked the endpoint about that id after the list lacked it.
    expect(ipc.server.modelRequests.map((request) => request.path)).toEqual([
      '/v1/models',
      '/v1/models/claude-test-gone',
    ]);
  });

  it('warns, and does not refuse, when the provider cannot be asked; a fresh cached list is not read again', async () => {
    await ipc.handlers.close();
    ipc.handlers = createHandlers({
      home: ipc.home,
      mode: 'serve',
      version: '1',
      env: { PATH: env.PATH },
      clock,
    });
    const created = await call('sessions.create', {
      projectFolder: ipc.project,
      provider: 'anthropic',
      model: 'claude-test-gone',
      checkout: 'direct',
    });
    expect(created.warning).toBe(
      "Keel's catalogue says claude-test-gone was retired on 2031-01-15, and Anthropic could not be asked (Anthropic needs an API key to list its models): if it is gone, the first request says so",
    );
    expect(ipc.server.modelRequests).toEqual([]);

    await ipc.handlers.close();
    ipc.handlers = createHandlers({ home: ipc.home, mode: 'serve', version: '1', env, clock });
    await anthropicSession('claude-test-current');
    await anthropicSession('claude-test-retiring');
    expect(ipc.server.modelRequests.map((request) => request.path)).toEqual(['/v1/models']);
  });

  it('takes the window the endpoint states over the catalogue', async () => {
    ipc.server.servedModels = [{ id: 'claude-test-current', maxInputTokens: 640_000 }];
    const id = await anthropicSession('claude-test-current');
    expect((await call('sessions.open', { sessionId: id })).pin.contextWindow).toBe(640_000);
  });
});

describe('sessions.setModel', () => {
  it('switches an idle session: model_changed is recorded and the next request uses the new model at the same endpoint', async () => {
    const id = await anthropicSession('claude-test-retiring');
    await runTurn(id, 'first');
    expect((ipc.server.requests.at(-1)?.body as { model: string }).model).toBe('claude-test-retiring');

    const switched = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-current',
    });
    expect(switched).toEqual({
      pin: {
        provider: 'anthropic',
        model: 'claude-test-current',
        baseUrl: ipc.server.anthropicBaseUrl,
        contextWindow: 500_000,
      },
      previous: {
        provider: 'anthropic',
        model: 'claude-test-retiring',
        baseUrl: ipc.server.anthropicBaseUrl,
        contextWindow: 200_000,
      },
    });
    expect(eventsOf(ipc.home, id).at(-1)).toMatchObject({
      kind: 'model_changed',
      model: 'claude-test-current',
    });
    expect(ipc.pushes).toContainEqual({
      topic: 'event.appended',
      payload: { sessionId: id, event: expect.objectContaining({ kind: 'model_changed' }) as unknown },
    });
    expect((await call('sessions.open', { sessionId: id })).pin.model).toBe('claude-test-current');
    expect((await call('sessions.list')).sessions.find((s) => s.id === id)?.model).toBe(
      'claude-test-current',
    );

    await runTurn(id, 'second');
    const last = ipc.server.requests.at(-1);
    expect(last?.format).toBe('anthropic');
    expect((last?.body as { model: string }).model).toBe('claude-test-current');
  });

  it('warns when switching to a model that retires within 30 days, by the pinned clock', async () => {
    const id = await anthropicSession('claude-test-current');
    const switched = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-retiring',
    });
    expect(switched.warning).toBe(
      'claude-test-retiring retires on 2031-03-22 (in 12 days); a session stays on its model, so it would need a switch by then (to claude-test-current)',
    );
    clock = fixedClock('2031-01-01');
    const back = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-current',
    });
    expect(back.warning).toBeUndefined();
    const again = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-retiring',
    });
    expect(again.warning).toBeUndefined();
  });

  it('refuses a model the provider does not serve and a model whose window is unknown; queues a switch made while a turn runs', async () => {
    const id = await anthropicSession('claude-test-retiring');
    const retired = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-gone',
    });
    expect(retired.code).toBe('invalid_input');
    expect(retired.message).toMatch(
      /^Anthropic does not serve claude-test-gone \(model: claude-test-gone \(404\)\): choose a model it lists, such as claude-test-current$/,
    );

    const unknown = await fail('sessions.setModel', {
      sessionId: id,
      provider: 'openai-compatible',
      model: 'qwen-local',
      baseUrl: ipc.server.openaiBaseUrl,
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
      baseUrl: ipc.server.openaiBaseUrl,
      contextWindow: 32_768,
    });
    expect(local.pin).toEqual({
      provider: 'openai-compatible',
      model: 'qwen-local',
      baseUrl: ipc.server.openaiBaseUrl,
      contextWindow: 32_768,
    });
    expect(eventsOf(ipc.home, id).filter((event) => event.kind === 'model_changed')).toHaveLength(1);

    ipc.server.enqueue({ kind: 'reply', text: 'one two three four five six', delayMs: 150 });
    const { turnId } = await call('turns.send', { sessionId: id, prompt: 'slow' });
    // Issue #37: a switch during a turn is queued for its next request (recorded then, or when the turn
    // ends if none follows), not refused.
    const queued = await call('sessions.setModel', {
      sessionId: id,
      provider: 'anthropic',
      model: 'claude-test-current',
    });
    expect(queued).toMatchObject({
      queued: true,
      pin: { provider: 'anthropic', model: 'claude-test-current' },
    });
    await waitForPush('session.status', (p) => p.sessionId === id && p.turnId === turnId && !p.running);
    const switches = eventsOf(ipc.home, id).filter((event) => event.kind === 'model_changed');
    expect(switches.at(-1)).toMatchObject({ model: 'claude-test-current' });
  });
});
