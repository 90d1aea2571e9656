import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { makeTempDir, removeTempDir } from '../support/cli.js';
import { ProviderServer } from '../support/providerServer.js';
import {
  ensureBuilt,
  HAS_CHROMIUM,
  launchBrowser,
  screenshot,
  startServe,
  watchPage,
  writeScriptedSettings,
  type Browser,
  type Serve,
} from './harness.js';

/*
 * Traces and cost in a browser against keel serve: a turn with a retried request, an edit that waits for
 * approval, and a turn that spawns a subagent; the trace view shows totals, the per-turn chart, each turn's
 * timeline with its stages and approval wait, and the subagent nested under its turn, openable as its own
 * session.
 */

let dir: string;
let home: string;
let project: string;
let provider: ProviderServer;
let serve: Serve | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  await ensureBuilt();
  dir = fs.realpathSync(makeTempDir('keel-ui-trace-'));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(
    path.join(project, 'src', 'parse.ts'),
    'export const parse = (t: string) => t.split(",");\n',
  );
  provider = await new ProviderServer().start();
  writeScriptedSettings(home, provider.openaiBaseUrl);
  serve = await startServe(home);
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await provider?.close();
  if (dir) removeTempDir(dir);
});

describe.skipIf(!HAS_CHROMIUM)('traces and cost', () => {
  it("reads a turn's timeline, tokens and cost, the session totals and a nested subagent", async () => {
    const page = browser!.page;
    const watched = watchPage(page);
    onTestFailed(async () => {
      await screenshot(page, 'failed-trace');
    });
    await page.goto(serve!.url);
    // window.keel exists once the app has mounted.
    await page.getByRole('button', { name: 'New session' }).first().waitFor();
    const created = await page.evaluate<{ ok: boolean }>(
      `window.keel.sessions.create({ projectFolder: ${JSON.stringify(project)}, provider: 'openai-compatible', model: 'scripted-model', title: 'Traced session', policy: 'ask' })`,
    );
    expect(created.ok).toBe(true);
    await page.getByRole('option', { name: /Traced session/ }).click();
    const composer = page.getByRole('textbox', { name: 'Message' });

    // Turn 1: the first request fails once (retried), then an edit waits for approval before it runs.
    provider.enqueue(
      { kind: 'fail', status: 500, message: 'overloaded' },
      {
        kind: 'reply',
        text: 'Adding a test.',
        // The default session works on a checkout of the project: persistent/project.
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: 'persistent/project/src/parse.test.ts', content: 'test\n' },
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
    await composer.fill('Add a test for the parser.');
    await composer.press('Enter');
    const approval = page.getByRole('article', { name: 'Approval needed: write_file' });
    await approval.waitFor();
    await page.waitForTimeout(700);
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('The test is written.').waitFor();
    await expect.poll(() => page.locator('.session-header .badge').getAttribute('data-status')).toBe('idle');
    await expect
      .poll(() => fs.existsSync(path.join(project, 'src', 'parse.test.ts')), { timeout: 10_000 })
      .toBe(true);

    // Turn 2: a subagent does part of the work in its own session.
    provider.enqueue(
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
    await composer.fill('How long is the parser?');
    await composer.press('Enter');
    await page.getByText('The subagent counted 1 line.').waitFor();
    await expect.poll(() => page.locator('.session-header .badge').getAttribute('data-status')).toBe('idle');

    // The trace view: totals, the chart (a bar per turn) and the turns.
    await page.getByRole('button', { name: 'Trace', exact: true }).click();
    const trace = page.getByRole('region', { name: 'Trace and cost' });
    const totals = trace.getByRole('definition').filter({ hasText: /./ });
    await totals.first().waitFor();
    // The totals are the log's: every assistant message's reported usage, summed.
    const sessionId = await page.locator('[role=option][aria-selected=true]').getAttribute('data-session-id');
    const usage = await page.evaluate<number>(`(async () => {
      const page = await window.keel.events.page({ sessionId: ${JSON.stringify(sessionId)}, fromSeq: 1, limit: 5000 });
      return page.value.events
        .filter((event) => event.kind === 'assistant_message' && event.usage)
        .reduce((sum, { usage }) => sum + usage.inputTokens + usage.outputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0), 0);
    })()`);
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
    const dark = await launchBrowser({ colorScheme: 'dark' });
    try {
      await dark.page.goto(serve!.url);
      await dark.page.getByRole('option', { name: /Traced session/ }).click();
      await dark.page.getByRole('button', { name: 'Trace', exact: true }).click();
      await dark.page
        .getByRole('article', { name: 'Turn 2' })
        .getByRole('table', { name: 'Timeline of turn 2' })
        .waitFor();
      await screenshot(dark.page, '43-trace-dark');
    } finally {
      await dark.close();
    }
    await subagent.getByRole('button', { name: 'Open session' }).click();
    await page.getByText('src/parse.ts has 1 line.').waitFor();
    expect(provider.requests.filter((request) => request.rejected !== undefined)).toEqual([]);
    expect(watched.errors).toEqual([]);
  }, 90_000);
});
