import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, launchBrowser, screenshot } from './harness.js';

/*
 * Issue #37 item 7: `keel serve` keeps its port and token in the Keel home, so an open page reconnects and a
 * reload finds the restarted server; a page that cannot reach it, or that it refuses, says what to do; a page
 * opened without the token says how to get one.
 */

describe.skipIf(!HAS_CHROMIUM)('keel serve across restarts', () => {
  // No --port: the last run's port and token (serve.json in the home).
  const app = setUpApp({ prefix: 'keel-ui-serve-reconnect-', serveArgs: [] });

  it('serves the same URL after a restart; the page says what is wrong meanwhile and reconnects', async () => {
    const watched = app.watch('serve-reconnect');
    const first = app.serve.url;
    const page = await app.goto();
    await page.getByRole('button', { name: 'New session' }).first().waitFor();
    const kept = JSON.parse(fs.readFileSync(path.join(app.home, 'serve.json'), 'utf8')) as {
      port: number;
      token: string;
    };
    expect(first).toBe(`http://127.0.0.1:${kept.port}/?token=${kept.token}`);
    expect(fs.statSync(path.join(app.home, 'serve.json')).mode & 0o777).toBe(0o600);

    // Stopped: the page says keel serve is not running at its address and how to start it again.
    await app.serve.stop();
    const banner = page.getByRole('alert', { name: 'Connection to keel serve' });
    await banner.getByText(`is not running at http://127.0.0.1:${kept.port}/`).waitFor({ timeout: 20_000 });
    await banner.getByText('it serves the same address and token').waitFor();
    await screenshot(page, 'serve-reconnect-01-down');

    // Started again: the same URL; the open page reconnects by itself and offers a reload.
    const again = await app.restartServe();
    expect(again.url).toBe(first);
    await banner.getByText('Connected to keel serve again.').waitFor({ timeout: 20_000 });
    const recent = await page.evaluate<{ ok: boolean }>('window.keel.projects.recent()');
    expect(recent.ok).toBe(true);
    await banner.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('button', { name: 'New session' }).first().waitFor();
    expect(await banner.count()).toBe(0);

    // A new token: the open page is refused and says to open the URL keel serve printed.
    const rotated = await app.restartServe(['--new-token']);
    expect(rotated.url).not.toBe(first);
    expect(new URL(rotated.url).port).toBe(String(kept.port));
    await banner.getByText('no longer takes this page').waitFor({ timeout: 20_000 });
    await screenshot(page, 'serve-reconnect-02-refused');
    // The failed reconnects while the server was away are logged by the browser: expected here.
    watched.errors.length = 0;
  });

  it('answers a page opened without its token with how to get one', async () => {
    const fresh = await launchBrowser();
    try {
      const address = `http://127.0.0.1:${new URL(app.serve.url).port}/`;
      const response = await fresh.page.goto(address);
      expect(response?.status()).toBe(401);
      await fresh.page.getByRole('heading', { name: "This page needs keel serve's access token" }).waitFor();
      const text = await fresh.page.locator('body').innerText();
      expect(text).toContain('open the URL it printed');
      expect(text).toContain(path.join(app.home, 'serve.json'));
      expect(text).toContain('keel serve --new-token');
      // With the token the same browser gets the app.
      await fresh.page.goto(app.serve.url);
      await fresh.page.getByRole('button', { name: 'New session' }).first().waitFor();
    } finally {
      await fresh.close();
    }
  });
});
