import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Issue #37 item 5: a session's endpoint, model, reasoning effort and policy shown in its header and changed
 * there, each recorded as the event the CLI records (model_changed, reasoning_changed, policy_changed).
 */

let project: string;

describe.skipIf(!HAS_CHROMIUM)("a session's settings in its header", () => {
  const app = setUpApp({
    prefix: 'keel-ui-header-settings-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'a.txt'), 'alpha\n');
    },
  });

  it('fixes a wrong endpoint from the header (model_changed), and changes the policy there (policy_changed)', async () => {
    const watched = app.watch('header-settings');
    const page = await app.goto();
    // A session made with a wrong base URL: nothing listens on port 9.
    const sessionId = await createSession(page, {
      title: 'Wrong endpoint',
      projectFolder: project,
      baseUrl: 'http://127.0.0.1:9/v1',
      contextWindow: 32_000,
    });
    const header = page.locator('.session-header');
    await header.getByLabel('Endpoint').getByText('127.0.0.1:9', { exact: true }).waitFor();
    expect(await header.getByLabel('Reasoning effort').textContent()).toContain('effort off');
    expect(await header.getByLabel('Approval policy').inputValue()).toBe('ask');

    // Only the base URL edited: the one button says what it does and is enabled.
    await header.getByRole('button', { name: 'Switch model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Switch model' });
    await dialog.waitFor();
    const submit = dialog.locator('button[type=submit]');
    expect(await submit.textContent()).toBe('Switch effort');
    expect(await submit.isDisabled()).toBe(true);
    await dialog.getByLabel('Base URL').fill(app.provider.openaiBaseUrl);
    expect(await submit.textContent()).toBe('Switch endpoint');
    expect(await submit.isDisabled()).toBe(false);
    await screenshot(page, 'header-settings-01-endpoint');
    await submit.click();
    await dialog.waitFor({ state: 'detached' });
    const endpoint = new URL(app.provider.openaiBaseUrl).host;
    await header.getByLabel('Endpoint').getByText(endpoint, { exact: true }).waitFor();
    expect((await readEvents(page, sessionId)).at(-1)).toMatchObject({
      kind: 'model_changed',
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: app.provider.openaiBaseUrl,
      contextWindow: 32_000,
    });
    // The next request goes to the new endpoint.
    const before = app.provider.requests.length;
    app.provider.enqueue({ kind: 'reply', text: 'Reached.' });
    await sendMessage(page, 'Are you there?');
    await page.getByText('Reached.').waitFor();
    await waitForIdle(page);
    expect(app.provider.requests.length).toBe(before + 1);

    // The policy, from its select: policy_changed, and the header shows it.
    await header.getByLabel('Approval policy').selectOption('auto-edit');
    await expect
      .poll(async () => (await readEvents(page, sessionId)).at(-1))
      .toMatchObject({ kind: 'policy_changed', policy: 'auto-edit' });
    await expect.poll(() => header.getByLabel('Approval policy').inputValue()).toBe('auto-edit');
    await screenshot(page, 'header-settings-02-policy');
    expect(watched.errors).toEqual([]);
  });

  it('takes a change made during a running turn from its next request, and says so', async () => {
    const watched = app.watch('header-settings-running');
    const page = await app.goto();
    const sessionId = await createSession(page, {
      title: 'Changed mid-turn',
      projectFolder: project,
      baseUrl: app.provider.openaiBaseUrl,
      contextWindow: 32_000,
    });
    const before = app.provider.requests.length;
    // The first reply streams for a few seconds (one word each 150 ms), then reads a file: a second request.
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Let me look at the file before I change anything in this project. '.repeat(3),
        delayMs: 150,
        toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }],
      },
      { kind: 'reply', text: 'Read it.' },
    );
    await sendMessage(page, 'Look at a.txt');
    const header = page.locator('.session-header');
    await expect.poll(() => header.locator('.badge').getAttribute('data-status')).toBe('running');
    await header.getByLabel('Approval policy').selectOption('auto-edit');
    await header.getByRole('status').getByText('policy auto-edit from the next request').waitFor();
    await header.getByRole('button', { name: 'Switch model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Switch model' });
    await dialog.getByText("it applies from that turn's next request").waitFor();
    await dialog.getByLabel('Reasoning').selectOption('high');
    await dialog.getByRole('button', { name: 'Switch effort' }).click();
    await dialog.getByText('its next request uses this').waitFor();
    await screenshot(page, 'header-settings-03-running');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByText('Read it.').waitFor();
    await waitForIdle(page);

    type Body = { reasoning_effort?: string };
    const bodies = app.provider.requests.slice(before).map((request) => request.body as Body);
    expect(bodies.map((body) => body.reasoning_effort)).toEqual([undefined, 'high']);
    const tail = (await readEvents(page, sessionId)).map((event) => event.kind).slice(-4);
    expect(tail).toEqual(['tool_result', 'policy_changed', 'reasoning_changed', 'assistant_message']);
    await expect.poll(() => header.getByLabel('Approval policy').inputValue()).toBe('auto-edit');
    expect(watched.errors).toEqual([]);
  });

  it('offers only read-only to a session created read-only', async () => {
    const page = await app.goto();
    await createSession(page, {
      title: 'Reader',
      projectFolder: project,
      baseUrl: app.provider.openaiBaseUrl,
      contextWindow: 32_000,
      policy: 'read-only',
      toolMode: 'read-only',
    });
    const select = page.locator('.session-header').getByLabel('Approval policy');
    expect(await select.inputValue()).toBe('read-only');
    expect(await select.locator('option:not([disabled])').allTextContents()).toEqual(['read-only']);
  });
});
