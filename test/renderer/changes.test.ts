import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createSession, inDarkTheme, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, recordMeasurement, screenshot } from './harness.js';

/*
 * The Changes view in a browser against `keel serve`: a session on a `manual` checkout edits files, the
 * composer warns before a new turn, the changes are reviewed as Monaco diffs, applied (and then shown per
 * turn), a conflicting change is refused file by file and discarded; and the time to open the diff of a
 * 10,000-line file is measured.
 */

let project: string;

const BIG_LINES = 10_000;
const bigLine = (i: number) => `export const value${i} = ${i}; // generated line ${i} of the fixture`;
const APP = [
  '// The server entry point.',
  ...Array.from({ length: 30 }, (_, i) => `export const setting${i} = ${i};`),
  'export const port = 3000;',
  ...Array.from({ length: 10 }, (_, i) => `export const tail${i} = '${i}';`),
  '',
].join('\n');

const projectFile = (file: string) => fs.readFileSync(path.join(project, file), 'utf8');

/** Clicks `selector` in the page and returns ms from the click to the diff of `diffPath` being painted. */
async function timeDiffOpen(page: Page, selector: string, diffPath: string): Promise<number> {
  await page.evaluate(`(() => {
    window.__keelClickAt = performance.now();
    document.querySelector(${JSON.stringify(selector)}).click();
  })()`);
  const ready = page.locator(`.diff-view[data-path="${diffPath}"][data-state="ready"]`);
  await ready.waitFor();
  const readyAt = Number(await ready.getAttribute('data-ready-at'));
  const clickAt = Number(await page.evaluate('window.__keelClickAt'));
  return readyAt - clickAt;
}

const editCall = (file: string, from: string, to: string) => ({
  name: 'edit_file',
  arguments: { path: `${file}`, old_string: from, new_string: to },
});

