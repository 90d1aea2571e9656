import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

describe.skipIf(!HAS_CHROMIUM)("the model's reasoning in the transcript", () => {
  const app = setUpApp({
    prefix: 'keel-ui-reasoning-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(path.join(project, 'src', 'a.txt'), 'alpha\n');
    },
  });

  it('shows "Thinking…" while reasoning streams, then the reasoning collapsed under its message', async () => {
    const watched = app.watch('reasoning');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Thinking', projectFolder: project });

    // The scripted server streams reasoning_content deltas (as Ollama, vLLM and DeepSeek do), slowly.
    app.provider.enqueue(
      {
        kind: 'reply',
        thinking: 'First I should read a.txt to see what it holds.',
        toolCalls: [{ name: 'read_file', arguments: { path: 'src/a.txt' } }],
        delayMs: 150,
      },
      { kind: 'reply', thinking: 'It holds alpha.', text: 'The file says alpha.' },
    );
    await sendMessage(page, 'What is in a.txt?');
    const live = page.locator('.bubble.is-live .reasoning');
    await live.getByText('Thinking…').waitFor();
    await screenshot(page, 'reasoning-01-live');

    await page.getByText('The file says alpha.').waitFor();
    await waitForIdle(page);
    const blocks = page.locator('.bubble-assistant:not(.is-live) details.reasoning');
    await expect.poll(() => blocks.count()).toBe(2);
    // Collapsed: the summary says Thinking, the text shows once opened.
    const first = blocks.first();
    expect(await first.getAttribute('open')).toBeNull();
    expect(await first.locator('summary').textContent()).toBe('Thinking');
    expect(await first.locator('.reasoning-text').isVisible()).toBe(false);
    await first.locator('summary').click();
    expect(await first.locator('.reasoning-text').textContent()).toBe(
      'First I should read a.txt to see what it holds.',
    );
    await screenshot(page, 'reasoning-02-opened');

    const assistants = (await readEvents(page, sessionId)).filter(
      (event) => event.kind === 'assistant_message',
    );
    expect(assistants.map((event) => event.kind === 'assistant_message' && event.reasoning)).toEqual([
      [{ type: 'reasoning_text', text: 'First I should read a.txt to see what it holds.' }],
      [{ type: 'reasoning_text', text: 'It holds alpha.' }],
    ]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });

  it('pins the effort chosen in the New session dialog', async () => {
    const watched = app.watch('reasoning-dialog');
    const page = await app.goto();
    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    await dialog.getByLabel('Project folder').fill(project);
    await dialog.getByLabel('Title (optional)').fill('Effort high');
    await dialog.getByLabel('Reasoning').selectOption('high');
    await screenshot(page, 'reasoning-03-dialog');
    await dialog.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: 'Effort high' }).waitFor();
    const listed = await page.evaluate<{
      ok: boolean;
      value: { sessions: { id: string; title?: string }[] };
    }>(`window.keel.sessions.list({})`);
    const id = listed.value.sessions.find((session) => session.title === 'Effort high')?.id ?? '';
    expect((await readEvents(page, id))[0]).toMatchObject({
      kind: 'session_created',
      reasoningEffort: 'high',
    });
    expect(watched.errors).toEqual([]);
  });
});
