import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rememberProject } from '../../main/ipc/recentProjects.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// Settings → Project setup against keel serve (issue 30): a project's .claude/settings.json shown as new with
// its diff and its rules not in effect; Approve makes them the rules in effect (with their source); a Keel
// rule added and removed from the screen.
describe.skipIf(!HAS_CHROMIUM)('settings: project setup and permission rules', () => {
  const app = setUpApp({
    prefix: 'keel-ui-setup-',
    prepare: (world) => {
      const project = path.join(world.dir, 'setup-project');
      fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
      fs.writeFileSync(
        path.join(project, '.claude/settings.json'),
        '{"permissions":{"allow":["Bash(npm test:*)"],"deny":["Bash(git push:*)"]}}\n',
      );
      rememberProject(world.home, fs.realpathSync(project));
    },
  });

  it('shows the new file with its diff, approves it, and edits Keel rules', async () => {
    const watched = app.watch('project-setup');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Project setup and permission rules' }).waitFor();
    const files = page.getByRole('article', { name: 'Project setup files' });
    await files.getByText('not approved').waitFor({ timeout: 30_000 });
    expect(await files.locator('pre').textContent()).toContain(
      '+{"permissions":{"allow":["Bash(npm test:*)"]',
    );
    const rules = page.getByRole('article', { name: 'Permission rules' });
    await rules.getByText('No permission rules in effect.').waitFor();
    expect(await rules.textContent()).toContain('(not in effect until approved)');

    await files.getByRole('button', { name: 'Approve these files' }).click();
    await files.getByRole('heading', { name: 'Files approved' }).waitFor({ timeout: 30_000 });
    await rules.getByText('project .claude/settings.json').first().waitFor();
    expect(await rules.locator('li').allTextContents()).toEqual([
      'deny Bash(git push:*) project .claude/settings.json',
      'allow Bash(npm test:*) project .claude/settings.json',
    ]);
    const approvals = fs.readFileSync(path.join(app.home, 'setup-approvals.jsonl'), 'utf8');
    expect(approvals).toContain('"via":"app settings"');

    await rules.getByRole('combobox', { name: 'Rule action' }).selectOption('ask');
    await rules.getByRole('textbox', { name: 'New rule' }).fill('Bash(curl:*)');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await rules.getByRole('button', { name: 'Remove ask Bash(curl:*)' }).waitFor({ timeout: 30_000 });
    expect(fs.readFileSync(path.join(app.home, 'permission-rules.jsonl'), 'utf8')).toContain('Bash(curl:*)');
    await rules.getByRole('button', { name: 'Remove ask Bash(curl:*)' }).click();
    await expect.poll(() => rules.getByRole('button', { name: 'Remove ask Bash(curl:*)' }).count()).toBe(0);
    expect(watched.errors).toEqual([]);
  }, 120_000);
});
