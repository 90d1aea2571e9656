import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { ChannelOutput, IpcResult } from '../../main/ipc/contract.js';
import { createSession, inDarkTheme, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

const words = (count: number, prefix = 'w') =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' ');

const readIfExists = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined);

/** The text of a select's chosen option. */
const selectedLabel = (select: Locator) => select.locator('option:checked').textContent();

/**
 * What form controls look like: the computed styles a user sees, and each one's height and row. Measured in
 * one evaluation, so content above that is still settling (a note, a model list) moves all of them alike.
 */
const looksOf = (page: Page, ...ids: string[]) =>
  page.evaluate<Record<string, string | number>[]>(`${JSON.stringify(ids)}.map((id) => {
    const element = document.querySelector(id);
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return {
      height: Math.round(box.height),
      top: Math.round(box.top),
      font: style.fontSize + ' ' + style.fontFamily + ' ' + style.fontWeight,
      border: style.borderTopWidth + ' ' + style.borderTopStyle + ' ' + style.borderTopColor,
      radius: style.borderTopLeftRadius,
      padding: style.paddingTop + ' ' + style.paddingRight + ' ' + style.paddingBottom + ' ' + style.paddingLeft,
      background: style.backgroundColor,
      color: style.color,
    };
  })`);

/** sessions.open through window.keel. */
async function openSession(page: Page, sessionId: string | null): Promise<ChannelOutput<'sessions.open'>> {
  const opened = await page.evaluate<IpcResult<ChannelOutput<'sessions.open'>>>(
    `window.keel.sessions.open(${JSON.stringify({ sessionId })})`,
  );
  if (!opened.ok) throw new Error(`sessions.open failed: ${opened.error.message}`);
  return opened.value;
}

