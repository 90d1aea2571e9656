import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { call } from './model.js';
import { firstRequest, type Trajectory } from './play.js';

// Trajectories on evals/projects/monorepo: an npm workspace whose root AGENTS.md, packages/strings/AGENTS.md and
// packages/dates/CLAUDE.md (no AGENTS.md there) are the project's instructions; both packages have a failing test.

const SLUG_BUG = "return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');";
const SLUG_FIX = "return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');";
const DAYS_BUG = 'return (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;';
const DAYS_FIX = 'return (Date.parse(to) - Date.parse(from)) / 86_400_000;';
const CHANGELOG_LINE = '- slugify drops leading and trailing dashes.';

export const monorepoTrajectories: Trajectory[] = [
  {
    id: 'claude-nested-agents-md-followed',
    checks:
      'The first request carries the root AGENTS.md, packages/strings/AGENTS.md and packages/dates/CLAUDE.md right after the system prompt (instructions_loaded records the three); the model runs `cd packages/strings && npm test` as the root AGENTS.md says, fixes both packages and follows the nested instruction (a CHANGELOG line under Unreleased).',
    style: 'claude',
    project: 'monorepo',
    turns: [{ prompt: 'Fix the failing tests in both packages.' }],
    model: [
      { calls: [call.run('cd packages/strings && npm test'), call.run('cd packages/dates && npm test')] },
      {
        sees: [/✖ slugify drops leading and trailing separators/, /✖ daysBetween counts whole days/],
        calls: [call.read('packages/strings/src/slug.js'), call.read('packages/dates/src/days.js')],
      },
      {
        text: 'Per packages/strings/AGENTS.md, the change also gets a CHANGELOG line.',
        calls: [
          call.edit('packages/strings/src/slug.js', SLUG_BUG, SLUG_FIX),
          call.edit('packages/dates/src/days.js', DAYS_BUG, DAYS_FIX),
          call.edit(
            'packages/strings/CHANGELOG.md',
            '## Unreleased\n',
            `## Unreleased\n\n${CHANGELOG_LINE}\n`,
          ),
        ],
      },
      { calls: [call.run('npm test 2>&1 | grep -E "(pass|fail) [0-9]"')] },
      { sees: [/fail 0[\s\S]*fail 0/], text: 'Both packages pass; CHANGELOG updated.' },
    ],
    expect: {
      status: [
        ' M packages/dates/src/days.js',
        ' M packages/strings/CHANGELOG.md',
        ' M packages/strings/src/slug.js',
      ],
      contains: { 'packages/strings/CHANGELOG.md': [`## Unreleased\n\n${CHANGELOG_LINE}\n`] },
    },
    verify: (played) => {
      const first = firstRequest(played);
      expect(first).toContain('cd packages/strings && npm test');
      expect(first).toContain('gets a line under `## Unreleased`');
      expect(first).toContain('never use the local time zone');
      const loaded = played.events.find((event) => event.kind === 'instructions_loaded');
      expect(loaded?.kind === 'instructions_loaded' && loaded.files.map((file) => file.path).sort()).toEqual([
        'AGENTS.md',
        'packages/dates/CLAUDE.md',
        'packages/strings/AGENTS.md',
      ]);
    },
  },
  {
    id: 'gpt-monorepo-cwd-and-workspaces',
    checks:
      'GPT style in a workspace: run_command with `cwd: packages/dates` (and a wrong `cwd: packages/date` answered with a near match), edits in two packages, then `npm test --workspaces` from the root; the instructions reach the OpenAI request too.',
    style: 'gpt',
    project: 'monorepo',
    turns: [
      { prompt: 'Both workspace packages have failing tests; fix them and keep the changelog current.' },
    ],
    model: [
      { calls: [call.run('npm test', { cwd: 'packages/date' })] },
      {
        sees: [/is not a folder in the workspace; did you mean packages\/dates\?/],
        calls: [call.run('npm test', { cwd: 'packages/dates' })],
      },
      {
        sees: [/✖ daysBetween counts whole days/],
        calls: [call.edit('packages/dates/src/days.js', DAYS_BUG, DAYS_FIX)],
      },
      { calls: [call.run('npm test -- --test-reporter=dot', { cwd: 'packages/strings' })] },
      {
        calls: [
          call.edit('packages/strings/src/slug.js', SLUG_BUG, SLUG_FIX),
          call.edit(
            'packages/strings/CHANGELOG.md',
            '## Unreleased\n',
            `## Unreleased\n\n${CHANGELOG_LINE}\n`,
          ),
        ],
      },
      { calls: [call.run('npm test --workspaces 2>&1 | grep -E "^# (pass|fail)"')] },
      { sees: [/# pass 2\n# fail 0\n# pass 3\n# fail 0/], text: 'All 5 tests pass in both packages.' },
    ],
    expect: {
      status: [
        ' M packages/dates/src/days.js',
        ' M packages/strings/CHANGELOG.md',
        ' M packages/strings/src/slug.js',
      ],
    },
    verify: (played) => {
      // The Responses API: the instructions are input items before the user's message.
      const body = played.server.requests[0]?.body as { input: { role?: string; content?: unknown }[] };
      const user = body.input.findIndex((item) =>
        JSON.stringify(item.content).includes('Both workspace packages'),
      );
      expect(JSON.stringify(body.input.slice(0, user))).toContain('gets a line under `## Unreleased`');
    },
  },
  {
    id: 'claude-reads-git-status-and-diff',
    checks:
      'The model checks its own work with `git status --short` and `git --no-pager diff` in the session’s checkout (the user’s repository state, read-only git), never commits, and the user’s folder gets the working-tree change only (HEAD unchanged).',
    style: 'claude',
    project: 'monorepo',
    turns: [{ prompt: 'Fix daysBetween and slugify, then show me the diff.' }],
    model: [
      {
        calls: [
          call.edit('packages/dates/src/days.js', DAYS_BUG, DAYS_FIX),
          call.edit('packages/strings/src/slug.js', SLUG_BUG, SLUG_FIX),
          call.edit(
            'packages/strings/CHANGELOG.md',
            '## Unreleased\n',
            `## Unreleased\n\n${CHANGELOG_LINE}\n`,
          ),
        ],
      },
      { calls: [call.run('git status --short && git --no-pager diff --stat')] },
      {
        sees: [/M packages\/dates\/src\/days\.js/, /M packages\/strings\/src\/slug\.js/, /3 files changed/],
        calls: [call.run('npm test >/dev/null 2>&1 && echo ALL-PASS')],
      },
      { sees: [/ALL-PASS/], text: '3 files changed; the tests pass. Nothing is committed.' },
    ],
    expect: {
      status: [
        ' M packages/dates/src/days.js',
        ' M packages/strings/CHANGELOG.md',
        ' M packages/strings/src/slug.js',
      ],
    },
    verify: (played) => {
      const log = execFileSync('git', ['log', '--oneline'], { cwd: played.project, encoding: 'utf8' });
      expect(log.trim().split('\n')).toHaveLength(1);
    },
  },
];
