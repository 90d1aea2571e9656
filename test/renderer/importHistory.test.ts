import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeFolder, claudeV02, claudeV10, claudeV20, uuid } from '../support/historyFixtures.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

// Issue 35: Settings → Import history against keel serve in Chromium: Claude Code sessions found per project,
// imported for that project with a progress bar and a summary, then in the session list under their project,
// found by search and opened.

const sources = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-ui-import-src-')));
const project = path.join(sources, 'proj');
fs.mkdirSync(project);
const folder = path.join(sources, 'claude', 'projects', claudeFolder(project));
claudeV02(path.join(folder, `${uuid(9001)}.jsonl`), project);
claudeV10(path.join(folder, `${uuid(9002)}.jsonl`), project);
claudeV20(folder, project);
afterAll(() => fs.rmSync(sources, { recursive: true, force: true }));

describe.skipIf(!HAS_CHROMIUM)('settings: import history', () => {
  const app = setUpApp({
    prefix: 'keel-ui-import-',
    serveEnv: { CLAUDE_CONFIG_DIR: path.join(sources, 'claude') },
  });

  it('finds Claude Code sessions per project, imports one project with progress and a summary; they are listed, searchable and open', async () => {
    const watched = app.watch('import-history');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Import history' }).waitFor();
    await page.getByRole('button', { name: 'Find sessions' }).click();
    const table = page.getByRole('table', { name: 'Sessions found per project' });
    const row = table.getByRole('row').filter({ hasText: project });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      project,
      '3',
      '17',
      '3',
      '0',
      '0',
      'Import',
    ]);

    await row.getByRole('button', { name: `Import ${project}` }).click();
    const summary = page.getByRole('status', { name: 'Import summary' });
    await summary.getByText('Imported 3 sessions (3 new, 0 with a new part).').waitFor({ timeout: 60_000 });
    await summary.getByText('1 lines could not be read').waitFor();
    await screenshot(page, 'import-history-summary');
    // Found again: everything is here now, nothing to import.
    await expect
      .poll(() => row.getByRole('cell').allTextContents())
      .toEqual([project, '3', '17', '0', '0', '3', '']);

    // The sessions are in the list under their project; search finds one by a word of its transcript.
    await page
      .getByRole('option', { name: new RegExp(`^Project proj, ${project}, \\d+ sessions`) })
      .waitFor();
    const search = page.getByLabel('Search sessions');
    await search.fill('expectation');
    const option = page.getByRole('option').filter({ has: page.locator('mark', { hasText: 'expectation' }) });
    await option.first().waitFor();
    expect(await option.first().getAttribute('data-session-id')).toBe(`cc-${uuid(9002)}`);
    await option.first().click();
    await page.getByText('The expectation is wrong: 1 + 1 is 2.').first().waitFor();
    expect(watched.errors).toEqual([]);
  }, 180_000);
});
