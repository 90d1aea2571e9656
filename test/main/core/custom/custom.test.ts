import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCustomSetup } from '../../../../main/core/harness/customCommands.js';
import { substituteArguments, splitArguments } from '../../../../main/core/custom/commands.js';
import { expandCommand, resolveModelName, UnknownCommandError } from '../../../../main/core/custom/expand.js';
import { parseFrontMatter } from '../../../../main/core/custom/frontMatter.js';
import { approveProjectSetup } from '../../../../main/core/setup/index.js';

let root: string;
let home: string;
let userHome: string;
let project: string;

function write(base: string, relative: string, text: string): void {
  const file = path.join(base, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

const env = () => ({ KEEL_USER_HOME: userHome });

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-custom-'));
  home = path.join(root, 'keel-home');
  userHome = path.join(root, 'user');
  project = path.join(root, 'project');
  for (const dir of [home, userHome, project]) fs.mkdirSync(dir, { recursive: true });
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the formats, read from real files in both layouts', () => {
  it('reads skills, commands and agents from ~/.claude, ~/.agents and an approved project', () => {
    // Claude Code's layout in the home: a command with every front matter key, a namespaced one, an agent.
    write(
      userHome,
      '.claude/commands/review.md',
      '---\ndescription: Review the changes\nargument-hint: [path]\nallowed-tools: Read, Grep, Bash(git diff:*)\n---\nReview $ARGUMENTS carefully.\n',
    );
    write(userHome, '.claude/commands/frontend/component.md', '# Make a component\n\nCreate $1 in $2.\n');
    write(
      userHome,
      '.claude/agents/test-runner.md',
      '---\nname: test-runner\ndescription: Runs the tests and reports failures\ntools: Read, Bash\nmodel: haiku\n---\nYou run the test suite and report each failure.\n',
    );
    // The shared layout (Codex, Goose, Agent Skills): a skill with a file of its own; an agent with a YAML list.
    write(
      userHome,
      '.agents/skills/release/SKILL.md',
      '---\nname: release\ndescription: >\n  Cut a release: bump the version,\n  write the changelog.\n---\n# Release\n\nRun scripts/bump.sh first.\n',
    );
    write(userHome, '.agents/skills/release/scripts/bump.sh', '#!/bin/sh\necho bump\n');
    // The project's: Keel's own layout and the shared one; they count once approved.
    write(
      project,
      '.keel/commands/deploy.md',
      '---\ndescription: Deploy\nmodel: claude-sonnet-5-5\n---\nDeploy $1 now.\n',
    );
    write(
      project,
      '.agents/agents/doc-writer.md',
      '---\nname: doc-writer\ndescription: Writes docs\ntools:\n  - read_file\n  - write_file\n---\nWrite docs.\n',
    );
    // An older SKILL.md without `name` (the folder names it).
    write(
      project,
      '.claude/skills/lint-fix/SKILL.md',
      '---\ndescription: Fix lint errors\n---\nRun the linter.\n',
    );

    const before = readCustomSetup({ home, env: env(), project });
    expect(before.commands.map((c) => c.name)).toEqual(['frontend:component', 'review']);
    expect(before.agents.map((a) => a.name)).toEqual(['test-runner']);
    expect(before.skills.map((s) => s.name)).toEqual(['release']);

    approveProjectSetup(home, project, 'test');
    const setup = readCustomSetup({ home, env: env(), project });
    expect(setup.problems).toEqual([]);
    expect(setup.commands.map((c) => c.name)).toEqual(['deploy', 'frontend:component', 'review']);
    const review = setup.commands.find((c) => c.name === 'review');
    expect(review).toMatchObject({
      scope: 'user',
      layout: 'claude',
      shown: '~/.claude/commands/review.md',
      description: 'Review the changes',
      argumentHint: '[path]',
      allowedTools: ['read_file', 'grep', 'run_command'],
    });
    // No description: the first line of the body, as Claude Code shows it.
    expect(setup.commands.find((c) => c.name === 'frontend:component')?.description).toBe('Make a component');
    expect(setup.commands.find((c) => c.name === 'deploy')).toMatchObject({
      scope: 'project',
      layout: 'keel',
      shown: '.keel/commands/deploy.md',
      model: 'claude-sonnet-5-5',
    });
    expect(setup.agents).toEqual([
      expect.objectContaining({ name: 'doc-writer', tools: ['read_file', 'write_file'], scope: 'project' }),
      expect.objectContaining({
        name: 'test-runner',
        tools: ['read_file', 'run_command'],
        model: 'haiku',
        prompt: 'You run the test suite and report each failure.',
      }),
    ]);
    const release = setup.skills.find((s) => s.name === 'release');
    expect(release).toMatchObject({
      description: 'Cut a release: bump the version, write the changelog.',
      shown: '~/.agents/skills/release/SKILL.md',
    });
    expect(release?.resources.map((r) => r.relative)).toEqual(['scripts/bump.sh']);
    expect(setup.skills.find((s) => s.name === 'lint-fix')?.shown).toBe('.claude/skills/lint-fix/SKILL.md');
  });

  it('names a malformed file with its line and uses nothing of it', () => {
    write(userHome, '.claude/commands/bad.md', '---\ndescription: ok\nmodel: [unclosed\n---\nbody\n');
    write(userHome, '.claude/agents/nameless.md', '---\ndescription: no name\n---\nprompt\n');
    write(userHome, '.agents/skills/Bad_Name/SKILL.md', '---\ndescription: d\n---\nx\n');
    write(userHome, '.agents/skills/empty/SKILL.md', '---\nname: empty\n---\nno description\n');
    write(userHome, '.claude/commands/good.md', 'fine\n');
    const setup = readCustomSetup({ home, env: env() });
    expect(setup.commands.map((c) => c.name)).toEqual(['good']);
    expect(setup.agents).toEqual([]);
    expect(setup.skills).toEqual([]);
    const byPath = new Map(setup.problems.map((p) => [p.path, p]));
    expect(setup.problems.length).toBeGreaterThanOrEqual(4);
    for (const problem of setup.problems) expect(problem.line).toBeGreaterThanOrEqual(1);
    expect([...byPath.keys()].some((p) => p.endsWith('.claude/commands/bad.md'))).toBe(true);
    expect([...byPath.keys()].some((p) => p.endsWith('.claude/agents/nameless.md'))).toBe(true);
  });

  it("never lets a project's definition shadow the user's own of the same name", () => {
    write(userHome, '.claude/commands/review.md', 'the user review\n');
    write(project, '.claude/commands/review.md', 'the project review\n');
    approveProjectSetup(home, project, 'test');
    const setup = readCustomSetup({ home, env: env(), project });
    expect(setup.commands).toHaveLength(1);
    expect(setup.commands[0]?.template).toBe('the user review\n');
  });
});

