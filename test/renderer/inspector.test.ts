import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { inDarkTheme, setUpApp } from './appFixture.js';
import { startImportedLog } from './fixtures.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * The compaction inspector in a browser against keel serve: a session imported with two compactions (the
 * older one superseded) is opened from its transcript marker; its summary, pinned goal, replaced events and
 * the payload rebuilt without it are shown; a re-run appends a new compaction that takes its place.
 */

let project: string;
let sessionId: string;

const GOAL = 'Build the CSV parser in src/parse.ts. Constraint: never touch the migrations folder.';
/** Seqs of the two compactions the fixture holds (the first is superseded by the second). */
let firstCompaction = 0;
let secondCompaction = 0;

/** A session of `turns` small turns (prompt, read_file call, result, answer) with two compactions, imported into `home`. */
function importCompactedSession(home: string, turns: number, baseUrl: string): string {
  const { events, push } = startImportedLog({
    title: 'Compacted parser session',
    projectFolder: project,
    baseUrl,
    startedAt: Date.now() - 3_600_000,
  });
  const turn = (n: number) => {
    push({ kind: 'user_message', content: n === 0 ? GOAL : `Step ${n}: look at src/module${n}.ts` });
    push({
      kind: 'assistant_message',
      content: `Reading module ${n}.`,
      toolCalls: [
        { id: `call_${n}`, name: 'read_file', arguments: JSON.stringify({ path: `src/module${n}.ts` }) },
      ],
      usage: { inputTokens: 900 + n * 10, outputTokens: 30 },
    });
    push({
      kind: 'tool_call_started',
      toolCallId: `call_${n}`,
      tool: 'read_file',
      idempotencyKey: `ev${n}-read_file`,
    });
    push({
      kind: 'tool_result',
      toolCallId: `call_${n}`,
      tool: 'read_file',
      content: `export const value${n} = ${n * 7}; // zebra-marker-${n}`,
      durationMs: 2,
    });
    push({
      kind: 'assistant_message',
      content: `Module ${n} exports value${n}.`,
      usage: { inputTokens: 1000 + n * 10, outputTokens: 20 },
    });
  };
  const summary = (through: number, label: string) =>
    [
      `## Objective`,
      `> ${GOAL}`,
      '',
      '## Constraints',
      '- never touch the migrations folder',
      '',
      '## Decisions',
      `- ${label}: read every module before changing the parser`,
      '',
      '## Work done',
      `- read modules 0 to ${Math.floor(through / 5) - 1} (see #3 and #${through - 1})`,
      '',
      '## In flight',
      '- the parser itself',
      '',
      '## Handles',
      '- src/parse.ts, #8',
    ].join('\n');
  for (let n = 0; n < turns / 2; n++) turn(n);
  const firstThrough = events.length;
  firstCompaction = push({
    kind: 'compaction',
    fromSeq: 2,
    through: firstThrough,
    summary: summary(firstThrough, 'first summary'),
    pinned: GOAL,
    tokensBefore: 14_000,
    tokensAfter: 2_100,
    model: 'scripted-model',
  });
  for (let n = Math.floor(turns / 2); n < turns; n++) turn(n);
  const secondThrough = events.length;
  secondCompaction = push({
    kind: 'compaction',
    fromSeq: 2,
    through: secondThrough,
    summary: summary(secondThrough, 'second summary'),
    pinned: GOAL,
    tokensBefore: 24_000,
    tokensAfter: 3_100,
    model: 'scripted-model',
  });
  for (let n = turns; n < turns + 4; n++) turn(n);
  return SessionLog.importEvents(home, events);
}

