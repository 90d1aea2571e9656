import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

// Unset (not empty) in the server's environment: a developer's own keys would skip first run.
const NO_KEYS = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  KEEL_OPENAI_COMPATIBLE_API_KEY: undefined,
};

let fakeOllama: http.Server | undefined;

/** Listens where Ollama does (127.0.0.1:11434) with one model; undefined when the port is taken on this machine. */
async function startFakeOllama(): Promise<http.Server | undefined> {
  const server = http.createServer((request, response) => {
    if (request.url === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: 'llama3.2:3b', object: 'model' }] }));
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(11434, '127.0.0.1', () => resolve(server));
  });
}

describe.skipIf(!HAS_CHROMIUM)('first run and settings', () => {
  // No settings.json: the app starts on first run.
  const app = setUpApp({
    prefix: 'keel-ui-first-',
    scriptedSettings: false,
    serveEnv: NO_KEYS,
    startIn: 'test',
    teardown: () =>
      new Promise<void>((resolve) => (fakeOllama ? fakeOllama.close(() => resolve()) : resolve())),
  });

  it('explains how to add a provider, offers a local server it finds, and edits settings', async () => {
    await app.start();
    const watched = app.watch('first-run');
    const page = await app.goto();

    await page.getByRole('heading', { name: 'Welcome to Keel' }).waitFor();
    await page.getByRole('button', { name: 'Open settings' }).waitFor();
    await screenshot(page, '10-first-run');

    fakeOllama = await startFakeOllama();
    await page.getByRole('button', { name: 'Look for a local server' }).click();
    if (fakeOllama) {
      const use = page.getByRole('button', { name: 'Use llama3.2:3b on Ollama' });
      await use.waitFor();
      await screenshot(page, '11-first-run-local-server');
      await use.click();
      // First run is over: the new-session dialog opens on the chosen model.
      const dialog = page.getByRole('dialog', { name: 'New session' });
      await dialog.waitFor();
      await expect.poll(() => dialog.getByLabel('Model').inputValue()).toBe('llama3.2:3b');
      await expect.poll(() => dialog.getByLabel('Base URL').inputValue()).toBe('http://127.0.0.1:11434/v1');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('heading', { name: 'No session open' }).waitFor();
      const saved = JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
        defaults: { provider?: string; model?: string; baseUrl?: string };
      };
      expect(saved.defaults).toMatchObject({
        provider: 'openai-compatible',
        model: 'llama3.2:3b',
        baseUrl: 'http://127.0.0.1:11434/v1',
      });
    } else {
      console.warn('port 11434 is taken here: the offer of a detected server is not exercised');
    }

    // Settings: keys are never shown (serve reads them from the environment), a connection test, the sandbox.
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    const card = page.getByRole('group', { name: /Local \/ OpenAI-compatible/ });
    await card.getByLabel('Base URL').fill(app.provider.openaiBaseUrl);
    await card.getByLabel(/Model to test/).fill('scripted-model');
    await card.getByRole('button', { name: 'Test connection' }).click();
    await card.getByText(/openai-compatible answered with scripted-model/).waitFor();
    await page.getByRole('heading', { name: 'Sandbox' }).waitFor();
    await page.getByText(/Commands run under/).waitFor();

    await page.getByLabel(/Compact when the context is this full/).fill('60');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
      compaction: { threshold: number };
      providers: { 'openai-compatible'?: { baseUrl?: string } };
    };
    expect(settings.compaction.threshold).toBe(0.6);
    expect(settings.providers['openai-compatible']?.baseUrl).toBe(app.provider.openaiBaseUrl);
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, '12-settings');

    // An unreachable server is reported in words, not a stack.
    await card.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
    await card.getByRole('button', { name: 'Test connection' }).click();
    const failure = card.getByRole('alert');
    await failure.waitFor();
    expect(await failure.textContent()).not.toMatch(/\bat \S+:\d+:\d+/);

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);
});
