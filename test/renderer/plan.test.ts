import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

const plan = (statuses: string[]) => ({
  todos: [
    { content: 'Read the server', status: statuses[0], activeForm: 'Reading the server' },
    { content: 'Add a rate limiter', status: statuses[1], activeForm: 'Adding a rate limiter' },
    { content: 'Test the limit', status: statuses[2], activeForm: 'Testing the limit' },
  ],
});

describe.skipIf(!HAS_CHROMIUM)('the plan in the session view', () => {
  const app = setUpApp({
    prefix: 'keel-ui-plan-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'api');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(path.join(project, 'src', 'server.js'), "app.get('/login', login);\n");
    },
  });

  it('pins the latest todo list above the composer and updates it live as the turn goes on', async () => {
    const watched = app.watch('plan');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Rate limits', projectFolder: project });
    const checklist = page.locator('.session-footer').getByRole('group', { name: 'Plan' });
    const steps = checklist.getByRole('list', { name: 'Plan steps' }).getByRole('listitem');
    expect(await checklist.count()).toBe(0);

    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Planning first.',
        toolCalls: [
          { id: 't1', name: 'todo', arguments: plan(['in_progress', 'pending', 'pending']) },
          { id: 'r1', name: 'read_file', arguments: { path: 'src/server.js' } },
        ],
      },
      // Streams slowly: the first plan is on screen while the turn still runs.
      {
        kind: 'reply',
        text: Array.from({ length: 30 }, (_, i) => `word${i} `),
        delayMs: 80,
        toolCalls: [{ id: 't2', name: 'todo', arguments: plan(['completed', 'in_progress', 'pending']) }],
      },
      { kind: 'reply', text: 'The limiter is next.' },
    );
    await sendMessage(page, 'add rate limiting to login');
    // One line until asked for (issue 37): its steps open on demand.
    await checklist.locator('summary').click();
    await expect
      .poll(() => steps.allTextContents())
      .toEqual([
        '▸Reading the server (in progress)',
        '○Add a rate limiter (pending)',
        '○Test the limit (pending)',
      ]);
    expect(await page.locator('.session-header .badge').getAttribute('data-status')).toBe('running');
    expect(await checklist.locator('summary').textContent()).toBe('Plan · 0 of 3 done · Reading the server');
    await screenshot(page, 'plan-01-first-list-while-running');

    await page.getByText('The limiter is next.').waitFor();
    await waitForIdle(page);
    expect(await steps.allTextContents()).toEqual([
      '✓Read the server (completed)',
      '▸Adding a rate limiter (in progress)',
      '○Test the limit (pending)',
    ]);
    expect(await checklist.locator('summary').textContent()).toBe(
      'Plan · 1 of 3 done · Adding a rate limiter',
    );
    expect(await steps.nth(1).getAttribute('data-status')).toBe('in_progress');
    // Each todo call in the transcript shows the list it sent, not its JSON.
    const sent = page.getByRole('list', { name: 'Plan sent' });
    await expect.poll(() => sent.count()).toBe(2);
    expect(await sent.nth(0).getByRole('listitem').first().textContent()).toBe(
      '▸Reading the server (in progress)',
    );
    await screenshot(page, 'plan-02-updated');

    const results = (await readEvents(page, sessionId)).filter(
      (event) => event.kind === 'tool_result' && event.tool === 'todo',
    );
    expect(results.map((event) => event.kind === 'tool_result' && event.content)).toEqual([
      'Plan updated: 0 of 3 steps completed; in progress: Reading the server.',
      'Plan updated: 1 of 3 steps completed; in progress: Adding a rate limiter.',
    ]);

    // Reopening the session shows the same plan, derived from the log.
    await page.reload();
    await page.getByRole('option', { name: /Rate limits/ }).click();
    await checklist.locator('summary').click();
    await expect
      .poll(() => steps.allTextContents())
      .toEqual([
        '✓Read the server (completed)',
        '▸Adding a rate limiter (in progress)',
        '○Test the limit (pending)',
      ]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });
});
