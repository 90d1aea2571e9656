import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSettings, writeSettings } from '../../main/store/settings.js';
import { sessionWithCheckout } from '../support/checkoutSession.js';
import { makeRepo } from '../main/core/persistent/support.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// Issue 36: Settings → Checkout storage against keel serve in Chromium: the checkouts' disk use and the bound,
// and reclaiming an idle session's checkout (the same core function as `keel gc`).

const sources = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-ui-gc-src-')));
const project = makeRepo(path.join(sources, 'project'), { 'src/a.ts': 'a\n', 'README.md': 'r\n' });
afterAll(() => fs.rmSync(sources, { recursive: true, force: true }));

describe.skipIf(!HAS_CHROMIUM)('settings: checkout storage', () => {
  const app = setUpApp({ prefix: 'keel-ui-gc-' });

  it('shows the checkouts and the bound, and reclaims an idle one', async () => {
    const page = await app.goto();
    const id = await sessionWithCheckout(app.home, project, 'auto');
    const checkout = path.join(app.home, 'sessions', id, 'workspace', 'persistent', 'project');
    writeSettings(app.home, {
      ...readSettings(app.home),
      checkouts: { storageLimitMB: 300, idleMinutes: 0, kind: 'auto' },
    });
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Checkout storage' }).waitFor();
    const use = page.getByLabel('Checkout storage use');
    await use.getByText(/^1 checkouts, \d+\.\d MB of 300\.0 MB$/).waitFor();

    await page.getByRole('button', { name: 'Reclaim idle checkouts' }).click();
    await page
      .getByRole('status', { name: 'Checkouts reclaimed' })
      .getByText(/^Reclaimed 1 checkouts/)
      .waitFor();
    await use.getByText('0 checkouts, 0.0 MB of 300.0 MB').waitFor();
    expect(fs.existsSync(checkout)).toBe(false);
    expect(fs.readFileSync(path.join(project, 'src', 'a.ts'), 'utf8')).toBe('a\n');
  });
});
