import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';
import { artifactScreenshot } from './layoutMeasure.js';

/*
 * Issue 37, sessions where they are shown: rename from the title, the open session kept in the address (a reload
 * opens it again), a fork (asked first) listed under its parent with a fork mark, and delete with a dialog that
 * names what goes and what stays.
 */

let project: string;

describe.skipIf(!HAS_CHROMIUM)('sessions: rename, address, forks, delete', () => {
  const app = setUpApp({
    prefix: 'keel-ui-sessions-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'notes');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'todo.md'), '- one\n');
    },
  });

  it('renames, keeps the session in the address, nests its fork and deletes it with a confirmation', async () => {
    const watched = app.watch('sessions-manage');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Plan the week', projectFolder: project });
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/session/${sessionId}`);

    // Rename from the title.
    await page.locator('.session-heading').getByRole('button', { name: 'Plan the week' }).click();
    const field = page.getByLabel('Session title');
    await field.fill('Plan the sprint');
    await field.press('Enter');
    await page.getByRole('heading', { name: 'Plan the sprint' }).waitFor();
    await page.getByRole('option', { name: /^Plan the sprint/ }).waitFor();
    expect((await readEvents(page, sessionId)).filter((e) => e.kind === 'session_renamed')).toHaveLength(1);

    // A reload opens the same session (the token stays in the address too).
    await page.reload();
    await page.getByRole('heading', { name: 'Plan the sprint' }).waitFor();

    // A fork, asked first, listed under its parent with a mark.
    app.provider.enqueue({ kind: 'reply', text: 'Monday: one.' });
    await sendMessage(page, 'What is on Monday?');
    await page.getByText('Monday: one.').waitFor();
    await waitForIdle(page);
    await page.getByLabel('Message').fill('/fork');
    await page.getByLabel('Message').press('Enter');
    await page
      .getByRole('group', { name: 'Fork this session' })
      .getByRole('button', { name: 'Fork' })
      .click();
    const forkRow = page.getByRole('option', { name: /from Plan the sprint/ });
    await forkRow.waitFor();
    expect(await forkRow.locator('.session-fork-mark').textContent()).toBe('⎇');
    const rows = page.locator('.session-row');
    const order: (string | null)[] = [];
    for (let i = 0; i < (await rows.count()); i++)
      order.push(await rows.nth(i).getAttribute('data-session-id'));
    const forkId = await forkRow.getAttribute('data-session-id');
    expect(order).toEqual([sessionId, forkId]);
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/session/${forkId}`);
    await artifactScreenshot(page, 'sessions-fork-nested');

    // Delete the fork: the dialog says what goes and what stays; the project folder is kept.
    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: /^Delete “/ });
    await dialog.getByText(/its conversation, its log and trace/).waitFor();
    await dialog.getByText(project).waitFor();
    await artifactScreenshot(page, 'sessions-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete session' }).click();
    await expect.poll(() => forkRow.count()).toBe(0);
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    expect(new URL(page.url()).hash).toBe('');
    expect(fs.existsSync(path.join(app.home, 'sessions', String(forkId)))).toBe(false);
    expect(fs.existsSync(path.join(app.home, 'sessions', sessionId))).toBe(true);
    expect(fs.readFileSync(path.join(project, 'todo.md'), 'utf8')).toBe('- one\n');

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });
});
