import type { Page } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// Issue #32: the app notifies when a turn stops on an approval, finishes or fails while the window is not
// focused, per the kinds settings.json turns on; a click opens that session. In Chromium against keel serve,
// with the page's Notification API observed: every notification constructed (the real one, granted) is
// recorded, and document.hasFocus answers what the test sets (a headless page cannot lose focus itself).

const OBSERVE = `(() => {
  // Registered by each test on the same page: the first registration observes, later ones leave it.
  if (window.__notes) return;
  window.__notes = [];
  window.__focused = true;
  document.hasFocus = () => window.__focused;
  const Real = window.Notification;
  class Observed extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notes.push({ title, body: options && options.body, tag: options && options.tag });
      window.__last = this;
    }
  }
  window.Notification = Observed;
})()`;

type Note = { title: string; body?: string; tag?: string };
const notes = (page: Page) => page.evaluate<Note[]>('window.__notes');

let project: string;

describe.skipIf(!HAS_CHROMIUM)('turn notifications', () => {
  const app = setUpApp({
    prefix: 'keel-ui-notify-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'README.md'), 'hi\n');
    },
  });

  it('notifies of a finished turn and an approval while unfocused, not while focused, and a click opens the session', async () => {
    const watched = app.watch('notifications');
    await app.page.context().grantPermissions(['notifications']);
    await app.page.addInitScript(OBSERVE);
    const page = await app.goto();
    const id = await createSession(page, { title: 'Background work', projectFolder: project });

    // Focused: the person is looking, nothing is shown.
    app.provider.enqueue({ kind: 'reply', text: 'done while you watched' });
    await sendMessage(page, 'first');
    await waitForIdle(page);
    expect(await notes(page)).toEqual([]);

    // Unfocused: the finished turn notifies.
    await page.evaluate('window.__focused = false');
    app.provider.enqueue({ kind: 'reply', text: 'done in the background' });
    await sendMessage(page, 'second');
    await expect
      .poll(() => notes(page), { timeout: 30_000 })
      .toEqual([
        {
          title: 'Background work: The turn finished',
          body: 'Open the session to see it.',
          tag: `keel-${id}`,
        },
      ]);

    // An approval request notifies too.
    await waitForIdle(page);
    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }],
    });
    await sendMessage(page, 'third');
    await expect
      .poll(async () => (await notes(page)).at(-1)?.title, { timeout: 30_000 })
      .toBe('Background work: Waiting for your approval');

    // Clicking it opens the session from elsewhere in the app.
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    await page.evaluate('window.__last.onclick()');
    await page.getByRole('heading', { name: 'Background work' }).waitFor();
    expect(watched.errors).toEqual([]);
  });

  it('stays silent for a kind switched off in settings', async () => {
    app.watch('notifications-off');
    await app.page.context().grantPermissions(['notifications']);
    await app.page.addInitScript(OBSERVE);
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('A turn finished').uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
      notifications: Record<string, boolean>;
    };
    expect(settings.notifications).toEqual({ approval: true, finished: false, failed: true });

    await createSession(page, { title: 'Quiet', projectFolder: project });
    await page.evaluate('window.__focused = false');
    app.provider.enqueue({ kind: 'reply', text: 'quietly done' });
    await sendMessage(page, 'go');
    await waitForIdle(page);
    // A failure is still on: a provider error notifies.
    app.provider.enqueue({ kind: 'fail', status: 400, message: 'bad request' });
    await sendMessage(page, 'again');
    await expect
      .poll(async () => (await notes(page)).map((note) => note.title), { timeout: 30_000 })
      .toEqual([expect.stringMatching(/^Quiet: The turn failed: /)]);
  });
});
