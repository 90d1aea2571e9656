import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

describe.skipIf(!HAS_CHROMIUM)('project instructions in the session view', () => {
  const app = setUpApp({
    prefix: 'keel-ui-instructions-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'monorepo');
      fs.mkdirSync(path.join(project, 'packages', 'web'), { recursive: true });
      fs.writeFileSync(path.join(project, 'AGENTS.md'), 'Run `npm test` before you finish.\n');
      // Over the 32 KiB cap on its own: the model gets its first part, and the view says so.
      fs.writeFileSync(path.join(project, 'packages', 'web', 'CLAUDE.md'), 'Use tabs.\n'.repeat(4000));
    },
  });

  it('lists the files a turn loaded, marks the one the cap cut, and shows a change made between turns', async () => {
    const watched = app.watch('instructions');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Monorepo work', projectFolder: project });

    app.provider.enqueue({ kind: 'reply', text: 'Noted the instructions.' });
    await sendMessage(page, 'What are the rules here?');
    await page.getByText('Noted the instructions.').waitFor();
    await waitForIdle(page);
    const marker = page.locator('.marker-instructions');
    await expect.poll(() => marker.count()).toBe(1);
    expect(await marker.locator('summary').textContent()).toMatch(
      /^Project instructions loaded: AGENTS\.md, packages\/web\/CLAUDE\.md · one file was cut at the size cap · /,
    );
    await marker.locator('summary').click();
    const files = marker.getByRole('list', { name: 'Instruction files' }).getByRole('listitem');
    expect(await files.allTextContents()).toEqual([
      'AGENTS.md · 34 B',
      'packages/web/CLAUDE.md · 39.1 KiB · cut: the model got the first 32 KiB',
    ]);
    await screenshot(page, 'instructions-01-loaded');

    // No change, no new marker; an edit between turns is one more.
    app.provider.enqueue({ kind: 'reply', text: 'Still the same.' });
    await sendMessage(page, 'Anything new?');
    await page.getByText('Still the same.').waitFor();
    await waitForIdle(page);
    expect(await marker.count()).toBe(1);
    fs.writeFileSync(path.join(project, 'AGENTS.md'), 'Use pnpm.\n');
    app.provider.enqueue({ kind: 'reply', text: 'Switched to pnpm.' });
    await sendMessage(page, 'And now?');
    await page.getByText('Switched to pnpm.').waitFor();
    await waitForIdle(page);
    await expect.poll(() => marker.count()).toBe(2);
    const loaded = (await readEvents(page, sessionId)).filter(
      (event) => event.kind === 'instructions_loaded',
    );
    expect(loaded).toHaveLength(2);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });
});
