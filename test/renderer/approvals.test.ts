import fs from 'node:fs';
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';
import { createSession, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * The approvals panel in a browser against `keel serve` and the scripted provider: the exact change as a
 * Monaco diff, the decisions (once, session, path glob, deny with a reason, keyboard shortcuts), what each
 * decision recorded in the log and on disk, grants and their revocation, and a pending approval that
 * outlives a server restart.
 */

const APP_LINES = [
  '// The server entry point.',
  ...Array.from({ length: 30 }, (_, i) => `export const setting${i} = ${i};`),
  'export const port = 3000;',
  ...Array.from({ length: 10 }, (_, i) => `export const tail${i} = '${i}';`),
  '',
];

/** A project folder with src/app.ts and src/util/math.ts, in `dir`. */
function makeProject(dir: string, name: string): string {
  const project = path.join(dir, name);
  fs.mkdirSync(path.join(project, 'src', 'util'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src', 'app.ts'), APP_LINES.join('\n'));
  fs.writeFileSync(
    path.join(project, 'src', 'util', 'math.ts'),
    'export const add = (a: number, b: number) => a + b;\n',
  );
  return project;
}

/** Waits for the card's Monaco diff to be computed and painted; returns the card. */
async function waitForDiff(card: Locator): Promise<void> {
  await card.locator('.diff-view[data-state="ready"]').waitFor();
}

/** Monaco renders spaces as no-break spaces: the text after the change, normalised. */
async function modifiedText(card: Locator): Promise<string> {
  // The modified side of a diff, or the one editor of a new file.
  const lines = card.locator('.editor.modified .view-lines, .diff-editor > .monaco-editor .view-lines');
  const text = await lines.first().textContent();
  return (text ?? '').replace(/\u00a0/g, ' ');
}

const grantOf = (events: SessionEvent[], requestSeq: number) =>
  events.find((event) => event.kind === 'approval_granted' && event.requestSeq === requestSeq);
const requestsOf = (events: SessionEvent[]) => events.filter((event) => event.kind === 'approval_request');

describe.skipIf(!HAS_CHROMIUM)('approvals in the browser', () => {
  const app = setUpApp({ prefix: 'keel-ui-approvals-', startIn: 'test' });

  it('approves edits from their diff once, for the session and for a path glob, and revokes a grant', async () => {
    await app.start();
    const watched = app.watch('approvals');
    const page = await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const project = makeProject(app.dir, 'approve-project');
    // In the folder itself: the tools' paths are the project's own (the restart test below uses the checkout).
    const sessionId = await createSession(page, {
      title: 'Approvals',
      projectFolder: project,
      checkout: 'direct',
    });

    // Allow once, from the diff, with the keyboard (focus is still in the composer).
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Changing the port.',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'src/app.ts',
              old_string: 'export const port = 3000;',
              new_string: 'export const port = 8080;',
            },
          },
        ],
      },
      { kind: 'reply', text: 'Port changed.' },
    );
    await sendMessage(page, 'Use port 8080.');
    const editCard = page.getByRole('article', { name: 'Approval needed: edit_file' });
    await waitForDiff(editCard);
    expect(await editCard.locator('.diff-stats').getAttribute('aria-label')).toBe(
      '1 line added, 1 line removed',
    );
    expect(await modifiedText(editCard)).toContain('export const port = 8080;');
    await editCard.getByText('typescript', { exact: true }).waitFor();
    // The window title and the sidebar count the sessions that wait.
    await expect.poll(() => page.title()).toBe('(1) Keel — 1 awaiting approval');
    await page.getByRole('button', { name: /1 session awaits approval/ }).waitFor();
    await screenshot(page, 'approvals-01-edit-side-by-side');
    await editCard.getByRole('button', { name: 'Inline' }).click();
    await editCard.locator('.diff-view[data-mode="inline"]').waitFor();
    await screenshot(page, 'approvals-02-edit-inline');
    await editCard.getByRole('button', { name: 'Side by side' }).click();
    await page.getByLabel('Message').focus();
    await page.keyboard.press('Control+Enter');
    await page.getByText('Port changed.').waitFor();
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toContain(
      'export const port = 8080;',
    );
    const decisions = page.getByRole('list', { name: 'Decisions' });
    await decisions.getByText(/Allowed edit_file src\/app\.ts once/).waitFor();
    let events = await readEvents(page, sessionId);
    const firstRequest = requestsOf(events)[0];
    expect(firstRequest && grantOf(events, firstRequest.seq)).toMatchObject({ scope: 'once' });
    await expect.poll(() => page.title()).toBe('Keel');

    // Allow for this session: a later write_file runs without asking.
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'notes/todo.md', content: '- ship it\n' } }],
      },
      { kind: 'reply', text: 'Noted.' },
    );
    await sendMessage(page, 'Write a todo.');
    const writeCard = page.getByRole('article', { name: 'Approval needed: write_file' });
    await waitForDiff(writeCard);
    await writeCard.getByText('new file', { exact: true }).waitFor();
    await writeCard.getByRole('button', { name: 'Allow write_file for this session' }).click();
    await page.getByText('Noted.').waitFor();
    // The receipts take one line: the newest decision (the first stays in the conversation).
    await decisions.getByText(/Allowed write_file .*for this session/).waitFor();
    expect(await decisions.getByRole('listitem').count()).toBe(1);
    expect(fs.readFileSync(path.join(project, 'notes', 'todo.md'), 'utf8')).toBe('- ship it\n');
    events = await readEvents(page, sessionId);
    const sessionRequest = requestsOf(events)[1];
    const sessionGrant = sessionRequest && grantOf(events, sessionRequest.seq);
    expect(sessionGrant).toMatchObject({ scope: 'session' });
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'notes/later.md', content: '- later\n' } }],
      },
      { kind: 'reply', text: 'Also noted.' },
    );
    await sendMessage(page, 'And another.');
    await page.getByText('Also noted.').waitFor();
    expect(fs.readFileSync(path.join(project, 'notes', 'later.md'), 'utf8')).toBe('- later\n');
    expect(requestsOf(await readEvents(page, sessionId))).toHaveLength(2);

    // Allow for a path glob: pre-filled from the file's folder, widened by hand to src/**.
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/util/math.ts', old_string: 'a + b;', new_string: 'a + b + 0;' },
          },
        ],
      },
      { kind: 'reply', text: 'Math edited.' },
    );
    await sendMessage(page, 'Touch the math.');
    const pathCard = page.getByRole('article', { name: 'Approval needed: edit_file' });
    await waitForDiff(pathCard);
    // At a laptop's height the scope and the reason are folded under one toggle (issue 37).
    await pathCard.getByRole('button', { name: /deny options$/ }).click();
    const glob = pathCard.getByLabel('Path glob');
    await expect.poll(() => glob.inputValue()).toBe('src/util/**');
    await glob.fill('/etc/**');
    await pathCard.getByText('Path globs are relative to the workspace').waitFor();
    expect(await pathCard.getByRole('button', { name: 'Allow for path' }).isDisabled()).toBe(true);
    await glob.fill('src/**');
    await pathCard.getByText(/Any tool call on a workspace path matching src\/\*\*/).waitFor();
    await screenshot(page, 'approvals-03-path-glob');
    await pathCard.getByRole('button', { name: 'Allow for path' }).click();
    await page.getByText('Math edited.').waitFor();
    expect(fs.readFileSync(path.join(project, 'src', 'util', 'math.ts'), 'utf8')).toContain('a + b + 0;');
    events = await readEvents(page, sessionId);
    const pathRequest = requestsOf(events)[2];
    expect(pathRequest && grantOf(events, pathRequest.seq)).toMatchObject({ scope: 'path:src/**' });
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'src/app.ts',
              old_string: 'export const port = 8080;',
              new_string: 'export const port = 9090;',
            },
          },
        ],
      },
      { kind: 'reply', text: 'Port changed again.' },
    );
    await sendMessage(page, 'Port 9090 now.');
    await page.getByText('Port changed again.').waitFor();
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toContain(
      'export const port = 9090;',
    );
    expect(requestsOf(await readEvents(page, sessionId))).toHaveLength(3);

    // The grants in effect, and revoking one: the calls it covered ask again.
    const grants = page.locator('details.grants');
    await grants.locator('summary', { hasText: '2 grants in effect' }).click();
    await grants.getByRole('listitem', { name: 'Grant: write_file for this session' }).waitFor();
    await screenshot(page, 'approvals-04-grants');
    await grants
      .getByRole('listitem', { name: 'Grant: write_file for this session' })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await grants.locator('summary', { hasText: '1 grant in effect' }).waitFor();
    events = await readEvents(page, sessionId);
    expect(events.find((event) => event.kind === 'approval_revoked')).toMatchObject({
      grantSeq: sessionGrant?.seq,
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'notes/third.md', content: '- third\n' } }],
      },
      { kind: 'reply', text: 'Third written.' },
    );
    await sendMessage(page, 'One more note.');
    const askedAgain = page.getByRole('article', { name: 'Approval needed: write_file' });
    await waitForDiff(askedAgain);
    await askedAgain.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Third written.').waitFor();
    expect(requestsOf(await readEvents(page, sessionId))).toHaveLength(4);

    expect(app.provider.requests.filter((request) => request.rejected !== undefined)).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);

  it('denies a command with a reason that the next request carries to the model', async () => {
    // The first test starts the server and opens the app.
    const page = await app.reopen();
    const watched = app.watch('approvals-command');
    const project = makeProject(app.dir, 'command-project');
    const sessionId = await createSession(page, {
      title: 'Commands',
      projectFolder: project,
      networkAllow: ['registry.npmjs.org'],
      checkout: 'direct',
    });
    const reason = 'Do not delete the build folder; run npm test instead.';

    app.provider.enqueue({
      kind: 'reply',
      text: 'Cleaning first.',
      toolCalls: [
        { name: 'run_command', arguments: { command: 'rm -rf build && npm run build', timeout_ms: 900000 } },
      ],
    });
    await sendMessage(page, 'Rebuild everything.');
    const card = page.getByRole('article', { name: 'Approval needed: run_command' });
    await card.getByLabel('Command').getByText('rm -rf build && npm run build').waitFor();
    await card.getByText('10 min').waitFor();
    await card.getByText('(asked for 15 min, capped)').waitFor();
    await card.getByText('registry.npmjs.org').waitFor();
    await card.getByText(project, { exact: false }).first().waitFor();
    await expect.poll(() => card.getByLabel('Command prefix').inputValue()).toBe('rm');
    await card.getByRole('button', { name: /deny options$/ }).click();
    await card.getByLabel('Reason').fill(reason);
    await screenshot(page, 'approvals-05-command');

    // Ctrl+Backspace denies (focus outside any text field), sending the reason typed.
    app.provider.enqueue({ kind: 'reply', text: 'Understood: I will not delete it.' });
    await card.locator('.approval-header').click();
    await page.keyboard.press('Control+Backspace');
    await page.getByText('Understood: I will not delete it.').waitFor();
    await page
      .getByRole('list', { name: 'Decisions' })
      .getByText(/Denied run_command rm -rf build && npm run build/)
      .waitFor();
    await screenshot(page, 'approvals-06-denied');
    const events = await readEvents(page, sessionId);
    expect(events.find((event) => event.kind === 'approval_denied')).toMatchObject({ reason });
    const last = app.provider.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const toolMessage = last.messages.find((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain(reason);
    expect(fs.existsSync(path.join(project, 'build'))).toBe(false);

    // A protected path says why it is protected; Enter in the reason box denies.
    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [
        { name: 'write_file', arguments: { path: '.vscode/tasks.json', content: '{"tasks": []}\n' } },
      ],
    });
    await sendMessage(page, 'Add an editor task.');
    const protectedCard = page.getByRole('article', { name: 'Approval needed: write_file' });
    await protectedCard
      .getByRole('note')
      .getByText(/Protected path\. .*\.vscode \(editor tasks and launch configs run code\)/)
      .waitFor();
    await waitForDiff(protectedCard);
    await screenshot(page, 'approvals-07-protected-path');
    app.provider.enqueue({ kind: 'reply', text: 'No editor task then.' });
    await protectedCard.getByRole('button', { name: /deny options$/ }).click();
    await protectedCard.getByLabel('Reason').fill('Not in .vscode.');
    await protectedCard.getByLabel('Reason').press('Enter');
    await page.getByText('No editor task then.').waitFor();
    expect(fs.existsSync(path.join(project, '.vscode'))).toBe(false);
    expect(watched.errors).toEqual([]);
  }, 60_000);

  it('keeps a pending approval across a server restart and decides it after', async () => {
    // The first test starts the server and opens the app.
    const page = await app.reopen();
    const watched = app.watch('approvals-restart');
    const project = makeProject(app.dir, 'restart-project');
    // The default: a checkout whose changes reach the folder when the turn ends.
    await createSession(page, { title: 'Restart', projectFolder: project });
    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [
        {
          name: 'write_file',
          arguments: { path: 'after-restart.txt', content: 'survived\n' },
        },
      ],
    });
    await sendMessage(page, 'Write the file.');
    await page.getByRole('article', { name: 'Approval needed: write_file' }).waitFor();
    expect(fs.existsSync(path.join(project, 'after-restart.txt'))).toBe(false);

    await app.restartServe();
    await app.goto();
    // The old page's bridge logged its failed reconnects while the server was down: expected.
    watched.errors.length = 0;
    const badge = page.getByRole('button', { name: /1 session awaits approval: open Restart/ });
    await badge.waitFor();
    await expect.poll(() => page.title()).toBe('(1) Keel — 1 awaiting approval');
    await badge.click();
    const card = page.getByRole('article', { name: 'Approval needed: write_file' });
    await waitForDiff(card);
    expect(await modifiedText(card)).toContain('survived');
    await screenshot(page, 'approvals-08-after-restart');
    app.provider.enqueue({ kind: 'reply', text: 'Written after the restart.' });
    await card.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Written after the restart.').waitFor();
    await expect
      .poll(
        () =>
          fs.existsSync(path.join(project, 'after-restart.txt')) &&
          fs.readFileSync(path.join(project, 'after-restart.txt'), 'utf8'),
        { timeout: 10_000 },
      )
      .toBe('survived\n');
    await expect.poll(() => page.title()).toBe('Keel');
    expect(watched.errors).toEqual([]);
  }, 60_000);
});
