import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createSession, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';
import { artifactScreenshot } from './layoutMeasure.js';

/*
 * Issue 37, the transcript for people: a command as a terminal line with its output, exit code and time; a read
 * as its path and lines; an edit as a diff (the one recorded once it ran); no JSON with `\n` escapes; and
 * "Jump to latest" while reading above the bottom, with a sent message followed even from there.
 */

const boxed = (await detectSandbox()).kind !== 'none';
let project: string;

describe.skipIf(!HAS_CHROMIUM)('tool cards and following the conversation', () => {
  const app = setUpApp({
    prefix: 'keel-ui-cards-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'cards');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(
        path.join(project, 'src', 'app.ts'),
        Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n',
      );
    },
  });

  it('renders calls as people read them and jumps back to the latest message', async () => {
    const watched = app.watch('transcript-cards');
    const page = await app.goto();
    await createSession(page, {
      title: 'Cards',
      projectFolder: project,
      policy: 'full-auto',
      checkout: 'direct',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Reading, then editing.',
        toolCalls: [
          { id: 'r1', name: 'read_file', arguments: { path: 'src/app.ts', offset: 5, limit: 10 } },
          {
            id: 'e1',
            name: 'edit_file',
            arguments: {
              path: 'src/app.ts',
              old_string: 'export const v7 = 7;',
              new_string: 'export const v7 = 70;',
            },
          },
          ...(boxed
            ? [{ id: 'c1', name: 'run_command', arguments: { command: 'echo built && exit 3' } }]
            : []),
        ],
      },
      {
        kind: 'reply',
        text: Array.from({ length: 80 }, (_, i) => `Line ${i} of a long answer.`).join('\n\n'),
      },
    );
    await sendMessage(page, 'Change v7.');
    await page.getByText('Line 79 of a long answer.').waitFor();
    await waitForIdle(page);

    const read = page.getByRole('article', { name: /Tool call read_file/ });
    await read.getByText('lines 5–14').waitFor();
    expect(await read.locator('.tool-read code').textContent()).toBe('src/app.ts');
    const edit = page.getByRole('article', { name: /Tool call edit_file/ });
    const diff = edit.getByLabel('Change to src/app.ts');
    await diff.getByText('+export const v7 = 70;').waitFor();
    await diff.getByText('-export const v7 = 7;').waitFor();
    // The file's name is the card's: the diff starts at its first hunk.
    expect((await diff.textContent())?.startsWith('@@')).toBe(true);
    for (const card of [read, edit]) expect((await card.textContent()) ?? '').not.toContain('\\n');
    if (boxed) {
      const command = page.getByRole('article', { name: /Tool call run_command/ });
      expect(await command.getByLabel('Command').textContent()).toBe('$ echo built && exit 3');
      expect(await command.locator('.tool-exit').textContent()).toBe('exit 3');
      await command.locator('.tool-terminal-output').getByText('built').waitFor();
      expect(await command.locator('.tool-duration').textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
      // Its output's heading in people's words: no artifact file name (it carries an event number).
      expect(await command.locator('.tool-result summary').textContent()).toMatch(
        /^Output( \(failed\))? · \d+ lines? · whole output kept$/,
      );
    }
    await read.scrollIntoViewIfNeeded();
    await artifactScreenshot(page, 'transcript-cards');

    // Reading above the bottom: "Jump to latest" shows and takes the view back.
    await page.evaluate(`document.querySelector('[role="log"][aria-label="Transcript"]').scrollTop = 0`);
    const jump = page.getByRole('button', { name: '↓ Jump to latest' });
    await jump.waitFor();
    await artifactScreenshot(page, 'transcript-jump-to-latest');
    await jump.click();
    await expect.poll(() => jump.count()).toBe(0);
    const atBottom = `(() => { const e = document.querySelector('[role="log"][aria-label="Transcript"]'); return e.scrollHeight - e.scrollTop - e.clientHeight < 48; })()`;
    await expect.poll(() => page.evaluate<boolean>(atBottom)).toBe(true);

    // Scrolled up again, a message sent is followed to its reply.
    await page.evaluate(`document.querySelector('[role="log"][aria-label="Transcript"]').scrollTop = 0`);
    await jump.waitFor();
    app.provider.enqueue({ kind: 'reply', text: 'The follow-up answer.' });
    await sendMessage(page, 'And now?');
    await page.getByText('The follow-up answer.').waitFor();
    await expect.poll(() => page.evaluate<boolean>(atBottom)).toBe(true);
    expect(await jump.count()).toBe(0);

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });

  it('shows the reply being written whole after a reload mid-stream', async () => {
    const watched = app.watch('live-after-reload');
    const page = await app.goto();
    await createSession(page, { title: 'Live reload', projectFolder: project });
    app.provider.enqueue({
      kind: 'reply',
      text: Array.from({ length: 60 }, (_, i) => `word${i} `),
      delayMs: 100,
    });
    await sendMessage(page, 'Write slowly.');
    const bubble = page.getByRole('article', { name: 'Assistant (writing)' });
    await bubble.getByText(/word8 /).waitFor();
    // The address keeps the session: the reload opens it, and the reply shows from its first word.
    await page.reload();
    await page.getByRole('heading', { name: 'Live reload' }).waitFor();
    await bubble.getByText(/word20 /).waitFor();
    expect((await bubble.textContent()) ?? '').toContain('word0 word1 word2 ');
    await artifactScreenshot(page, 'transcript-live-after-reload');
    await page
      .getByRole('article', { name: 'Assistant (writing)' })
      .waitFor({ state: 'detached', timeout: 30_000 });
    await waitForIdle(page);
    expect(watched.errors).toEqual([]);
  });

  it('opens a search hit at the message it matched, marked', async () => {
    const watched = app.watch('search-hit');
    const page = await app.goto();
    await createSession(page, { title: 'Search hit', projectFolder: project });
    app.provider.enqueue(
      { kind: 'reply', text: 'The zebrafish notes are in the lab book.' },
      {
        kind: 'reply',
        text: Array.from({ length: 80 }, (_, i) => `Paragraph ${i} about other things.`).join('\n\n'),
      },
    );
    await sendMessage(page, 'Where are the notes?');
    await page.getByText('The zebrafish notes are in the lab book.').waitFor();
    await waitForIdle(page);
    await sendMessage(page, 'Tell me about everything else.');
    await page.getByText('Paragraph 79 about other things.').waitFor();
    await waitForIdle(page);
    await page.getByRole('button', { name: 'Keel home' }).click();
    await page.getByRole('searchbox').fill('zebrafish');
    // The search's answer (with the matched words) is on screen before the hit is opened.
    const option = page.getByRole('option', { name: /Search hit/ });
    await option.locator('.session-snippet mark').getByText('zebrafish').waitFor();
    await option.click();
    const hit = page.locator('.transcript-row.is-search-hit');
    await hit.getByText('The zebrafish notes are in the lab book.').waitFor();
    const log = await page.getByRole('log', { name: 'Transcript' }).boundingBox();
    await expect
      .poll(async () => {
        const box = await hit.boundingBox();
        return Boolean(box && log && box.y >= log.y && box.y + box.height <= log.y + log.height);
      })
      .toBe(true);
    await expect
      .poll(() => page.evaluate<number>(`CSS.highlights.get('search-hit')?.size ?? 0`))
      .toBeGreaterThan(0);
    await artifactScreenshot(page, 'transcript-search-hit');
    expect(watched.errors).toEqual([]);
  });
});
