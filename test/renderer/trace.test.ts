import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, inDarkTheme, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Traces and cost in a browser against keel serve: a turn with a retried request, an edit that waits for
 * approval, and a turn that spawns a subagent; the trace view shows totals, the per-turn chart, each turn's
 * timeline with its stages and approval wait, and the subagent nested under its turn, openable as its own
 * session.
 */

let project: string;

describe.skipIf(!HAS_CHROMIUM)('traces and cost', () => {
  const app = setUpApp({
    prefix: 'keel-ui-trace-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(
        path.join(project, 'src', 'parse.ts'),
        'export const parse = (t: string) => t.split(",");\n',
      );
    },
  });

  it("reads a turn's timeline, tokens and cost, the session totals and a nested subagent", async () => {
    const watched = app.watch('trace');
    const page = await app.goto();
    const sessionId = await createSession(page, {
      projectFolder: project,
      title: 'Traced session',
      policy: 'ask',
    });

    // Turn 1: the first request fails once (retried), then an edit waits for approval before it runs.
    app.provider.enqueue(
      { kind: 'fail', status: 500, message: 'overloaded' },
      {
        kind: 'reply',
        text: 'Adding a test.',
        // The default session works on a checkout of the project, the model's root.
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: 'src/parse.test.ts', content: 'test\n' },
          },
        ],
        usage: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 600, cacheWriteTokens: 300 },
      },
      {
        kind: 'reply',
        text: 'The test is written.',
        usage: { inputTokens: 400, outputTokens: 20, cacheReadTokens: 1500 },
      },
    );
    await sendMessage(page, 'Add a test for the parser.');
    const approval = page.getByRole('article', { name: 'Approval needed: write_file' });
    await approval.waitFor();
    await page.waitForTimeout(700);
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('The test is written.').waitFor();
    await waitForIdle(page);
    await expect
      .poll(() => fs.existsSync(path.join(project, 'src', 'parse.test.ts')), { timeout: 10_000 })
      .toBe(true);

    // Turn 2: a subagent does part of the work in its own session.
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Delegating the count.',
        toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Count the lines of src/parse.ts' } }],
        usage: { inputTokens: 1800, outputTokens: 40, cacheReadTokens: 1200 },
      },
      { kind: 'reply', text: 'src/parse.ts has 1 line.', usage: { inputTokens: 500, outputTokens: 12 } },
      {
        kind: 'reply',
        text: 'The subagent counted 1 line.',
        usage: { inputTokens: 2100, outputTokens: 15, cacheReadTokens: 1800 },
      },
    );
    await sendMessage(page, 'How long is the parser?');
    await page.getByText('The subagent counted 1 line.').waitFor();
    await waitForIdle(page);

    // The trace view: totals, the chart (a bar per turn) and the turns.
    await page.getByRole('button', { name: 'Trace', exact: true }).click();
    const trace = page.getByRole('region', { name: 'Trace and cost' });
    const totals = trace.getByRole('definition').filter({ hasText: /./ });
    await totals.first().waitFor();
    // The totals are the log's: every assistant message's reported usage, summed.
    const usage = (await readEvents(page, sessionId)).reduce(
      (sum, event) =>
        event.kind === 'assistant_message' && event.usage
          ? sum +
            event.usage.inputTokens +
            event.usage.outputTokens +
            (event.usage.cacheReadTokens ?? 0) +
            (event.usage.cacheWriteTokens ?? 0)
          : sum,
      0,
    );
    expect(usage).toBeGreaterThan(5000);
    expect(await trace.getByTestId('trace-tokens').textContent()).toBe(`${(usage / 1000).toFixed(1)}k`);
    expect(await trace.getByTestId('trace-approval-wait').textContent()).not.toBe('0 ms');
    await trace.getByText('Cache hit rate').waitFor();
    expect(await trace.locator('.chart-bar').count()).toBe(2);
    await screenshot(page, '40-trace-overview');

    // Turn 1's timeline: the retry, the request split into time to first token and stream, the tool, the approval wait.
    const turn1 = trace.getByRole('article', { name: 'Turn 1' });
    await turn1.getByRole('button', { name: /Turn 1/ }).click();
    const timeline = turn1.getByRole('table', { name: 'Timeline of turn 1' });
    await timeline.waitFor();
    const labels = await timeline.getByRole('rowheader').allTextContents();
    for (const expected of [
      'Projection',
      'Retry',
      'Request',
      'Time to first token',
      'Stream',
      'write_file',
      // The checkout's steps, in words: reset before the turn, its changes applied when it ended.
      'Reset checkouts',
      'Apply changes to the folder',
    ]) {
      expect(labels).toContain(expected);
    }
    expect(labels.some((label) => /^Approval wait · write_file \(granted\)$/.test(label))).toBe(true);
    await turn1.getByText('1 retry').waitFor();
    // Cache reads of its two requests (600 + 1,500); OpenAI-style input excludes them.
    await turn1.locator('.turn-tokens').getByText('2,100').waitFor();
    await turn1.scrollIntoViewIfNeeded();
    await screenshot(page, '41-trace-turn-timeline');

    // Turn 2 (open by default as the newest) nests its subagent, which opens as its own session.
    const turn2 = trace.getByRole('article', { name: 'Turn 2' });
    const subagent = turn2.getByRole('list', { name: 'Subagents' });
    await subagent.getByText('Subagent: Count the lines of src/parse.ts').click();
    await subagent.getByRole('article', { name: 'Turn 1' }).waitFor();
    await subagent.scrollIntoViewIfNeeded();
    await screenshot(page, '42-trace-subagent-nested');
    await inDarkTheme(app.serve.url, async (dark) => {
      // The subagent's row is nested under it and names it ("…, from Traced session"): the parent's own row.
      await dark.getByRole('option', { name: /^Traced session/ }).click();
      await dark.getByRole('button', { name: 'Trace', exact: true }).click();
      await dark
        .getByRole('article', { name: 'Turn 2' })
        .getByRole('table', { name: 'Timeline of turn 2' })
        .waitFor();
      await screenshot(dark, '43-trace-dark');
    });
    await subagent.getByRole('button', { name: 'Open session' }).click();
    await page.getByText('src/parse.ts has 1 line.').waitFor();
    expect(app.provider.requests.filter((request) => request.rejected !== undefined)).toEqual([]);
    expect(watched.errors).toEqual([]);
  }, 90_000);
});
