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

  it('switches model and effort in the model switch: only the efforts the model takes, then the effort alone', async () => {
    const watched = app.watch('reasoning-switch');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Effort switch', projectFolder: project });
    const header = page.locator('.session-header');
    await header.getByRole('button', { name: 'Switch model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Switch model' });
    await dialog.waitFor();
    const effort = dialog.getByLabel('Reasoning');
    const offered = () => effort.locator('option').allTextContents();

    // A model that always reasons offers no "off"; a held "off" shows as its default, saying why.
    await effort.selectOption('off');
    await dialog.getByLabel('Provider').selectOption('anthropic');
    await dialog.getByLabel('Model', { exact: true }).fill('claude-opus-5-5');
    expect(await offered()).toEqual(["Model's default (medium)", 'Low', 'Medium', 'High']);
    await expect.poll(() => effort.inputValue()).toBe('default');
    await dialog.getByText('claude-opus-5-5 does not take the effort off').waitFor();
    await screenshot(page, 'reasoning-04-switch-always-reasons');

    // Back on the OpenAI-compatible server: another model at high.
    await dialog.getByLabel('Provider').selectOption('openai-compatible');
    await dialog.getByLabel('Model', { exact: true }).fill('scripted-other');
    expect(await offered()).toEqual(["Model's default (off)", 'Off', 'Low', 'Medium', 'High']);
    await dialog.getByLabel('Context window (tokens)').fill('32000');
    await effort.selectOption('high');
    await dialog.getByRole('button', { name: 'Switch model', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await header.getByText('scripted-other', { exact: true }).waitFor();
    expect((await readEvents(page, sessionId)).at(-1)).toMatchObject({
      kind: 'model_changed',
      model: 'scripted-other',
      reasoningEffort: 'high',
    });

    type Body = { model?: string; reasoning_effort?: string };
    let before = app.provider.requests.length;
    app.provider.enqueue({ kind: 'reply', thinking: 'Hard.', text: 'At high.' });
    await sendMessage(page, 'Think hard');
    await page.getByText('At high.').waitFor();
    await waitForIdle(page);
    expect(app.provider.requests.slice(before).map((request) => request.body as Body)).toEqual([
      expect.objectContaining({ model: 'scripted-other', reasoning_effort: 'high' }),
    ]);

    // The same model, another effort: reasoning_changed, and the next request carries it.
    await header.getByRole('button', { name: 'Switch model' }).click();
    await dialog.waitFor();
    await expect.poll(() => effort.inputValue()).toBe('high');
    await effort.selectOption('low');
    await dialog.getByRole('button', { name: 'Switch effort' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await readEvents(page, sessionId)).at(-1)).toMatchObject({
      kind: 'reasoning_changed',
      effort: 'low',
    });
    before = app.provider.requests.length;
    app.provider.enqueue({ kind: 'reply', text: 'At low.' });
    await sendMessage(page, 'Think a little');
    await page.getByText('At low.').waitFor();
    await waitForIdle(page);
    expect(app.provider.requests.slice(before).map((request) => request.body as Body)).toEqual([
      expect.objectContaining({ model: 'scripted-other', reasoning_effort: 'low' }),
    ]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);
});
