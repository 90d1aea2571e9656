import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/ipc/contract.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Issue #32: a background command in the terminal dock, in Chromium against keel serve: after the call that
 * started it returned, the dock lists it (handle, pid, running) with its output tail growing live; Stop ends it,
 * the dock says so, the log records the user's stop, and the model's next request is told.
 */

const sandbox = await detectSandbox();

describe.skipIf(!HAS_CHROMIUM || sandbox.kind === 'none')('background commands in the terminal dock', () => {
  let project: string;
  const app = setUpApp({
    prefix: 'keel-ui-background-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
    },
  });

  it('shows a running background command live, stops it, and records the stop', async () => {
    const watched = app.watch('background-dock');
    const page = await app.goto();
    const id = await createSession(page, {
      projectFolder: project,
      title: 'Dev server',
      policy: 'full-auto',
      checkout: 'direct',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Starting it.',
        toolCalls: [
          {
            id: 'dev',
            name: 'run_command',
            arguments: {
              command: 'echo ready; i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done',
              background: true,
              ready_text: 'ready',
            },
          },
        ],
      },
      { kind: 'reply', text: 'It runs in the background.' },
    );
    await sendMessage(page, 'Start the dev server.');
    await page.getByText('It runs in the background.').waitFor({ timeout: 30_000 });
    await waitForIdle(page);

    await page.getByRole('button', { name: 'Terminal', exact: true }).click();
    const item = page
      .getByRole('region', { name: 'Background commands' })
      .getByRole('listitem', { name: 'Background command bg-dev' });
    await item.getByText(/\$ echo ready; i=0/).waitFor();
    expect(await item.getByTestId('background-state').textContent()).toBe('running');
    expect(await item.textContent()).toMatch(/bg-dev · pid \d+ · running/);
    // Its output keeps arriving after the starting call returned: the tail grows.
    const tickOf = async () =>
      Number(/tick (\d+)\s*$/.exec((await item.locator('pre').textContent()) ?? '')?.[1] ?? 0);
    await expect.poll(tickOf, { timeout: 10_000 }).toBeGreaterThan(2);
    const seen = await tickOf();
    await expect.poll(tickOf, { timeout: 10_000 }).toBeGreaterThan(seen);
    await screenshot(page, 'background-dock-running');

    await item.getByRole('button', { name: 'Stop bg-dev' }).click();
    await expect
      .poll(() => item.getByTestId('background-state').textContent(), { timeout: 15_000 })
      .toBe('it was stopped');
    expect(await item.getByRole('button', { name: 'Stop bg-dev' }).count()).toBe(0);
    await screenshot(page, 'background-dock-stopped');
    const ends = (await readEvents(page, id)).filter(
      (e): e is Extract<SessionEvent, { kind: 'background_exited' }> => e.kind === 'background_exited',
    );
    expect(ends).toMatchObject([{ handle: 'bg-dev', reason: 'stopped', outsideCall: true }]);

    // The model's next request says the user stopped it.
    app.provider.enqueue({ kind: 'reply', text: 'Noted.' });
    await sendMessage(page, 'Is it still up?');
    await page.getByText('Noted.').waitFor({ timeout: 30_000 });
    expect(JSON.stringify(app.provider.requests.at(-1)?.body)).toContain(
      '[background command bg-dev (echo ready; i=0; while true; do i=$((i+1)); echo \\"tick $i\\"; sleep 0.2; done) is not running: it was stopped]',
    );
    expect(watched.errors).toEqual([]);
  });
});
