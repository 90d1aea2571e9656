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
          // Ends on its own once the test makes a file in the project (the box sees the folder itself).
          {
            id: 'watch',
            name: 'run_command',
            arguments: {
              command: 'echo watching; while [ ! -f done.flag ]; do sleep 0.1; done',
              background: true,
              ready_text: 'watching',
            },
          },
          // A long foreground output: its card says what a person can do about the part not shown (#37).
          { id: 'long', name: 'run_command', arguments: { command: 'seq 1 40000' } },
        ],
      },
      { kind: 'reply', text: 'It runs in the background.' },
    );
    await sendMessage(page, 'Start the dev server.');
    await page.getByText('It runs in the background.').waitFor({ timeout: 30_000 });
    await waitForIdle(page);

    // The model was told where the rest of the long output is and how to read it; the card tells people what
    // they can do instead of naming that path.
    expect(JSON.stringify(app.provider.requests.at(-1)?.body)).toMatch(
      /the whole output is \/artifacts\/\S+\.log: read it with read_file/,
    );
    const long = page.getByRole('article', { name: /Tool call run_command/ }).last();
    const output = long.locator('pre.tool-terminal-output');
    await expect
      .poll(() => output.textContent())
      .toContain('bytes not shown here: Open in terminal shows the whole output]\n');
    expect(await output.textContent()).not.toContain('/artifacts/');
    // A background start says where it is for people: the dock, not the model's tools and paths.
    const started = page.getByRole('article', { name: /Tool call run_command/ }).first();
    expect(await started.locator('pre.tool-terminal-output').textContent()).toContain(
      '[started in the background as bg-dev: the terminal dock shows it live and can stop it]',
    );
    expect(await started.textContent()).not.toMatch(/\/artifacts\/|command_output/);

    // Issue #32: while the dock is closed, its button counts the background commands running, live.
    const terminal = page.getByRole('button', { name: /^Terminal/ });
    const count = terminal.getByTestId('background-count');
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe('2');
    expect(await terminal.getAttribute('aria-label')).toBe('Terminal: 2 background commands running');
    await screenshot(page, 'background-dock-count');
    fs.writeFileSync(path.join(project, 'done.flag'), '');
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe('1');
    await terminal.click();
    // Open, the dock lists them itself: the button counts nothing.
    expect(await count.count()).toBe(0);
    const item = page
      .getByRole('region', { name: 'Background commands' })
      .getByRole('listitem', { name: 'Background command bg-dev' });
    await item.getByText(/\$ echo ready; i=0/).waitFor();
    expect(await item.getByTestId('background-state').textContent()).toBe('running');
    expect(await item.textContent()).toMatch(/bg-dev · pid \d+ · running/);
    // Its output keeps arriving after the starting call returned: the tail grows.
    // The highest tick shown (the tail may end inside a line the command is still writing).
    const tickOf = async () =>
      Math.max(
        0,
        ...[...((await item.locator('pre').textContent()) ?? '').matchAll(/tick (\d+)/g)].map((m) =>
          Number(m[1]),
        ),
      );
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
    // Closed again with none running: no count, the button is plain Terminal.
    await terminal.click();
    await page.getByRole('button', { name: 'Terminal', exact: true }).waitFor();
    expect(await count.count()).toBe(0);
    const ends = (await readEvents(page, id)).filter(
      (e): e is Extract<SessionEvent, { kind: 'background_exited' }> => e.kind === 'background_exited',
    );
    expect(ends).toContainEqual(
      expect.objectContaining({ handle: 'bg-dev', reason: 'stopped', outsideCall: true }),
    );

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