describe('front matter', () => {
  it('reads a file without front matter as all body, and says where YAML breaks', () => {
    expect(parseFrontMatter('just text\n')).toEqual({ ok: true, data: {}, body: 'just text\n' });
    expect(parseFrontMatter('---\na: 1\nb: [\n---\nbody')).toMatchObject({ ok: false, line: 4 });
    expect(parseFrontMatter('---\na: 1\n')).toMatchObject({ ok: false, line: 1 });
    expect(parseFrontMatter('---\n- a\n---\n')).toMatchObject({ ok: false });
    expect(parseFrontMatter('---\r\nname: x\r\n---\r\nbody')).toEqual({
      ok: true,
      data: { name: 'x' },
      body: 'body',
    });
  });
});

describe('arguments', () => {
  it('substitutes $ARGUMENTS and $1…$9 as Claude Code does', () => {
    expect(substituteArguments('Review $ARGUMENTS.', ' src/ lib/ ')).toBe('Review src/ lib/.');
    expect(substituteArguments('Fix issue #$1 with priority $2; $3.', '123 high')).toBe(
      'Fix issue #123 with priority high; .',
    );
    expect(splitArguments(`"fix the bug" src/ 'a b' c\\ d`)).toEqual(['fix the bug', 'src/', 'a b', 'c d']);
    // A template that names no argument gets them after it, so nothing typed is lost.
    expect(substituteArguments('Review the code.\n', 'src/')).toBe('Review the code.\n\nARGUMENTS: src/');
    expect(substituteArguments('Review the code.', '')).toBe('Review the code.');
    // $10 is not $1 followed by 0.
    expect(substituteArguments('x $10 $1', 'a')).toBe('x $10 a');
  });

  it('expands by full or short name, and refuses unknown or ambiguous names clearly', () => {
    write(userHome, '.claude/commands/frontend/component.md', 'Create $1.\n');
    write(userHome, '.claude/commands/backend/api.md', 'API $ARGUMENTS\n');
    write(userHome, '.claude/commands/web/api.md', 'web API\n');
    const { commands } = readCustomSetup({ home, env: env() });
    expect(expandCommand(commands, '/frontend:component Button')?.prompt).toBe('Create Button.\n');
    const short = expandCommand(commands, '/component Card');
    expect(short?.command).toMatchObject({ name: 'frontend:component', arguments: 'Card' });
    expect(() => expandCommand(commands, '/api x')).toThrow(/ambiguous: \/backend:api, \/web:api/);
    expect(() => expandCommand(commands, '/nope')).toThrow(UnknownCommandError);
    expect(() => expandCommand(commands, '/nope')).toThrow(/there is no command \/nope/);
    // Not commands: a path, or text that does not start with a slash.
    expect(expandCommand(commands, '/src/x.ts is broken')).toBeUndefined();
    expect(expandCommand(commands, 'review /component')).toBeUndefined();
    expect(expandCommand(commands, ' /component')).toBeUndefined();
  });

  it("resolves Claude Code's model aliases for Anthropic only", () => {
    expect(resolveModelName('haiku', 'anthropic')).toMatch(/^claude-haiku-/);
    expect(resolveModelName('haiku', 'openai')).toBeUndefined();
    expect(resolveModelName('gpt-5', 'openai')).toBe('gpt-5');
  });
});
