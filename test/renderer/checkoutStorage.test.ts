import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readState } from '../../main/core/persistent/state.js';
import { AUTO_CHECKOUT_KIND, stopAllViews } from '../../main/core/persistent/viewHolder.js';
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

// Issue 36: the kind of new sessions' checkouts (settings.json checkouts.kind), shown and set in Settings with what this
// machine supports. keel serve runs without KEEL_CHECKOUT_KIND here, so the setting decides.
describe.skipIf(!HAS_CHROMIUM)('settings: the kind of new checkouts', () => {
  const app = setUpApp({ prefix: 'keel-ui-kind-', serveEnv: { KEEL_CHECKOUT_KIND: undefined } });
  const forced = process.env['KEEL_CHECKOUT_KIND'];
  beforeAll(() => {
    delete process.env['KEEL_CHECKOUT_KIND'];
  });
  afterAll(async () => {
    await stopAllViews();
    if (forced !== undefined) process.env['KEEL_CHECKOUT_KIND'] = forced;
  });

  it("shows the choice, the machine's support and what new sessions get; saves it for new sessions only", async () => {
    const page = await app.goto();
    const before = await sessionWithCheckout(app.home, project, 'auto');
    await page.getByRole('button', { name: 'Settings' }).click();
    const group = page.getByRole('group', { name: 'New checkouts' });
    await expect.poll(() => group.getByRole('radio', { name: 'Automatic' }).isChecked()).toBe(true);
    // The machine's answer is the probe's, kept in the home by keel serve: its sentence is shown as it is.
    const probe = JSON.parse(fs.readFileSync(path.join(app.home, 'overlay-probe.json'), 'utf8')) as {
      available: boolean;
      reason: string;
    };
    await group.getByLabel('This machine').getByText(probe.reason, { exact: false }).waitFor();
    const status = group.getByRole('status', { name: 'New sessions get' });
    const autoIsView = AUTO_CHECKOUT_KIND === 'view' && probe.available;
    await status
      .getByText(
        autoIsView
          ? 'New sessions get a copy-on-write view of their project: Automatic is a copy-on-write view where this machine can.'
          : AUTO_CHECKOUT_KIND === 'view'
            ? `New sessions get a full copy of their project: Automatic is a copy-on-write view where this machine can, but this machine cannot give one (${probe.reason}).`
            : 'New sessions get a full copy of their project: Automatic is a full copy in this version of Keel.',
      )
      .waitFor();
    await group
      .getByText(/applies to new sessions only: a session’s existing checkout keeps its kind/)
      .waitFor();

    await group.getByRole('radio', { name: 'Copy-on-write view' }).click();
    await status
      .getByText(
        probe.available
          ? 'New sessions get a copy-on-write view of their project: the setting asks for a copy-on-write view.'
          : `New sessions get a full copy of their project: the setting asks for a copy-on-write view, but this machine cannot give one (${probe.reason}).`,
      )
      .waitFor();
    expect(readSettings(app.home).checkouts.kind).toBe('view');
    expect(await group.getByRole('radio', { name: 'Copy-on-write view' }).isChecked()).toBe(true);
    // The settings form saved afterwards keeps the choice (it sends the bound, not the kind it loaded).
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect(readSettings(app.home).checkouts.kind).toBe('view');
    // A new session's checkout follows the setting; the earlier session's keeps its kind.
    const after = await sessionWithCheckout(app.home, project, 'auto');
    const kindOf = (id: string) =>
      readState(path.join(app.home, 'sessions', id, 'checkouts', 'project'))?.kind;
    expect(kindOf(after)).toBe(probe.available ? 'view' : 'worktree');
    expect(kindOf(before)).toBe(autoIsView ? 'view' : 'worktree');

    await group.getByRole('radio', { name: 'Full copy' }).click();
    await status
      .getByText('New sessions get a full copy of their project: the setting asks for a full copy.')
      .waitFor();
    expect(readSettings(app.home).checkouts.kind).toBe('copy');
    // Read again from settings.json by a fresh page (the route is kept: Settings opens again).
    await page.reload();
    await expect.poll(() => group.getByRole('radio', { name: 'Full copy' }).isChecked()).toBe(true);
  });
});
