import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Spend in the app (#31): the session header shows what was spent against the caps set at creation, the
 * running turn's burn rate, a cap changed from the header (a budget_set) that stops the next turn before its
 * request (a notice in the transcript), and the trace view's chart of spend per turn.
 */

let project: string;

describe.skipIf(!HAS_CHROMIUM)('spend in the session header and the trace view', () => {
  const app = setUpApp({
    prefix: 'keel-ui-spend-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
    },
  });

  it('shows spend against the cap, the burn rate while a turn runs, a cap changed from the header, and the chart', async () => {
    const page = await app.goto();
    // A model the catalogue prices ($2 in, $10 out per million), served by the scripted server.
    const sessionId = await createSession(page, {
      title: 'Spend',
      projectFolder: project,
      model: 'claude-sonnet-5-5',
      budget: { usd: 1 },
    });
    const spend = page.getByTestId('session-spend');
    await expect.poll(() => spend.textContent()).toMatch(/^spent \$0 of \$1\.00/);

    // 100k input + 1k output: $0.21. The reply is slow, so the header shows the burn rate while it runs.
    app.provider.enqueue({
      kind: 'reply',
      text: 'one two three four five six',
      delayMs: 400,
      usage: { inputTokens: 100_000, outputTokens: 1_000 },
    });
    await sendMessage(page, 'first');
    await page.getByTestId('session-burn-rate').waitFor();
    expect(await page.getByTestId('session-burn-rate').textContent()).toMatch(/\/min this turn$/);
    await page.getByText('one two three four five six').waitFor();
    await waitForIdle(page);
    await expect.poll(() => page.getByTestId('session-spend-usd').textContent()).toBe('$0.210');
    expect(await spend.textContent()).toMatch(/^spent \$0\.210 of \$1\.00 · 101(\.0)?k tokens/);

    // A second turn, then the cap lowered from the header below what the next request could cost.
    app.provider.enqueue({
      kind: 'reply',
      text: 'Second.',
      usage: { inputTokens: 50_000, outputTokens: 500 },
    });
    await sendMessage(page, 'second');
    await page.getByText('Second.').waitFor();
    await waitForIdle(page);
    await expect.poll(() => page.getByTestId('session-spend-usd').textContent()).toBe('$0.315');
    await spend.getByRole('button', { name: 'Change cap' }).click();
    const form = page.getByRole('form', { name: 'Spend cap' });
    await form.getByLabel('USD').fill('0.32');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => spend.textContent()).toMatch(/of \$0\.320/);
    const caps = (await readEvents(page, sessionId)).filter((event) => event.kind === 'budget_set');
    expect(caps.map((event) => event.kind === 'budget_set' && [event.usd, event.source])).toEqual([
      [1, 'created'],
      [0.32, 'user'],
    ]);

    const before = app.provider.requests.length;
    await sendMessage(page, 'third');
    // The transcript's notice and the turn's outcome both say it.
    await page
      .getByText(/Spend cap of \$0\.320 reached: spent \$0\.315/)
      .first()
      .waitFor();
    await waitForIdle(page);
    expect(app.provider.requests.length).toBe(before);

    // The trace view: a bar per turn in the chart of tokens and cost, the total cost the header's.
    await page.getByRole('button', { name: 'Trace', exact: true }).click();
    const trace = page.getByRole('region', { name: 'Trace and cost' });
    await trace.getByTestId('trace-cost').waitFor();
    expect(await trace.getByTestId('trace-cost').textContent()).toBe('$0.315');
    const chart = trace
      .getByRole('region', { name: 'Tokens and cost per turn' })
      .or(trace.locator('.trace-card'));
    expect(await chart.locator('svg .chart-bar').count()).toBe(3);
    await screenshot(page, 'spend-header-and-trace');
  }, 120_000);

  it("records the spend cap typed in the New session dialog as the session's first budget_set", async () => {
    const page = await app.goto();
    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    await dialog.getByLabel('Project folder').fill(project);
    await dialog.getByLabel('Title (optional)').fill('Capped');
    await dialog.getByLabel('Spend cap, USD (optional)').fill('2.5');
    await dialog.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: 'Capped' }).waitFor();
    const listed = await page.evaluate<{
      ok: boolean;
      value: { sessions: { id: string; title?: string }[] };
    }>(`window.keel.sessions.list({})`);
    const id = listed.value.sessions.find((session) => session.title === 'Capped')?.id ?? '';
    const caps = (await readEvents(page, id)).filter((event) => event.kind === 'budget_set');
    expect(caps).toMatchObject([{ usd: 2.5, source: 'created' }]);
    await expect.poll(() => page.getByTestId('session-spend').textContent()).toMatch(/of \$2\.50/);
  });
});
