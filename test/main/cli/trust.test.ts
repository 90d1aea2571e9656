import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';

// `keel trust` and `keel rules` through the built CLI, on real files in a temp project and user home.
let root: string;
let home: string;
let project: string;
let userHome: string;
const env = () => ({ KEEL_USER_HOME: userHome });

function write(base: string, relative: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(base, relative)), { recursive: true });
  fs.writeFileSync(path.join(base, relative), text);
}

beforeAll(async () => {
  await ensureCliBuilt();
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-trust-cli-')));
  home = path.join(root, 'home');
  project = path.join(root, 'project');
  userHome = path.join(root, 'user');
  fs.mkdirSync(project);
  fs.mkdirSync(userHome);
}, 180_000);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('keel trust and keel rules', () => {
  it('shows what a project brings, approves it, shows the diff of a later change, and lists rules with their source', async () => {
    write(
      project,
      '.claude/settings.json',
      '{"permissions":{"allow":["Bash(npm test:*)"],"deny":["Bash(git push:*)"]}}\n',
    );
    write(project, '.claude/commands/review.md', '---\ndescription: Review\n---\nReview $ARGUMENTS\n');
    write(userHome, '.keel/settings.json', '{"permissions":{"ask":["Bash(curl:*)"]}}\n');

    const shown = await keel(home, ['trust', '--project', project], env());
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`${project}: untrusted`);
    expect(shown.stdout).toMatch(/NEW\s+\.claude\/settings\.json\s+\(claude settings/);
    expect(shown.stdout).toContain('+Review $ARGUMENTS');
    expect(shown.stdout).toContain(`keel trust --project ${project} --approve`);

    const before = await keel(home, ['rules', '--project', project], env());
    expect(before.stdout).toContain('ask    Bash(curl:*)  from user ~/.keel/settings.json');
    expect(before.stdout).toContain(
      'allow  Bash(npm test:*)  from project .claude/settings.json  (NOT in effect: keel trust)',
    );

    const approved = await keel(home, ['trust', '--project', project, '--approve'], env());
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`approved 2 files of ${project}`);
    const after = await keel(home, ['rules', 'list', '--project', project, '--json'], env());
    expect((JSON.parse(after.stdout) as { rules: unknown }).rules).toEqual([
      { action: 'ask', rule: 'Bash(curl:*)', source: 'user ~/.keel/settings.json' },
      { action: 'deny', rule: 'Bash(git push:*)', source: 'project .claude/settings.json' },
      { action: 'allow', rule: 'Bash(npm test:*)', source: 'project .claude/settings.json' },
    ]);

    write(project, '.claude/settings.json', '{"permissions":{"allow":["Bash"]}}\n');
    const changed = await keel(home, ['trust', '--project', project], env());
    expect(changed.stdout).toMatch(/CHANGED\s+\.claude\/settings\.json/);
    expect(changed.stdout).toContain('+{"permissions":{"allow":["Bash"]}}');
    expect(changed.stdout).toContain(
      '-{"permissions":{"allow":["Bash(npm test:*)"],"deny":["Bash(git push:*)"]}}',
    );
    const untrusted = await keel(home, ['rules', '--project', project, '--json'], env());
    // The changed file adds nothing; its approved deny rule stays in effect until it is approved again.
    expect((JSON.parse(untrusted.stdout) as { rules: unknown }).rules).toEqual([
      { action: 'ask', rule: 'Bash(curl:*)', source: 'user ~/.keel/settings.json' },
      {
        action: 'deny',
        rule: 'Bash(git push:*)',
        source: 'project .claude/settings.json as approved (changed since)',
      },
    ]);
  });

  it("adds and removes Keel's own rules; refuses a bad rule and a rule that comes from a file", async () => {
    const added = await keel(home, ['rules', 'add', 'Bash(make:*)', '--allow', '--project', project], env());
    expect(added.code, added.stderr).toBe(0);
    const listed = await keel(home, ['rules', '--project', project], env());
    expect(listed.stdout).toContain('allow  Bash(make:*)  from keel');
    const bad = await keel(home, ['rules', 'add', 'Bash(', '--deny'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"Bash(" is not a rule');
    const fromFile = await keel(home, ['rules', 'rm', 'Bash(curl:*)', '--project', project], env());
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain('comes from user ~/.keel/settings.json: edit that file');
    const removed = await keel(home, ['rules', 'rm', 'Bash(make:*)', '--project', project], env());
    expect(removed.code, removed.stderr).toBe(0);
    expect((await keel(home, ['rules', '--project', project], env())).stdout).not.toContain('Bash(make:*)');
  });
});
