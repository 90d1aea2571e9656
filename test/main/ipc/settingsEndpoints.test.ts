import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { ProviderServer } from '../../support/providerServer.js';
import { useIpcFixture } from './support.js';

/*
 * Issue #37 (Settings) through the handler table `keel serve` uses: an endpoint's models read from the server
 * by main, named endpoints and the theme kept in settings.json (validated), keys typed in the page held by
 * serve in the home's key file (used for the server's requests, never answered back, kept across a restart), an
 * endpoint's own key (sent only to its URL, dropped with the endpoint), and an unknown model's window kept once given.
 */

const KEY = 'sk-endpoint-secret-0123';
// No key in the environment: the server refuses until the page sets one.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

const ipc = useIpcFixture('keel-ipc-endpoints-', {
  server: { apiKey: KEY },
  prepare: ({ server }) => {
    server.servedModels = [{ id: 'qwen3-coder:30b' }, { id: 'llama3.2:3b' }];
  },
  handlers: ({ home }) => createHandlers({ home, mode: 'serve', version: '1', env }),
});
const { call, fail, waitForPush } = ipc;

describe('settings: endpoints, models, keys and windows (#37)', () => {
  it('reads an endpoint’s models through main with a key set from the page, and never answers the key back', async () => {
    const baseUrl = ipc.server.openaiBaseUrl;
    // Without a key the server's own refusal comes back in one line.
    const refused = await fail('providers.models', { provider: 'openai-compatible', baseUrl });
    expect(refused.code).toBe('provider');
    expect(refused.message).toMatch(/key/i);

    const before = await call('settings.get');
    expect(before.keyStorage).toBe('file');
    expect(before.keys.openaiCompatible).toBe(false);
    const after = await call('settings.set', { keys: { openaiCompatible: KEY } });
    expect(after.keys.openaiCompatible).toBe(true);
    expect(JSON.stringify(after)).not.toContain(KEY);
    expect(JSON.stringify(await call('settings.get'))).not.toContain(KEY);
    // Never written to the home in plain text either.
    for (const file of fs.readdirSync(ipc.home))
      if (fs.statSync(path.join(ipc.home, file)).isFile())
        expect(fs.readFileSync(path.join(ipc.home, file), 'utf8')).not.toContain(KEY);

    const listed = await call('providers.models', { provider: 'openai-compatible', baseUrl });
    expect(listed.models.map((model) => model.id)).toEqual(['qwen3-coder:30b', 'llama3.2:3b']);
    expect(listed.served).toMatchObject({ provider: 'openai-compatible', baseUrl, count: 2, stale: false });
    expect(ipc.server.modelRequests.at(-1)).toMatchObject({ path: '/v1/models', format: 'openai' });

    // The boundary refuses what is not a URL, saying what it wants.
    const bad = await fail('providers.models', { provider: 'openai-compatible', baseUrl: 'localhost:11434' });
    expect(bad.code).toBe('invalid_input');
    expect(bad.message).toContain('base URL');
  });

  it('keeps named endpoints and the theme, refuses two endpoints of one name, keeps them when an older UI saves', async () => {
    const view = await call('settings.get');
    expect(view.settings.endpoints).toEqual([]);
    expect(view.settings.appearance).toEqual({ theme: 'system' });
    const endpoints = [
      { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1' },
      { name: 'vLLM box', baseUrl: 'http://10.0.0.5:8000/v1' },
    ];
    await call('settings.set', {
      settings: { ...view.settings, endpoints, appearance: { theme: 'dark' } },
    });
    const file = JSON.parse(fs.readFileSync(path.join(ipc.home, 'settings.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(file.endpoints).toEqual(endpoints);
    expect(file.appearance).toEqual({ theme: 'dark' });

    // A UI that knows neither field keeps both.
    const { endpoints: _e, appearance: _a, ...older } = (await call('settings.get')).settings;
    const kept = await call('settings.set', { settings: older });
    expect(kept.settings.endpoints).toEqual(endpoints);
    expect(kept.settings.appearance).toEqual({ theme: 'dark' });

    const twice = await fail('settings.set', {
      settings: {
        ...kept.settings,
        endpoints: [...endpoints, { name: 'ollama', baseUrl: 'http://x.test/v1' }],
      },
    });
    expect(twice.code).toBe('invalid_input');
    expect(twice.message).toContain('two endpoints are named ollama');
    const theme = await fail('settings.set', {
      // An unknown theme, as a hostile page would send it.
      settings: { ...kept.settings, appearance: { theme: 'neon' } as never },
    });
    expect(theme.code).toBe('invalid_input');
  });

  it('asks an unknown model’s window once: the window given at creation is kept for the next session', async () => {
    await call('settings.set', { keys: { openaiCompatible: KEY } });
    const request = {
      projectFolder: ipc.project,
      provider: 'openai-compatible' as const,
      model: 'qwen3-coder:30b',
      baseUrl: ipc.server.openaiBaseUrl,
      checkout: 'direct' as const,
    };
    const unknown = await fail('sessions.create', request);
    expect(unknown.message).toContain('enter it (in tokens)');
    await call('sessions.create', { ...request, contextWindow: 65_536 });
    expect((await call('settings.get')).settings.contextWindows).toEqual({ 'qwen3-coder:30b': 65_536 });
    // The next session on it needs no window; a later different one does not replace the first word.
    await call('sessions.create', request);
    await call('sessions.create', { ...request, contextWindow: 8_192 });
    expect((await call('settings.get')).settings.contextWindows).toEqual({ 'qwen3-coder:30b': 65_536 });
  });
});

describe('an endpoint’s own key (#37)', () => {
  it('sends each endpoint its own key, keeps it across a restart, and drops it with the endpoint', async () => {
    const OWN = 'sk-second-endpoint-own-77';
    const second = await new ProviderServer({ apiKey: OWN, servedModels: [{ id: 'second-coder' }] }).start();
    try {
      const first = ipc.server.openaiBaseUrl;
      const view = await call('settings.set', {
        keys: { openaiCompatible: KEY, endpoints: { [`${second.openaiBaseUrl}/`]: OWN } },
      });
      expect(view.endpointKeys).toEqual([second.openaiBaseUrl]);
      expect(JSON.stringify(view)).not.toContain(OWN);
      // The shared key goes to the first server, the own key to the second: each lists its models.
      expect(
        (await call('providers.models', { provider: 'openai-compatible', baseUrl: first })).models,
      ).toHaveLength(2);
      const listed = await call('providers.models', {
        provider: 'openai-compatible',
        baseUrl: second.openaiBaseUrl,
      });
      expect(listed.models.map((model) => model.id)).toEqual(['second-coder']);

      // A restart: a new handler table on the same home still has both keys.
      await ipc.handlers.close();
      ipc.handlers = createHandlers({ home: ipc.home, mode: 'serve', version: '1', env });
      const restarted = await call('settings.get');
      expect(restarted.keys.openaiCompatible).toBe(true);
      expect(restarted.endpointKeys).toEqual([second.openaiBaseUrl]);
      const { session } = await call('sessions.create', {
        projectFolder: ipc.project,
        provider: 'openai-compatible',
        model: 'second-coder',
        baseUrl: second.openaiBaseUrl,
        contextWindow: 8_000,
        checkout: 'direct',
      });
      const ended = waitForPush('session.status', (p) => p.sessionId === session.id && !p.running);
      await call('turns.send', { sessionId: session.id, prompt: 'hi' });
      expect((await ended).outcome).toEqual({ status: 'completed' });
      const turn = second.requests.filter((request) => request.format === 'openai');
      expect(turn.length).toBeGreaterThan(0);
      expect(turn.every((request) => request.headers['authorization'] === `Bearer ${OWN}`)).toBe(true);
      expect(ipc.server.requests.some((request) => JSON.stringify(request.headers).includes(OWN))).toBe(
        false,
      );

      // Saving the endpoints without the second drops its key; the first's shared key stays.
      const { settings } = await call('settings.get');
      const saved = await call('settings.set', {
        settings: { ...settings, endpoints: [{ name: 'First', baseUrl: first }] },
      });
      expect(saved.endpointKeys).toEqual([]);
      expect(saved.keys.openaiCompatible).toBe(true);
      const refused = await fail('settings.set', { keys: { endpoints: { 'not a url': 'x' } } });
      expect(refused.code).toBe('invalid_input');
    } finally {
      await second.close();
    }
  });
});
