import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * An apply_patch approval in the browser against `keel serve` and the scripted provider: the card lists every
 * file of the patch and shows each file's own Monaco diff under its name; one "Allow once" applies the whole
 * patch, and the log and the folder agree.
 */

describe.skipIf(!HAS_CHROMIUM)('an apply_patch approval in the browser', () => {
  const app = setUpApp({ prefix: 'keel-ui-patch-', startIn: 'test' });

  it('shows a two-file patch file by file, and one decision applies both', async () => {
    await app.start();
    app.watch('approvals-patch');
    const page = await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const project = path.join(app.dir, 'patch-project');
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(
      path.join(project, 'src', 'app.ts'),
      'export const port = 3000;\nexport const host = "a";\n',
    );
    const sessionId = await createSession(page, {
      title: 'Patch',
      projectFolder: project,
      checkout: 'direct',
    });

    const input = [
      '*** Begin Patch',
      '*** Update File: src/app.ts',
      '@@',
      '-export const port = 3000;',
      '+export const port = 8080;',
      ' export const host = "a";',
      '*** Add File: src/limit.ts',
      '+export const limit = 10;',
      '*** End Patch',
    ].join('\n');
    app.provider.enqueue(
      { kind: 'reply', text: 'Patching.', toolCalls: [{ name: 'apply_patch', arguments: { input } }] },
      { kind: 'reply', text: 'Patched both.' },
    );
    await sendMessage(page, 'Port 8080 and a limit.');
    const card = page.getByRole('article', { name: 'Approval needed: apply_patch' });
    const list = card.getByRole('list', { name: 'Files in the patch' });
    await list.waitFor();
    expect(await list.getByRole('listitem').allTextContents()).toEqual([
      'modified src/app.ts',
      'new file src/limit.ts',
    ]);
    await card.locator('.approval-target').getByText('2 files').waitFor();
    const appFile = card.getByRole('region', { name: 'Change to src/app.ts' });
    const limitFile = card.getByRole('region', { name: 'Change to src/limit.ts' });
    await appFile.locator('.diff-view[data-state="ready"]').waitFor();
    await limitFile.locator('.diff-view[data-state="ready"]').waitFor();
    expect(await appFile.locator('.diff-stats').getAttribute('aria-label')).toBe(
      '1 line added, 1 line removed',
    );
    const appText = (await appFile.locator('.editor.modified .view-lines').first().textContent()) ?? '';
    expect(appText.replace(/\u00a0/g, ' ')).toContain('export const port = 8080;');
    await limitFile.getByText('new file', { exact: true }).waitFor();
    await screenshot(page, 'approvals-patch-01-two-files');

    await card.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Patched both.').waitFor();
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toBe(
      'export const port = 8080;\nexport const host = "a";\n',
    );
    expect(fs.readFileSync(path.join(project, 'src', 'limit.ts'), 'utf8')).toBe('export const limit = 10;\n');
    // The transcript shows the call's patch as the model wrote it, not as escaped JSON.
    const toolCard = page.getByRole('article', { name: /Tool call apply_patch/ });
    expect(await toolCard.getByLabel('Arguments').textContent()).toBe(input);
    const events = await readEvents(page, sessionId);
    const started = events.find((event) => event.kind === 'tool_call_started');
    expect(started?.kind === 'tool_call_started' && started.files?.map((file) => file.path)).toEqual([
      'src/app.ts',
      'src/limit.ts',
    ]);
    const granted = events.find((event) => event.kind === 'approval_granted');
    expect(granted?.kind === 'approval_granted' && granted.scope).toBe('once');
  });
});
