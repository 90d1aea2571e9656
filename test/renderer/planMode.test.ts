import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// Issue #30, plan mode in the app: Shift+Tab in the message box turns it on; the plan the model presents shows
// as a card (markdown); Send back with comments brings a revised plan; Approve with a policy implements it.
describe.skipIf(!HAS_CHROMIUM)('plan mode: the toggle and the plan card', () => {
  const app = setUpApp({ prefix: 'keel-ui-plan-', startIn: 'test' });

  it('plans, sends the plan back, approves the revision in auto-edit and the model implements it', async () => {
    await app.start();
    const watched = app.watch('plan-mode');
    const page = await app.goto();
    const project = path.join(app.dir, 'plan-project');
    fs.mkdirSync(project, { recursive: true });
    const sessionId = await createSession(page, {
      title: 'Plan',
      projectFolder: project,
      checkout: 'direct',
    });

    const toggle = page.getByRole('button', { name: 'Plan mode: off' });
    await toggle.waitFor();
    await page.getByLabel('Message').press('Shift+Tab');
    await page.getByRole('button', { name: 'Plan mode: on', pressed: true }).waitFor();

    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'present_plan', arguments: { plan: '## Steps\n\n1. Create `notes.txt`' } }],
    });
    await sendMessage(page, 'Add notes.');
    const card = page.getByRole('article', { name: 'Plan waiting for approval' });
    await card.getByRole('heading', { name: 'Steps' }).waitFor();

    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'present_plan', arguments: { plan: '## Revised\n\n1. Create `NOTES.md`' } }],
    });
    await card.getByLabel('Comments on the plan').fill('Use NOTES.md');
    await card.getByRole('button', { name: 'Send back' }).click();
    await card.getByRole('heading', { name: 'Revised' }).waitFor();

    app.provider.enqueue(
      { kind: 'reply', toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: 'n\n' } }] },
      { kind: 'reply', text: 'Implemented.' },
    );
    await card.getByLabel('Policy after approval').selectOption('auto-edit');
    await card.getByRole('button', { name: 'Approve plan' }).click();
    await page.getByText('Implemented.').waitFor();
    await page.getByRole('button', { name: 'Plan mode: off' }).waitFor();
    expect(fs.readFileSync(path.join(project, 'NOTES.md'), 'utf8')).toBe('n\n');
    const events = await readEvents(page, sessionId);
    expect(events.find((e) => e.kind === 'plan_rejected')).toMatchObject({ comments: 'Use NOTES.md' });
    expect(events.find((e) => e.kind === 'plan_approved')).toMatchObject({ policy: 'auto-edit' });
    expect(watched.errors).toEqual([]);
  }, 240_000);
});
