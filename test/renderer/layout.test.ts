import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, recordMeasurement } from './harness.js';
import { artifactScreenshot, measureSessionLayout, SIZES } from './layoutMeasure.js';

/*
 * Issue 37: the session view at a laptop's 1280x800 and a small 900x600 window, measured: with an approval
 * pending (a plan, a diff) the transcript keeps at least half the height, the composer and Send stay in the
 * window, no control is drawn over by another (elementFromPoint at each one's centre), the title keeps its room,
 * and the composer grows with its text up to a limit. Screenshots of the main screens at both sizes go to
 * test-artifacts/screenshots/ (kept by CI).
 */

const APP_LINES = [
  '// The server entry point.',
  ...Array.from({ length: 60 }, (_, i) => `export const setting${i} = ${i};`),
  'export const port = 3000;',
  ...Array.from({ length: 20 }, (_, i) => `export const tail${i} = '${i}';`),
  '',
];

let project: string;

const todos = {
  todos: [
    { content: 'Read the server', status: 'completed', activeForm: 'Reading the server' },
    { content: 'Change the port', status: 'in_progress', activeForm: 'Changing the port' },
    { content: 'Run the tests', status: 'pending', activeForm: 'Running the tests' },
  ],
};

describe.skipIf(!HAS_CHROMIUM)('the layout at laptop and small sizes', () => {
  const app = setUpApp({
    prefix: 'keel-ui-layout-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'layout-project');
      fs.mkdirSync(path.join(project, 'src'), { recursive: true });
      fs.writeFileSync(path.join(project, 'src', 'app.ts'), APP_LINES.join('\n'));
      spawnSync('git', ['init', '-q'], { cwd: project });
    },
  });

  it('keeps the conversation, the composer and every control in view with an approval pending', async () => {
    const watched = app.watch('layout');
    const page = await app.goto();
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.getByRole('heading', { name: 'No session open' }).waitFor();
      await artifactScreenshot(page, 'home');
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await createSession(page, {
      title: 'Move the server to port 8080',
      projectFolder: project,
      checkout: 'direct',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'I will read the server first, then change the port.',
        toolCalls: [
          { id: 't1', name: 'todo', arguments: todos },
          { id: 'r1', name: 'read_file', arguments: { path: 'src/app.ts' } },
        ],
      },
      {
        kind: 'reply',
        text: 'Changing the port and the settings around it.',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'src/app.ts',
              old_string: APP_LINES.slice(20, 64).join('\n'),
              new_string: APP_LINES.slice(20, 64)
                .map((line) => line.replace('3000', '8080').replace('= ', '= 10 + '))
                .join('\n'),
            },
          },
        ],
      },
      { kind: 'reply', text: 'Done: the server listens on 8080.' },
    );
    await sendMessage(page, 'Move the server to port 8080 and keep the settings in step.');
    const card = page.getByRole('article', { name: 'Approval needed: edit_file' });
    await card.locator('.diff-view[data-state="ready"]').waitFor();
    await page.locator('.session-footer').getByRole('group', { name: 'Plan' }).waitFor();

    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      // Monaco lays out on resize (automaticLayout): give it its frames.
      await card.locator('.diff-view[data-state="ready"]').waitFor();
      await page.waitForTimeout(300);
      const measured = await measureSessionLayout(page);
      recordMeasurement(`layout-approval-${size.width}x${size.height}`, measured);
      await artifactScreenshot(page, 'session-approval');
      expect(measured.transcriptShare, JSON.stringify(measured)).toBeGreaterThanOrEqual(
        size.minShare - 0.005,
      );
      expect(measured.composerInView).toBe(true);
      expect(measured.sendInView).toBe(true);
      expect(measured.covered).toEqual([]);
      expect(measured.cut).toEqual([]);
      expect(measured.checked).toBeGreaterThan(8);
      // The title is readable, never cut to a few letters.
      expect(measured.titleWidth).toBeGreaterThan(150);
      // Allow and Deny are in the window and reachable.
      for (const name of ['Allow once', 'Deny']) {
        const button = card.getByRole('button', { name, exact: true });
        const rect = await button.boundingBox();
        expect(rect && rect.y >= 0 && rect.y + rect.height <= size.height, name).toBe(true);
      }
      // The diff keeps a few lines of room.
      const body = await card.locator('.approval-body').boundingBox();
      expect(body?.height ?? 0).toBeGreaterThanOrEqual(64);
      // The plan is one line until asked for (in a short window it gives way to the pending decision).
      const plan = page.locator('.session-footer').getByRole('group', { name: 'Plan' });
      if (size.height > 700) {
        expect((await plan.boundingBox())?.height ?? 99).toBeLessThan(34);
        expect(await plan.locator('summary').textContent()).toBe('Plan · 1 of 3 done · Changing the port');
      } else expect(await plan.isVisible()).toBe(false);
    }

    // Its steps open on demand; in a short window the decision's options unfold too.
    await page.setViewportSize({ width: 1280, height: 800 });
    const plan = page.locator('.session-footer').getByRole('group', { name: 'Plan' });
    await plan.locator('summary').click();
    await plan.getByRole('list', { name: 'Plan steps' }).getByText('Run the tests').waitFor();
    await artifactScreenshot(page, 'session-plan-open');
    await plan.locator('summary').click();
    await page.setViewportSize({ width: 900, height: 600 });
    await card.getByRole('button', { name: 'Scope and deny options' }).click();
    await card.getByLabel('Path glob').waitFor();
    await card.getByLabel('Reason').waitFor();
    await artifactScreenshot(page, 'session-approval-options');
    await card.getByRole('button', { name: 'Scope and deny options' }).click();

    // The handle above the approval resizes it: dragged up by 160 px, the diff gets the room the conversation gives.
    await page.setViewportSize({ width: 1280, height: 800 });
    const handle = page.getByRole('separator', { name: /Resize the approval/ });
    const bodyBefore = await card.locator('.approval-body').boundingBox();
    const grip = await handle.boundingBox();
    if (!grip || !bodyBefore) throw new Error('the handle or the approval has no box');
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2 - 160, { steps: 8 });
    await page.mouse.up();
    const resized = await measureSessionLayout(page);
    expect(resized.transcriptShare).toBeLessThan(0.35);
    expect(resized.covered).toEqual([]);
    expect(resized.cut).toEqual([]);
    const bodyAfter = await card.locator('.approval-body').boundingBox();
    expect((bodyAfter?.height ?? 0) - bodyBefore.height).toBeGreaterThan(120);
    await artifactScreenshot(page, 'session-approval-resized');
    // From the keyboard, and back to the default with Home.
    await handle.focus();
    await page.keyboard.press('ArrowDown');
    expect(Number(await handle.getAttribute('aria-valuenow'))).toBeGreaterThan(resized.transcriptShare * 100);
    await page.keyboard.press('Home');
    await expect
      .poll(async () => (await measureSessionLayout(page)).transcriptShare)
      .toBeGreaterThanOrEqual(0.495);

    // The composer grows with its text up to a limit, and Send stays in view.
    await card.getByRole('button', { name: 'Allow once', exact: true }).click();
    await page.getByText('Done: the server listens on 8080.').waitFor();
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      const composer = page.getByLabel('Message');
      await composer.fill('');
      const empty = (await measureSessionLayout(page)).composerHeight;
      await composer.fill(Array.from({ length: 4 }, (_, i) => `line ${i}`).join('\n'));
      const four = (await measureSessionLayout(page)).composerHeight;
      await composer.fill(Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n'));
      const sixty = await measureSessionLayout(page);
      expect(four).toBeGreaterThan(empty);
      expect(sixty.composerHeight).toBeGreaterThan(four);
      expect(sixty.composerHeight).toBeLessThanOrEqual(Math.min(240, size.height * 0.3) + 1);
      expect(sixty.sendInView).toBe(true);
      expect(sixty.transcriptShare).toBeGreaterThanOrEqual(size.minShare - 0.005);
      expect(sixty.covered).toEqual([]);
      expect(sixty.cut).toEqual([]);
      await artifactScreenshot(page, 'session-long-prompt');
      await composer.fill('');
    }
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });
});