describe.skipIf(!HAS_CHROMIUM)('the app in a browser against keel serve', () => {
  const app = setUpApp({
    prefix: 'keel-ui-',
    startIn: 'test',
    prepare: ({ dir }) => {
      project = path.join(dir, 'parser-project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(
        path.join(project, 'src', 'parse.ts'),
        'export const parse = (text: string) => text.split(",");\n',
      );
    },
  });

  it('creates a session, streams, stops, resumes, approves, finds it by search and reopens it after a restart', async () => {
    await app.start();
    const watched = app.watch('session');
    const page = await app.goto();

    // The shell, with a provider configured: the welcome pane and an empty list.
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    await page.getByText('No sessions yet.').waitFor();
    await screenshot(page, '01-welcome-empty');

    // New session on the temp project: the defaults come from settings.json.
    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    await dialog.getByLabel('Project folder').fill(project);
    await dialog.getByLabel('Title (optional)').fill('Parser work');
    await expect.poll(() => dialog.getByLabel('Model').inputValue()).toBe('scripted-model');
    // By default the agent works on a checkout whose changes reach the folder when each turn ends.
    expect(await selectedLabel(dialog.getByLabel('Changes'))).toBe('Apply when each turn ends');
    await screenshot(page, '02-new-session-dialog');
    await dialog.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: 'Parser work' }).waitFor();
    const parserId = await page.getByRole('option', { name: /Parser work/ }).getAttribute('data-session-id');
    expect((await openSession(page, parserId)).persistentDirs).toEqual([
      { dir: 'project', commit: 'auto', readOnly: false },
    ]);

    // Send a prompt: the reply streams into the live bubble before it is committed.
    app.provider.enqueue({
      kind: 'reply',
      text: [
        'The zephyrine parser splits on commas. ',
        ...words(30)
          .split(' ')
          .map((word) => `${word} `),
        '\n\n```ts\nexport const parse = (text: string) => text.split(",");\n```\n',
      ],
      delayMs: 25,
    });
    await sendMessage(page, 'What does src/parse.ts do?');
    const live = page.locator('[data-testid="live-text"]');
    await live.getByText(/w5/).waitFor();
    expect(await page.locator('.bubble-assistant:not(.is-live)').count()).toBe(0);
    await page.locator('.bubble-assistant:not(.is-live)').getByText('zephyrine parser').waitFor();
    await page.locator('.bubble-assistant:not(.is-live) code.hljs').first().waitFor();
    await waitForIdle(page);
    await screenshot(page, '03-session-streamed');

    // Stop mid-stream with Esc: the partial text is kept and marked where it was cut.
    app.provider.enqueue({ kind: 'reply', text: words(200, 'cut'), delayMs: 30 });
    await sendMessage(page, 'Now explain every line.');
    await live.getByText(/cut6/).waitFor();
    await page.keyboard.press('Escape');
    const interrupted = page.locator('.bubble.is-interrupted');
    await interrupted.waitFor();
    await interrupted.getByText('Interrupted here').waitFor();
    const cutText = (await interrupted.locator('.markdown').textContent()) ?? '';
    expect(cutText).toMatch(/^cut0 cut1 cut2 cut3 cut4 cut5 cut6/);
    expect(cutText).not.toContain('cut199');
    const resume = page.getByRole('button', { name: 'Resume', exact: true });
    await resume.waitFor();
    await screenshot(page, '04-interrupted');

    // Resume: the turn continues from the log and completes.
    app.provider.enqueue({ kind: 'reply', text: 'Resumed: every line is now explained.' });
    await resume.click();
    await page.getByText('Resumed: every line is now explained.').waitFor();
    await waitForIdle(page);

    // An edit under the "ask" policy waits for approval; Allow once runs it in the session's checkout, and
    // the file reaches the project folder when the turn ends.
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'I will add a test file.',
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: 'src/parse.test.ts', content: 'test\n' },
          },
        ],
      },
      { kind: 'reply', text: 'The test file is written.' },
    );
    await sendMessage(page, 'Add a test.');
    const approval = page.getByRole('article', { name: 'Approval needed: write_file' });
    await approval.waitFor();
    await page.getByRole('article', { name: /Tool call write_file: Awaiting approval/ }).waitFor();
    await screenshot(page, '05-approval');
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('The test file is written.').waitFor();
    await page.getByRole('article', { name: /Tool call write_file: Done/ }).waitFor();
    // The auto commit runs after the answer is recorded; on a busy machine that can take a while.
    await expect
      .poll(() => readIfExists(path.join(project, 'src', 'parse.test.ts')), { timeout: 10_000 })
      .toBe('test\n');
    expect(app.provider.requests.filter((request) => request.rejected !== undefined)).toEqual([]);

    // Search finds the session by a word from its transcript (Ctrl+K's palette: Search sessions focuses the box).
    await page.keyboard.press('Control+k');
    await page.getByRole('combobox', { name: 'Command' }).fill('search sessions');
    await page.keyboard.press('Enter');
    const search = page.getByLabel('Search sessions');
    await expect
      .poll(() => page.evaluate('document.activeElement && document.activeElement.id'))
      .toBe('session-search');
    await search.fill('zephyrine');
    const option = page.getByRole('option', { name: /Parser work/ });
    await option.locator('mark', { hasText: 'zephyrine' }).waitFor();
    await screenshot(page, '06-search');
    await search.fill('nonexistentwordxyz');
    await page.getByText('Nothing matches “nonexistentwordxyz”.').waitFor();
    await search.fill('');

    // Restart the server: a new URL and token; the session is still there and opens with its history.
    const sessionId = await option.getAttribute('data-session-id');
    expect(watched.errors).toEqual([]);
    await app.restartServe();
    await app.goto();
    // The old page's bridge logged its failed reconnects while the server was down: expected, not an error.
    watched.errors.length = 0;
    await page.getByRole('option', { name: /Parser work/ }).waitFor();
    // Keyboard: from the search box, arrow down into the list, Enter opens the session.
    await page.getByLabel('Search sessions').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Parser work' }).waitFor();
    await page.locator('.bubble.is-interrupted').getByText('Interrupted here').waitFor();
    await page.getByText('The test file is written.').waitFor();
    expect(sessionId).toBeTruthy();
    await screenshot(page, '07-reopened-after-restart');

    // Archive hides the session from the list; "Show archived" brings it back, marked.
    await page.getByRole('button', { name: 'Archive', exact: true }).click();
    await page.getByText('No sessions yet.').waitFor();
    await page.getByLabel('Show archived').check();
    await page.getByRole('option', { name: /Parser work.*archived/ }).waitFor();
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.getByLabel('Show archived').uncheck();
    await page.getByRole('option', { name: /Parser work/ }).waitFor();

    // A session whose project folder is gone: marked in the list, opens read-only.
    const gone = path.join(app.dir, 'gone-project');
    fs.mkdirSync(gone);
    await createSession(page, { projectFolder: gone, title: 'Old experiment' }, { open: false });
    fs.rmSync(gone, { recursive: true });
    await page.reload();
    const goneRow = page.getByRole('option', { name: /Old experiment.*folder missing, read-only/ });
    await goneRow.click();
    await page.getByText(/Read-only: the project folder .* no longer exists/).waitFor();
    expect(await page.getByRole('textbox', { name: 'Message' }).isDisabled()).toBe(true);
    await screenshot(page, '08-read-only-missing-folder');

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);

    // The same screens follow a dark system theme.
    await inDarkTheme(app.serve.url, async (dark) => {
      await dark.getByRole('option', { name: /Parser work/ }).click();
      await dark.getByText('The test file is written.').waitFor();
      await screenshot(dark, '09-session-dark');
    });
  }, 120_000);

  it('the Changes field picks how edits reach the folder: after each turn by default, after review, or directly', async () => {
    await app.start();
    const watched = app.watch('session-changes');
    const page = await app.goto();
    await page.getByRole('button', { name: 'New session' }).first().waitFor();

    /** Fills the dialog for `title`, picks `changes` unless null (the default), creates, returns the new id. */
    const create = async (title: string, changes: string | null) => {
      await page.getByRole('button', { name: 'New session' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'New session' });
      await dialog.waitFor();
      await dialog.getByLabel('Project folder').fill(project);
      await dialog.getByLabel('Title (optional)').fill(title);
      const select = dialog.getByLabel('Changes');
      // Each dialog starts on the default, whatever the last one chose.
      expect(await selectedLabel(select)).toBe('Apply when each turn ends');
      expect(await select.locator('option').allTextContents()).toEqual([
        'Apply when each turn ends',
        'Review, then apply',
        'Edit the folder directly',
      ]);
      if (changes !== null) await select.selectOption({ label: changes });
      return { dialog, select };
    };
    /** A turn whose write_file of `file` the user allows once; waits for the turn's `answer`. */
    const writeAllowedOnce = async (file: string, content: string, answer: string) => {
      app.provider.enqueue(
        { kind: 'reply', toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] },
        { kind: 'reply', text: answer },
      );
      await sendMessage(page, `Write ${file}.`);
      await page
        .getByRole('article', { name: 'Approval needed: write_file' })
        .getByRole('button', { name: 'Allow once' })
        .click();
      await page.getByText(answer).waitFor();
    };
    const submit = async (dialog: Locator, title: string) => {
      await dialog.getByRole('button', { name: 'Create session' }).click();
      await page.getByRole('heading', { name: title }).waitFor();
      return page.getByRole('option', { name: new RegExp(title) }).getAttribute('data-session-id');
    };

    // Review, then apply: a manual checkout. The hint says what the choice means; the select looks like
    // the policy select beside it.
    const manual = await create('Reviewed edits', 'Review, then apply');
    await manual.dialog.getByText(/you review the diff in Changes and apply or discard it/).waitFor();
    const [changesLook, policyLook] = await looksOf(page, '#ns-changes', '#ns-policy');
    expect(changesLook).toEqual(policyLook);
    await screenshot(page, '10-new-session-changes-review');
    const manualId = await submit(manual.dialog, 'Reviewed edits');
    expect((await openSession(page, manualId)).persistentDirs).toEqual([
      { dir: 'project', commit: 'manual', readOnly: false },
    ]);
    // The header says so, with the explanation as its tooltip; once the turn has written a file in the
    // checkout it counts it, as the Changes button beside it does.
    const modeTag = page.locator('.session-header .checkout-mode');
    await expect.poll(() => modeTag.getAttribute('data-mode')).toBe('manual');
    await modeTag.getByText('Checkout · review, then apply').waitFor();
    expect(await modeTag.getAttribute('title')).toMatch(
      /reach the folder only when you apply them in Changes/,
    );
    await writeAllowedOnce('src/reviewed.ts', 'r\n', 'Written in the checkout.');
    await modeTag.locator('.checkout-mode-count', { hasText: '1 uncommitted' }).waitFor();
    await page.getByRole('button', { name: 'Changes, 1 uncommitted' }).waitFor();
    expect(fs.existsSync(path.join(project, 'src', 'reviewed.ts'))).toBe(false);
    await screenshot(page, 'header-checkout-manual');

    // Edit the folder directly: no checkout; the tools' paths are the folder's own and a write lands at once.
    const direct = await create('Direct edits', 'Edit the folder directly');
    await direct.dialog.getByText(/No checkout: the agent writes into the folder itself/).waitFor();
    await screenshot(page, '11-new-session-changes-direct');
    const directId = await submit(direct.dialog, 'Direct edits');
    expect((await openSession(page, directId)).persistentDirs).toEqual([]);
    // No checkout: the header says edits land in the folder, and there is no Changes screen to open.
    await expect.poll(() => modeTag.getAttribute('data-mode')).toBe('direct');
    await modeTag.getByText('Edits the folder directly').waitFor();
    expect(await modeTag.getAttribute('title')).toMatch(
      /^No checkout: the agent writes into the folder itself/,
    );
    expect(await page.locator('.session-header .changes-toggle').count()).toBe(0);
    await screenshot(page, 'header-checkout-direct');
    await writeAllowedOnce('src/direct.ts', 'direct\n', 'Written in the folder.');
    expect(readIfExists(path.join(project, 'src', 'direct.ts'))).toBe('direct\n');

    // The default again, for the record: an auto checkout.
    const auto = await create('Default edits', null);
    await auto.dialog.getByText(/merged into the folder when a turn ends/).waitFor();
    const autoId = await submit(auto.dialog, 'Default edits');
    expect((await openSession(page, autoId)).persistentDirs).toEqual([
      { dir: 'project', commit: 'auto', readOnly: false },
    ]);
    await expect.poll(() => modeTag.getAttribute('data-mode')).toBe('auto');
    await modeTag.getByText('Checkout · applies when each turn ends').waitFor();
    expect(await modeTag.getAttribute('title')).toMatch(/When each turn ends, the turn's changes are merged/);
    expect(await modeTag.locator('.checkout-mode-count').count()).toBe(0);
    await page.getByRole('button', { name: 'Changes', exact: true }).waitFor();
    await screenshot(page, 'header-checkout-auto');
    expect(watched.errors).toEqual([]);
  }, 90_000);
});
