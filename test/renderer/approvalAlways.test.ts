import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// An approval's "Always allow in this project" (issue 30): the grant answers the request and is kept as a
// permission rule of the project, which Settings → Project setup lists and removes.
describe.skipIf(!HAS_CHROMIUM)('approvals: always allow in this project', () => {
  const app = setUpApp({ prefix: 'keel-ui-always-', startIn: 'test' });

  it('keeps a path grant as an Edit rule the settings screen shows and removes', async () => {
    await app.start();
    const watched = app.watch('approval-always');
    const page = await app.goto();
    const project = path.join(app.dir, 'always-project');
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'a.ts'), 'export const a = 1;\n');
    const sessionId = await createSession(page, {
      title: 'Always',
      projectFolder: project,
      checkout: 'direct',
    });
    expect(sessionId).not.toBe('');
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/a.ts', old_string: 'a = 1;', new_string: 'a = 2;' },
          },
        ],
      },
      { kind: 'reply', text: 'Edited.' },
    );
    await sendMessage(page, 'Edit a.');
    const card = page.getByRole('article', { name: 'Approval needed: edit_file' });
    // At a laptop's height the scope and the reason are folded under one toggle (issue 37).
    await card.getByRole('button', { name: /deny options$/ }).click();
    await card.getByLabel('Path glob').fill('src/**');
    await card.getByRole('button', { name: 'Always allow in this project' }).click();
    await page.getByText('Edited.').waitFor();
    expect(fs.readFileSync(path.join(project, 'src', 'a.ts'), 'utf8')).toBe('export const a = 2;\n');
    const kept = fs.readFileSync(path.join(app.home, 'permission-rules.jsonl'), 'utf8');
    expect(kept).toContain('"rule":"Edit(src/**)"');
    expect(kept).toContain(`"sessionId":"${sessionId}"`);

    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('combobox', { name: 'Setup project folder' }).selectOption(fs.realpathSync(project));
    const rules = page.getByRole('article', { name: 'Permission rules' });
    await rules.getByText(`keel (always, from session ${sessionId})`).waitFor({ timeout: 30_000 });
    await rules.getByRole('button', { name: 'Remove allow Edit(src/**)' }).click();
    await rules.getByText('No permission rules in effect.').waitFor({ timeout: 30_000 });
    expect(watched.errors).toEqual([]);
  }, 120_000);

  // Issue #32: a web_fetch asks for its host; "always" keeps WebFetch(domain:HOST), never every host.
  it('offers a web_fetch its host for the session or always, and keeps the domain rule', async () => {
    await app.start();
    const watched = app.watch('approval-always-fetch');
    const page = await app.goto();
    const project = path.join(app.dir, 'fetch-project');
    fs.mkdirSync(project, { recursive: true });
    await createSession(page, { title: 'Fetch', projectFolder: project, checkout: 'direct' });
    // 127.0.0.1: the approved fetch is then refused as a loopback address, at once and without DNS.
    app.provider.enqueue(
      { kind: 'reply', toolCalls: [{ name: 'web_fetch', arguments: { url: 'http://127.0.0.1:9/x' } }] },
      { kind: 'reply', text: 'Fetched.' },
    );
    await sendMessage(page, 'Fetch it.');
    const card = page.getByRole('article', { name: 'Approval needed: web_fetch' });
    await card.getByRole('button', { name: 'Allow 127.0.0.1 for this session' }).waitFor();
    expect(await card.getByRole('button', { name: /^Allow web_fetch for this session/ }).count()).toBe(0);
    await card.getByRole('button', { name: 'Always allow 127.0.0.1 in this project' }).click();
    await page.getByText('Fetched.').waitFor();
    const kept = fs.readFileSync(path.join(app.home, 'permission-rules.jsonl'), 'utf8');
    expect(kept).toContain('"rule":"WebFetch(domain:127.0.0.1)"');
    expect(watched.errors).toEqual([]);
  }, 120_000);
});
