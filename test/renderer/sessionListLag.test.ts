import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChannelOutput, IpcResult } from '../../main/ipc/contract.js';
import { createSession, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

describe.skipIf(!HAS_CHROMIUM)('the session list while a turn runs', () => {
  const app = setUpApp({
    prefix: 'keel-ui-lag-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'notes.txt'), 'the notes\n');
    },
  });

  it('marks a session whose running turn is not indexed yet as updating, and drops the mark when it ends', async () => {
    const watched = app.watch('session-list-lag');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Lagging session', projectFolder: project });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'reading the zephyr notes',
        toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }],
      },
      // The turn stays running, its reply, call and result held back from the index, until Stop.
      { kind: 'hang' },
    );
    await sendMessage(page, 'Read the notes');
    await expect.poll(() => app.provider.requests.length).toBe(2);

    const mark = page.locator(`[data-session-id="${sessionId}"] .tag-updating`);
    await mark.waitFor();
    expect(await mark.textContent()).toBe('updating…');
    // The title counts what the index lacks: the log's events beyond the row the list read.
    const listed = await page.evaluate<IpcResult<ChannelOutput<'sessions.list'>>>(
      'window.keel.sessions.list({})',
    );
    if (!listed.ok) throw new Error(listed.error.message);
    const row = listed.value.sessions.find((session) => session.id === sessionId)!;
    const behind = (await readEvents(page, sessionId)).length - row.lastSeq;
    expect(behind).toBeGreaterThanOrEqual(3);
    expect(row.indexBehind).toBe(behind);
    // The page's list may have been read before the turn's last held-back event: it comes to the same count.
    await expect
      .poll(() => mark.getAttribute('title'), { timeout: 10_000 })
      .toBe(
        `Search and counts are catching up: ${behind} events of the running turn not indexed yet (they are when it ends)`,
      );
    const option = page.getByRole('option', { name: /Lagging session/ });
    expect(await option.getAttribute('aria-label')).toMatch(/, search updating$/);
    await screenshot(page, 'session-list-lag-01-updating');

    // Stopping ends the turn: the index catches up, the mark goes, the reply is found by search.
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await mark.waitFor({ state: 'detached' });
    await page.getByRole('searchbox').fill('zephyr');
    await page.getByRole('option', { name: /Lagging session/ }).waitFor();
    await screenshot(page, 'session-list-lag-02-caught-up');
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });
});