describe.skipIf(!HAS_CHROMIUM)('changes in the browser', () => {
  const app = setUpApp({
    prefix: 'keel-ui-changes-',
    startIn: 'test',
    prepare: ({ dir }) => {
      project = path.join(dir, 'checkout-project');
      fs.mkdirSync(path.join(project, 'src', 'util'), { recursive: true });
      fs.writeFileSync(path.join(project, 'src', 'app.ts'), APP);
      fs.writeFileSync(path.join(project, 'src', 'util', 'small.ts'), 'export const small = 1;\n');
      fs.writeFileSync(
        path.join(project, 'src', 'big.ts'),
        `${Array.from({ length: BIG_LINES }, (_, i) => bigLine(i)).join('\n')}\n`,
      );
    },
  });

  it('reviews, applies and discards manual checkout changes, conflicts file by file, and opens a 10,000-line diff', async () => {
    await app.start();
    const watched = app.watch('changes');
    const page = await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const sessionId = await createSession(page, {
      projectFolder: project,
      title: 'Checkout work',
      policy: 'auto-edit',
      checkout: 'manual',
    });

    // Turn 1 edits the checkout; the project folder is untouched until Apply.
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          editCall('src/app.ts', 'export const port = 3000;', 'export const port = 8080;'),
          {
            name: 'write_file',
            arguments: { path: 'src/new.ts', content: 'export {};\n' },
          },
        ],
      },
      { kind: 'reply', text: 'Edited in the checkout.' },
    );
    await sendMessage(page, 'Change the port and add a module.');
    await page.getByText('Edited in the checkout.').waitFor();
    expect(projectFile('src/app.ts')).toContain('port = 3000;');
    expect(fs.existsSync(path.join(project, 'src', 'new.ts'))).toBe(false);

    // The composer warns before a new turn, and a new turn is refused while the changes wait.
    const warning = page.getByRole('status', { name: 'Uncommitted changes' });
    await warning.getByText(/Uncommitted changes in project \(2 files\) wait for review/).waitFor();
    await page.getByRole('button', { name: 'Changes, 2 uncommitted' }).waitFor();
    await screenshot(page, 'changes-01-new-turn-warning');
    const requestsBefore = app.provider.requests.length;
    await sendMessage(page, 'Keep going.');
    await page
      .getByRole('alert')
      .getByText(/a new turn would discard: apply or discard them first/)
      .waitFor();
    expect(app.provider.requests.length).toBe(requestsBefore);

    // Review: the first file is shown at once; each file is a Monaco diff against the project folder.
    await warning.getByRole('button', { name: 'Review changes' }).click();
    const view = page.getByRole('region', { name: 'Changes', exact: true });
    await view.getByRole('button', { name: 'src/app.ts, modified, uncommitted' }).click();
    const appDiff = view.locator('.diff-view[data-path="project/src/app.ts"][data-state="ready"]');
    await appDiff.waitFor();
    expect(await appDiff.locator('.diff-stats').getAttribute('aria-label')).toBe(
      '1 line added, 1 line removed',
    );
    await screenshot(page, 'changes-02-uncommitted-diff');
    await view.getByRole('button', { name: 'src/new.ts, added, uncommitted' }).click();
    await view
      .locator('.diff-view[data-path="project/src/new.ts"][data-state="ready"]')
      .getByText('new file')
      .waitFor();

    // Apply: the folder gets both files, the log a persistent_commit, and the list shows it under turn 1.
    await view.getByRole('button', { name: 'Apply to project' }).click();
    await view.getByText('Applied 2 files to project.').waitFor();
    expect(projectFile('src/app.ts')).toContain('port = 8080;');
    expect(projectFile('src/new.ts')).toBe('export {};\n');
    const commit = (await readEvents(page, sessionId)).find((event) => event.kind === 'persistent_commit');
    expect(commit).toMatchObject({ dir: 'project' });
    await view.getByText('No uncommitted changes.').waitFor();
    await view.getByText('Turn 1').waitFor();
    await view.getByRole('button', { name: `src/app.ts, modified, commit ${commit?.seq}` }).click();
    await view.locator('.diff-view[data-path="project/src/app.ts"][data-state="ready"]').waitFor();
    await view.getByText('before the commit | after the commit').waitFor();
    await screenshot(page, 'changes-03-committed-by-turn');
    await expect.poll(() => warning.count()).toBe(0);

    // Turn 2 changes the port again while someone edits the same line in the folder: Apply refuses it.
    await view.getByRole('button', { name: 'Back to transcript' }).click();
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [editCall('src/app.ts', 'export const port = 8080;', 'export const port = 9090;')],
      },
      { kind: 'reply', text: 'Port 9090 in the checkout.' },
    );
    await sendMessage(page, 'Now 9090.');
    await page.getByText('Port 9090 in the checkout.').waitFor();
    fs.writeFileSync(path.join(project, 'src', 'app.ts'), APP.replace('port = 3000;', 'port = 7070;'));
    await page.getByRole('button', { name: 'Changes, 1 uncommitted' }).click();
    await view.getByRole('button', { name: 'Apply to project' }).click();
    const conflict = view.getByRole('alert');
    await conflict.getByText(/Nothing was applied to project:/).waitFor();
    await conflict.getByRole('list', { name: 'Conflicts in project' }).getByText('src/app.ts').waitFor();
    expect(projectFile('src/app.ts')).toContain('port = 7070;');
    await view.getByRole('button', { name: 'src/app.ts, modified, conflict, uncommitted' }).click();
    await view.getByText(/^Conflict\./).waitFor();
    const conflictDiff = view.locator('.diff-view[data-path="project/src/app.ts"][data-state="ready"]');
    await conflictDiff.waitFor();
    await screenshot(page, 'changes-04-conflict');

    // Discard (confirmed): the checkout matches the folder again; the folder keeps its own edit.
    await view.getByRole('button', { name: 'Discard' }).click();
    await view.getByRole('button', { name: 'Confirm: discard 1 file' }).click();
    await view.getByText(/Discarded the changes in project/).waitFor();
    await view.getByText('No uncommitted changes.').waitFor();
    expect(projectFile('src/app.ts')).toContain('port = 7070;');
    const afterDiscard = await page.evaluate<{ ok: boolean; value: { dirs: unknown[] } }>(
      `window.keel.persistent.diff(${JSON.stringify({ sessionId })})`,
    );
    expect(afterDiscard.value.dirs).toEqual([]);

    // A 10,000-line file: the time from a click to its diff being painted, first in a freshly loaded page
    // (Monaco's chunk possibly still loading) and then warm.
    await view.getByRole('button', { name: 'Back to transcript' }).click();
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          editCall('src/big.ts', `${bigLine(5000)}\n`, `${bigLine(5000)}\nexport const inserted = true;\n`),
          editCall('src/big.ts', bigLine(9000), bigLine(9000).replace('fixture', 'edited fixture')),
          editCall('src/util/small.ts', 'small = 1', 'small = 2'),
        ],
      },
      { kind: 'reply', text: 'Big file edited.' },
    );
    await sendMessage(page, 'Edit the big file.');
    await page.getByText('Big file edited.').waitFor();
    await page.reload();
    await page.getByRole('option', { name: /Checkout work/ }).click();
    await page.getByRole('heading', { name: 'Checkout work' }).waitFor();
    const coldMs = await timeDiffOpen(page, 'button.changes-toggle', 'project/src/big.ts');
    // The session view prefetches Monaco when idle: say whether its chunk had arrived before the click.
    const prefetched = await page.evaluate<boolean>(`performance
      .getEntriesByType('resource')
      .some((entry) => entry.name.includes('monacoBundle') && entry.name.endsWith('.js') && entry.responseEnd < window.__keelClickAt)`);
    const bigDiff = page.locator('.diff-view[data-path="project/src/big.ts"]');
    expect(await bigDiff.locator('.diff-stats').getAttribute('aria-label')).toBe(
      '2 lines added, 1 line removed',
    );
    await screenshot(page, 'changes-05-diff-10k-lines');
    const warm: number[] = [];
    for (let round = 0; round < 3; round++) {
      await timeDiffOpen(
        page,
        '[aria-label="src/util/small.ts, modified, uncommitted"]',
        'project/src/util/small.ts',
      );
      warm.push(
        await timeDiffOpen(page, '[aria-label="src/big.ts, modified, uncommitted"]', 'project/src/big.ts'),
      );
    }
    const warmMs = [...warm].sort((a, b) => a - b)[1] ?? Number.NaN;
    recordMeasurement('diff10kLines', {
      lines: BIG_LINES,
      bytes: fs.statSync(path.join(project, 'src', 'big.ts')).size,
      firstOpenInPageMs: Math.round(coldMs),
      monacoPrefetchedBeforeFirstOpen: prefetched,
      warmOpenMs: Math.round(warmMs),
      warmRunsMs: warm.map(Math.round),
      measures:
        'click → persistent.diff/file over the bridge → Monaco diff computed (editor worker) and painted',
    });
    // Generous ceilings: they catch an order-of-magnitude regression, not a slow machine.
    expect(coldMs).toBeLessThan(5000);
    expect(warmMs).toBeLessThan(2500);

    expect(app.provider.requests.filter((request) => request.rejected !== undefined)).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);

    // The same view follows a dark system theme (Monaco's theme too).
    await inDarkTheme(app.serve.url, async (dark) => {
      await dark.getByRole('option', { name: /Checkout work/ }).click();
      await dark.getByRole('button', { name: 'Changes, 2 uncommitted' }).click();
      await dark.locator('.diff-view[data-state="ready"]').waitFor();
      await screenshot(dark, 'changes-06-dark');
    });
  }, 120_000);
});
