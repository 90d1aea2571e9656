import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ProviderServer } from '../support/providerServer.js';
import { sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Issue #37 (Settings) in Chromium against keel serve: a second OpenAI-compatible endpoint (a loopback scripted
 * server that wants a key) added by name, its own key typed in the page (kept encrypted in the home, never shown
 * back, still set after serve restarts), its models listed through main and chosen in New session's picker, an
 * unknown model's window asked once, a turn that carries its key; the
 * theme (light / dark / system) on the CSS variables and kept; `?` and the Ctrl+K palette.
 */

const KEY = 'sk-gateway-7c1e9a';
let gateway: ProviderServer | undefined;

/** The page's background colour as computed (the --bg variable at work). */
const background = (page: Page) => page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
const LIGHT_BG = 'rgb(246, 247, 249)';
const DARK_BG = 'rgb(18, 20, 23)';

describe.skipIf(!HAS_CHROMIUM)('settings: endpoints, keys, theme, shortcuts (#37)', () => {
  const app = setUpApp({
    prefix: 'keel-ui-settings-',
    // No OpenAI-compatible key from the environment: the page sets it.
    serveEnv: { KEEL_OPENAI_COMPATIBLE_API_KEY: undefined },
    prepare: async (world) => {
      gateway = await new ProviderServer({
        apiKey: KEY,
        servedModels: [{ id: 'gw-coder-32b' }, { id: 'gw-small' }],
      }).start();
      fs.mkdirSync(path.join(world.dir, 'proj'), { recursive: true });
    },
    teardown: () => gateway?.close(),
  });

  it('adds a keyed endpoint, picks its listed model, remembers its window, and switches theme and shortcuts', async () => {
    const server = gateway!;
    const watched = app.watch('settings-app');
    const page = await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();

    // Ctrl+K: the palette, filtered by what is typed; Enter runs the first match.
    await page.keyboard.press('Control+K');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('combobox', { name: 'Command' }).fill('settings');
    expect(await palette.getByRole('option').allTextContents()).toEqual(['Open settings']);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    await palette.waitFor({ state: 'detached' });

    // The default OpenAI-compatible model is picked from what its server lists.
    const defaultModel = page.getByLabel('Default model', { exact: true });
    await expect
      .poll(() => defaultModel.locator('option').allTextContents(), { timeout: 10_000 })
      .toEqual(['scripted-model', 'Other model…']);
    expect(await defaultModel.inputValue()).toBe('scripted-model');

    // A keyed endpoint: refused without the key, listed once its own key is typed here.
    await page.getByText('keel serve keeps the API keys you save here encrypted in its home').waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const row = page.locator('.endpoint-row').first();
    await row.getByLabel('Endpoint name').fill('Gateway');
    await row.getByLabel('Endpoint base URL').fill(server.openaiBaseUrl);
    await row.getByRole('button', { name: 'List models' }).click();
    await row.getByRole('alert').filter({ hasText: /key/i }).waitFor();

    await row.getByText('shared key').waitFor();
    await row.getByLabel('Endpoint API key').fill(KEY);
    await row.getByRole('button', { name: 'Save key' }).click();
    await row.getByText('own key set').waitFor();
    expect(await row.getByLabel('Endpoint API key').inputValue()).toBe('');
    // Its own key: the shared OpenAI-compatible one stays unset.
    const card = page.getByRole('group', { name: /Local \/ OpenAI-compatible/ });
    await card.getByText('no key').waitFor();
    // The key never comes back to the page: not in the settings it reads, not in the DOM.
    const view = await page.evaluate<unknown>('window.keel.settings.get()');
    expect(JSON.stringify(view)).not.toContain(KEY);
    expect(await page.content()).not.toContain(KEY);

    await row.getByRole('button', { name: 'List models' }).click();
    await row.getByText('2 models: gw-coder-32b, gw-small').waitFor();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const saved = () =>
      JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
        endpoints: unknown;
        appearance: unknown;
        contextWindows: Record<string, number>;
      };
    expect(saved().endpoints).toEqual([{ name: 'Gateway', baseUrl: server.openaiBaseUrl }]);

    // Theme: dark now and kept; system follows the OS; light holds against a dark OS.
    expect(await background(page)).toBe(LIGHT_BG);
    await page.getByRole('radio', { name: 'Dark' }).click();
    await expect.poll(() => background(page)).toBe(DARK_BG);
    expect(saved().appearance).toEqual({ theme: 'dark' });
    await screenshot(page, 'settings-37-dark');
    await page.getByRole('radio', { name: 'System' }).click();
    await expect.poll(() => background(page)).toBe(LIGHT_BG);
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => background(page)).toBe(DARK_BG);
    await page.getByRole('radio', { name: 'Light' }).click();
    await expect.poll(() => background(page)).toBe(LIGHT_BG);
    await page.emulateMedia({ colorScheme: 'light' });
    // Kept across a reload.
    await page.reload();
    await page.getByRole('radio', { name: 'Light' }).waitFor();
    expect(await page.evaluate<string>('document.documentElement.dataset.theme')).toBe('light');

    // `?` in a text field is a character; outside one it opens the shortcuts.
    const threshold = page.getByLabel('Endpoint name').first();
    await threshold.focus();
    await page.keyboard.press('?');
    expect(await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).count()).toBe(0);
    await page.getByRole('heading', { name: 'Settings', exact: true }).click();
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('Command palette: jump to a session').waitFor();
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });

    // keel serve restarts: the endpoint's key is still there (masked), kept encrypted in the home.
    expect(watched.errors).toEqual([]);
    await app.restartServe();
    await app.goto();
    // The open page's reconnects to the stopped server are logged by the browser: expected here.
    watched.errors.length = 0;
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    await page.keyboard.press('Control+K');
    await page.getByRole('combobox', { name: 'Command' }).fill('settings');
    await page.keyboard.press('Enter');
    const kept = page.locator('.endpoint-row').first();
    await kept.getByText('own key set').waitFor();
    expect(await kept.getByLabel('Endpoint API key').inputValue()).toBe('');
    expect(fs.readFileSync(path.join(app.home, 'keys.json'), 'utf8')).not.toContain(KEY);
    await kept.scrollIntoViewIfNeeded();
    await screenshot(page, 'settings-37-endpoint-key');

    // New session on the Gateway: its models in a picker; the unknown window asked once.
    const create = async (expectWindow: boolean) => {
      await page.getByRole('button', { name: 'New session' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'New session' });
      await dialog.getByLabel('Project folder').fill(path.join(app.dir, 'proj'));
      await dialog.getByLabel('Endpoint').selectOption({ label: `Gateway (${server.openaiBaseUrl})` });
      const model = dialog.getByLabel('Model', { exact: true });
      await expect
        .poll(() => model.locator('option').allTextContents(), { timeout: 10_000 })
        .toEqual(['gw-coder-32b', 'gw-small', 'Other model…']);
      await model.selectOption('gw-small');
      const window = dialog.getByLabel('Context window (tokens)');
      if (expectWindow) await window.fill('16000');
      else expect(await window.count()).toBe(0);
      await dialog.getByRole('button', { name: 'Create session' }).click();
      await dialog.waitFor({ state: 'detached' });
    };
    await create(true);
    await expect.poll(() => saved().contextWindows['gw-small']).toBe(16000);
    await create(false);
    // The list was read by main, with the key the page set: the page itself never reached the server.
    expect(server.modelRequests.some((request) => request.path === '/v1/models')).toBe(true);
    // A turn on the Gateway session carries the endpoint's own key, read back after the restart.
    server.enqueue({ kind: 'reply', text: 'The gateway answers.' });
    await sendMessage(page, 'hello gateway');
    await page.getByText('The gateway answers.').waitFor();
    await waitForIdle(page);
    const turns = server.requests.filter((request) => request.format === 'openai');
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.map((request) => request.headers['authorization'])).toEqual(
      turns.map(() => `Bearer ${KEY}`),
    );

    // The palette jumps to a session by its title.
    await page.keyboard.press('Control+K');
    await page.getByRole('combobox', { name: 'Command' }).fill('go to');
    const jumps = page.getByRole('dialog', { name: 'Command palette' }).getByRole('option');
    await expect.poll(() => jumps.count()).toBe(2);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate<string>('window.location.hash')).toMatch(/^#\/session\//);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
    // A keel serve restart and a turn on top of the settings walk: more than the default 30 s on a busy machine.
  }, 90_000);
});
