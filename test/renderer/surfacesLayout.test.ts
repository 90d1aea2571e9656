import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { createSession, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { startImportedLog } from './fixtures.js';
import { HAS_CHROMIUM } from './harness.js';
import { captureAtSizes, measureSessionLayout } from './layoutMeasure.js';

/*
 * Issue #37: the session's review surfaces measured at 1280x800 and 900x600 as the main screens are
 * (screens.test.ts): the Changes view with a file's diff, the compaction inspector, the trace and the terminal
 * dock with a finished run, each with no control covered by another or cut by a box that does not scroll, and
 * nothing wider than its box; captured to test-artifacts/screenshots/surface-*.png.
 */

let project: string;
let compacted: string;

/** A short imported session with one compaction (for the inspector), its turns with usage (for the trace). */
function importCompacted(home: string, baseUrl: string): string {
  const { events, push } = startImportedLog({
    title: 'Compacted session',
    projectFolder: project,
    baseUrl,
    startedAt: Date.now() - 3_600_000,
  });
  const turn = (n: number) => {
    push({ kind: 'user_message', content: `Step ${n}: read src/module${n}.ts` });
    push({
      kind: 'assistant_message',
      content: `Module ${n} is read.`,
      usage: { inputTokens: 900 + n * 10, outputTokens: 30 },
    });
  };
  for (let n = 0; n < 6; n++) turn(n);
  push({
    kind: 'compaction',
    fromSeq: 2,
    through: events.length,
    summary: '## Objective\n> read the modules\n\n## Work done\n- read modules 0 to 5 (see #2)',
    pinned: 'Read the modules.',
    tokensBefore: 12_000,
    tokensAfter: 1_800,
    model: 'scripted-model',
  });
  for (let n = 6; n < 8; n++) turn(n);
  return SessionLog.importEvents(home, events);
}

describe.skipIf(!HAS_CHROMIUM)('the review surfaces at both sizes', () => {
  const app = setUpApp({
    prefix: 'keel-ui-surfaces-',
    prepare: ({ dir, home, provider }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(path.join(project, 'src', 'server.ts'), 'export const port = 3000;\n');
      compacted = importCompacted(home, provider.openaiBaseUrl);
    },
  });

  it('measures the Changes view, the terminal dock, the inspector and the trace', async () => {
    const watched = app.watch('surfaces-layout');
    const page = await app.goto();
    await createSession(page, {
      title: 'Move the server to port 8080, then check it still starts',
      projectFolder: project,
      policy: 'full-auto',
      checkout: 'manual',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/server.ts', old_string: 'port = 3000', new_string: 'port = 8080' },
          },
          { name: 'run_command', arguments: { command: 'grep -n port src/server.ts' } },
        ],
      },
      { kind: 'reply', text: 'The server listens on 8080.' },
    );
    await sendMessage(page, 'Move the server to port 8080.');
    await page.getByText('The server listens on 8080.').waitFor({ timeout: 30_000 });
    await waitForIdle(page);

    await page.getByRole('button', { name: /^Changes/ }).click();
    const changes = page.getByRole('region', { name: 'Changes', exact: true });
    await changes.getByRole('button', { name: 'src/server.ts, modified, uncommitted' }).click();
    await changes.locator('.diff-view[data-state="ready"]').waitFor();
    await captureAtSizes(page, 'surface-changes', { root: '.changes-view', atLeast: 4 });
    await page.getByRole('button', { name: /^Changes/ }).click();

    // The finished run replayed in the dock, opened from its card.
    await page.getByRole('button', { name: 'Open in terminal' }).click();
    const dock = page.getByRole('region', { name: 'Terminals' });
    await dock.getByRole('tab').first().waitFor();
    await dock.locator('.xterm').first().waitFor();
    await captureAtSizes(page, 'surface-terminal', {
      root: '.session-view',
      atLeast: 6,
      also: async (where) => {
        // The dock open, the composer and Send are still in view.
        const layout = await measureSessionLayout(page);
        expect(layout.composerInView, where).toBe(true);
        expect(layout.sendInView, where).toBe(true);
      },
    });
    await page.getByRole('button', { name: /^Terminal/ }).click();

    await page.locator(`[data-session-id="${compacted}"]`).click();
    await page.getByRole('heading', { name: 'Compacted session' }).waitFor();
    await page.getByRole('button', { name: /^Compactions/ }).click();
    const inspector = page.getByRole('region', { name: 'Compaction inspector' });
    await inspector.getByRole('heading', { name: /Compaction #/ }).waitFor();
    await inspector.getByTestId('pinned-goal').waitFor();
    await captureAtSizes(page, 'surface-inspector', { root: '.compaction-inspector', atLeast: 4 });

    await page.getByRole('button', { name: 'Trace', exact: true }).click();
    const trace = page.getByRole('region', { name: 'Trace and cost' });
    await trace.locator('#trace-chart-heading').waitFor();
    // The trace's own controls sit below its cards: the whole view is measured (header, trace, composer).
    await captureAtSizes(page, 'surface-trace', { root: '.session-view', atLeast: 6 });
    expect(watched.errors).toEqual([]);
  }, 120_000);
});
