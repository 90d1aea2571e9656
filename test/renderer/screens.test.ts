import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';
import { captureAtSizes, SIZES } from './layoutMeasure.js';

/*
 * Issue #37: the main screens at 1280x800 and 900x600, captured to test-artifacts/screenshots/screen-*.png
 * (kept by CI; the README's screenshots in assets/screenshots/ are made from them): the sessions list, a
 * session with its transcript and an approval pending, the New session dialog and Settings. Each capture
 * first checks that what it shows is there, so a broken screen fails rather than being photographed, and (but
 * for the session view, which layout.test.ts measures) that at each size no control is drawn over by another or
 * cut by a box that does not scroll.
 */

let project: string;

/** The captures the README shows (a laptop's session; the dialogs at the small size, lighter files). */
const README_SHOTS = [
  ['screen-session-approval-1280x800.png', 'session-approval.png'],
  ['screen-new-session-900x600.png', 'new-session.png'],
  ['screen-settings-900x600.png', 'settings.png'],
  ['screen-settings-endpoints-900x600.png', 'settings-endpoints.png'],
] as const;

describe.skipIf(!HAS_CHROMIUM)('the main screens, captured', () => {
  const app = setUpApp({
    prefix: 'keel-ui-screens-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'web-app');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(
        path.join(project, 'src', 'server.ts'),
        "import { serve } from './http';\n\nexport const port = 3000;\nserve(port);\n",
      );
    },
  });

  it('captures the sessions list, a session with an approval pending, New session and Settings', async () => {
    const watched = app.watch('screens');
    const page = await app.goto();
    /** Captures the screen at each size; with `controls` (a CSS selector) also checks its (`atLeast`) controls there. */
    const capture = (name: string, controls?: string, atLeast = 4) =>
      captureAtSizes(
        page,
        `screen-${name}`,
        controls === undefined ? undefined : { root: controls, atLeast },
      );

    for (const title of ['Add a health check endpoint', 'Fix the flaky login test']) {
      await createSession(page, { title, projectFolder: project }, { open: false });
    }
    await createSession(page, { title: 'Move the server to port 8080', projectFolder: project });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'The port is set in src/server.ts; I will change it there.',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/server.ts', old_string: 'port = 3000', new_string: 'port = 8080' },
          },
        ],
      },
      { kind: 'reply', text: 'Done: the server listens on 8080.' },
    );
    await sendMessage(page, 'Move the server to port 8080.');
    const card = page.getByRole('article', { name: 'Approval needed: edit_file' });
    await card.locator('.diff-view[data-state="ready"]').waitFor();
    const list = page.getByRole('listbox', { name: 'Sessions by project' });
    for (const title of ['Add a health check', 'Fix the flaky', 'Move the server'])
      await list.getByRole('option', { name: new RegExp(title) }).waitFor();

    await capture('session-approval');
    // The session's own dialogs: Switch model and Delete (both close without a change).
    await page.getByRole('button', { name: 'Switch model' }).click();
    const switchDialog = page.getByRole('dialog', { name: 'Switch model' });
    await switchDialog.waitFor();
    await capture('model-switch', 'dialog[open]');
    await page.keyboard.press('Escape');
    await switchDialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete…' }).click();
    const deleteDialog = page.locator('dialog[open]');
    await deleteDialog.getByRole('button', { name: 'Cancel' }).waitFor();
    await capture('delete-session', 'dialog[open]', 2);
    await deleteDialog.getByRole('button', { name: 'Cancel' }).click();
    await deleteDialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    await capture('new-session', 'dialog[open]');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    await capture('settings', 'body');
    // Its OpenAI-compatible endpoints, one added (not saved), with its own key field.
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const endpoint = page.locator('.endpoint-row').first();
    await endpoint.getByLabel('Endpoint name').fill('Ollama');
    await endpoint.getByLabel('Endpoint base URL').fill('http://127.0.0.1:11434/v1');
    await endpoint.getByText('shared key').waitFor();
    await page.locator('.endpoints').evaluate('(element) => element.scrollIntoView()');
    await capture('settings-endpoints', 'body');

    // The list alone: no session open.
    await page.goto(app.serve.url);
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    await page.getByRole('option', { name: /Move the server/ }).waitFor();
    await capture('sessions', 'body');
    // The command palette and the shortcuts sheet, over the list.
    await page.keyboard.press('Control+K');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('option').first().waitFor();
    await capture('palette', 'dialog[open]', 1);
    await page.keyboard.press('Escape');
    await palette.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'No session open' }).click();
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('Command palette: jump to a session').waitFor();
    await capture('shortcuts', 'dialog[open]', 1);
    await page.keyboard.press('Escape');

    const files = fs.readdirSync(path.join(process.cwd(), 'test-artifacts', 'screenshots'));
    const names = [
      'session-approval',
      'new-session',
      'settings',
      'settings-endpoints',
      'sessions',
      'palette',
    ];
    for (const name of [...names, 'shortcuts', 'model-switch', 'delete-session'])
      for (const size of SIZES) expect(files).toContain(`screen-${name}-${size.width}x${size.height}.png`);
    // KEEL_README_SCREENSHOTS=1 refreshes the README's copies (assets/screenshots/, committed).
    if (process.env.KEEL_README_SCREENSHOTS === '1') {
      const readme = path.join(process.cwd(), 'assets', 'screenshots');
      fs.mkdirSync(readme, { recursive: true });
      for (const [from, to] of README_SHOTS)
        fs.copyFileSync(
          path.join(process.cwd(), 'test-artifacts', 'screenshots', from),
          path.join(readme, to),
        );
    }
    expect(watched.errors).toEqual([]);
  });
});