describe.skipIf(!HAS_CHROMIUM)('the compaction inspector', () => {
  const app = setUpApp({
    prefix: 'keel-ui-inspector-',
    prepare: ({ dir, home, provider }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      sessionId = importCompactedSession(home, 60, provider.openaiBaseUrl);
    },
  });

  it('opens a compaction from its transcript marker and shows its summary, replaced events and the payload without it; a re-run takes its place', async () => {
    const watched = app.watch('inspector');
    const page = await app.goto();
    await page.locator(`[data-session-id="${sessionId}"]`).click();
    await page.getByRole('heading', { name: 'Compacted parser session' }).waitFor();

    // The transcript marks each compaction; its Inspect link opens the inspector on it.
    const marker = page.locator(`#compaction-${secondCompaction}`);
    await page.locator('.transcript .tool-card').first().waitFor();
    // The transcript opens at its end; the marker is a few rows up (rows outside the viewport are not in the DOM).
    for (let step = 0; step < 60 && (await marker.count()) === 0; step++) {
      await page.evaluate("document.querySelector('.transcript').scrollBy(0, -300)");
      await page.waitForTimeout(30);
    }
    await marker.scrollIntoViewIfNeeded();
    await marker.getByRole('button', { name: 'Inspect' }).click();
    const inspector = page.getByRole('region', { name: 'Compaction inspector' });
    await inspector.getByRole('heading', { name: new RegExp(`Compaction #${secondCompaction}`) }).waitFor();
    await inspector.getByText('in effect', { exact: true }).first().waitFor();
    expect(await inspector.getByTestId('compaction-tokens').textContent()).toBe('24k → 3.1k (−87%)');
    expect(await inspector.getByTestId('pinned-goal').textContent()).toBe(GOAL);
    await inspector.getByText('scripted-model').first().waitFor();

    // The summary, rendered with its sections, beside the exact events it replaced (virtualized).
    const summary = inspector.getByRole('region', { name: 'Summary' });
    await summary.getByRole('heading', { name: 'Constraints' }).waitFor();
    for (const section of ['Objective', 'Constraints', 'Decisions', 'Work done', 'In flight', 'Handles']) {
      await summary
        .getByRole('navigation', { name: 'Summary sections' })
        .getByRole('button', { name: section })
        .waitFor();
    }
    const replaced = inspector.getByRole('region', { name: 'Replaced events' });
    const replacedCount = secondCompaction - 2;
    await replaced.getByText(`${replacedCount} events`).waitFor();
    await replaced.getByRole('article', { name: 'Event 2: User' }).getByText(GOAL).waitFor();
    const rendered = await replaced.locator('.replaced-event').count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(replacedCount);
    // A handle in the summary (#seq) brings that original event into view.
    const pointed = secondCompaction - 2;
    await summary.getByRole('button', { name: `Show event ${pointed}` }).click();
    const target = replaced.locator(`.replaced-event[data-seq="${pointed}"]`);
    await target.waitFor();
    await expect.poll(() => target.getAttribute('class')).toContain('is-marked');
    await screenshot(page, '30-inspector-summary-and-replaced-events');

    // The older compaction is listed as superseded, with a link to the one that replaced it.
    await inspector.getByRole('tab', { name: new RegExp(`^#${firstCompaction}\\b`) }).click();
    await inspector.getByRole('heading', { name: new RegExp(`Compaction #${firstCompaction}`) }).waitFor();
    await inspector.getByRole('button', { name: `compaction #${secondCompaction}` }).click();
    await inspector.getByRole('heading', { name: new RegExp(`Compaction #${secondCompaction}`) }).waitFor();

    // Rebuild without it: the payload now against the payload rebuilt without this compaction.
    await inspector.getByRole('tab', { name: 'Rebuild without it' }).click();
    const rebuild = inspector.getByRole('region', { name: 'Rebuild without it' });
    const now = await rebuild.getByTestId('payload-now').textContent();
    const without = await rebuild.getByTestId('payload-without').textContent();
    const messages = (text: string | null) => Number(/^(\d+) messages?/.exec(text ?? '')?.[1]);
    expect(messages(without)).toBeGreaterThan(messages(now) + 40);
    await rebuild.locator('.diff-view[data-state="ready"]').waitFor({ timeout: 20_000 });
    await screenshot(page, '31-inspector-rebuild-diff-editor');
    await rebuild.getByRole('button', { name: 'Unified text' }).click();
    const diff = rebuild.getByRole('table', { name: 'Payload diff' });
    // Added: the original events the compaction stands for; removed: the summary that replaced them.
    await diff.locator('.pd-removed', { hasText: 'second summary' }).first().waitFor();
    // Without #303 the payload falls back to #152's summary plus the originals after it (virtualized: scroll to them).
    const original = diff.locator('.pd-added', { hasText: /zebra-marker-30$/ }).first();
    for (let step = 0; step < 40 && (await original.count()) === 0; step++) {
      await page.evaluate("document.querySelector('.pd-lines').scrollBy(0, 200)");
      await page.waitForTimeout(30);
    }
    await original.waitFor();
    await screenshot(page, '32-inspector-rebuild-unified');

    // Re-run: a new summary of the same range from the originals, appended; the old one is superseded.
    app.provider.enqueue({
      kind: 'reply',
      text: '## Objective\n> the parser\n\n## Constraints\n- never touch the migrations folder\n\n## Work done\n- re-run summary',
    });
    const before = app.provider.requests.length;
    await inspector.getByRole('button', { name: `Re-run #${secondCompaction}` }).click();
    await inspector.getByText(/Compaction #\d+ written/).waitFor({ timeout: 20_000 });
    const rerun = app.provider.requests.slice(before).map((request) => request.raw);
    expect(rerun.some((raw) => raw.includes('compaction summarizer'))).toBe(true);
    await inspector.getByRole('region', { name: 'Summary' }).getByText('re-run summary').waitFor();
    await inspector.getByRole('button', { name: `compaction #${secondCompaction}` }).waitFor();
    await inspector
      .getByRole('tab', { name: new RegExp(`^#${secondCompaction}\\b`) })
      .getByText('superseded')
      .waitFor();
    await screenshot(page, '33-inspector-after-rerun');
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);

    // The same surface follows a dark system theme.
    await inDarkTheme(app.serve.url, async (dark) => {
      await dark.locator(`[data-session-id="${sessionId}"]`).click();
      await dark.getByRole('button', { name: /^Compactions/ }).click();
      await dark.getByRole('region', { name: 'Summary' }).getByText('re-run summary').waitFor();
      await screenshot(dark, '34-inspector-dark');
    });
  }, 90_000);
});
