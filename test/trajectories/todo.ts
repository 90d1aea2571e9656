import { expect } from 'vitest';
import { currentPlan } from '../../main/core/projection/plan.js';
import { call, type Call } from './model.js';
import type { Trajectory } from './play.js';

// Trajectories that keep a plan with the todo tool (Claude Code's TodoWrite shape: the whole list every call).

type Status = 'pending' | 'in_progress' | 'completed';
const todo = (...steps: [string, Status, string?][]): Call => ({
  tool: 'todo',
  args: {
    todos: steps.map(([content, status, activeForm]) => ({
      content,
      status,
      ...(activeForm !== undefined ? { activeForm } : {}),
    })),
  },
});

const STRINGS = 'Fix slugify in packages/strings';
const DATES = 'Fix daysBetween in packages/dates';
const VERIFY = 'Run every package’s tests';

export const todoTrajectories: Trajectory[] = [
  {
    id: 'claude-todo-plan-through-the-work',
    checks:
      'Claude style: a three-step todo list written first (with the first test run in the same message), updated as each step finishes (one wrong update with two steps in progress is refused with how to fix it, then resent), all steps completed at the end; the log’s current plan is that final list.',
    style: 'claude',
    project: 'monorepo',
    turns: [{ prompt: 'Fix the failing tests across the workspace.' }],
    model: [
      {
        text: "I'll plan this out.",
        calls: [
          todo([STRINGS, 'in_progress', 'Fixing slugify'], [DATES, 'pending'], [VERIFY, 'pending']),
          call.run('cd packages/strings && npm test 2>&1 | grep -E "^(not ok|# fail)"'),
        ],
      },
      {
        sees: [
          /Plan updated: 0 of 3 steps completed; in progress: Fixing slugify\./,
          /not ok \d+ - slugify drops/,
        ],
        calls: [
          call.edit(
            'packages/strings/src/slug.js',
            "replace(/[^a-z0-9]+/g, '-');",
            "replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');",
          ),
          call.edit(
            'packages/strings/CHANGELOG.md',
            '## Unreleased\n',
            '## Unreleased\n\n- slugify trims dashes.\n',
          ),
        ],
      },
      // Two steps in progress at once: the tool refuses and says what to do.
      { calls: [todo([STRINGS, 'in_progress'], [DATES, 'in_progress'], [VERIFY, 'pending'])] },
      {
        sees: [/at most one step may be in_progress, and todos 0, 1 are/],
        calls: [
          todo([STRINGS, 'completed'], [DATES, 'in_progress', 'Fixing daysBetween'], [VERIFY, 'pending']),
        ],
      },
      {
        sees: [/Plan updated: 1 of 3 steps completed; in progress: Fixing daysBetween\./],
        calls: [call.edit('packages/dates/src/days.js', '/ 86_400_000 + 1;', '/ 86_400_000;')],
      },
      {
        calls: [
          todo([STRINGS, 'completed'], [DATES, 'completed'], [VERIFY, 'in_progress']),
          call.run('npm test >/dev/null 2>&1 && echo GREEN'),
        ],
      },
      {
        sees: [/Plan updated: 2 of 3 steps completed/, /GREEN/],
        calls: [todo([STRINGS, 'completed'], [DATES, 'completed'], [VERIFY, 'completed'])],
      },
      {
        sees: [/Plan updated: 3 of 3 steps completed\./],
        text: 'All three steps are done; the workspace passes.',
      },
    ],
    expect: {
      status: [
        ' M packages/dates/src/days.js',
        ' M packages/strings/CHANGELOG.md',
        ' M packages/strings/src/slug.js',
      ],
    },
    verify: (played) => {
      const plan = currentPlan(played.events);
      expect(plan?.items.map((item) => [item.content, item.status])).toEqual([
        [STRINGS, 'completed'],
        [DATES, 'completed'],
        [VERIFY, 'completed'],
      ]);
      const todoCalls = played.events.filter(
        (event) => event.kind === 'tool_result' && event.tool === 'todo',
      );
      expect(todoCalls).toHaveLength(5);
    },
  },
  {
    id: 'gpt-todo-with-apply-patch',
    checks:
      'GPT style: a plan with update_plan-like steps, one apply_patch for the fix, the plan advanced after each step; the todo calls never ask for approval under the ask policy while the patch and the test run do (granted once each).',
    style: 'gpt',
    project: 'node-calc',
    policy: 'ask',
    turns: [
      {
        prompt: 'Fix the failing tests.',
        answers: [
          { tool: 'apply_patch', grant: 'once' },
          { tool: 'run_command', grant: 'once' },
        ],
      },
    ],
    model: [
      {
        calls: [
          todo(
            ['Find the failing cases', 'in_progress'],
            ['Fix them with one patch', 'pending'],
            ['Run the tests', 'pending'],
          ),
          call.read('src/calc.js'),
        ],
      },
      {
        sees: [/Plan updated: 0 of 3 steps completed/, /export function clamp/],
        calls: [
          todo(
            ['Find the failing cases', 'completed'],
            ['Fix them with one patch', 'in_progress'],
            ['Run the tests', 'pending'],
          ),
          {
            tool: 'apply_patch',
            args: {
              input: [
                '*** Begin Patch',
                '*** Update File: src/calc.js',
                '@@ export function sum(values) {',
                '-  return values.reduce((total, value) => total + value);',
                '+  return values.reduce((total, value) => total + value, 0);',
                '@@ export function clamp(value, low, high) {',
                '-  return Math.max(high, Math.min(low, value));',
                '+  return Math.max(low, Math.min(high, value));',
                '*** End Patch',
              ].join('\n'),
            },
          },
        ],
      },
      {
        sees: [/Applied the patch to 1 file:\nM src\/calc\.js \(\+2 -2\)/],
        calls: [
          todo(
            ['Find the failing cases', 'completed'],
            ['Fix them with one patch', 'completed'],
            ['Run the tests', 'in_progress'],
          ),
          call.run('npm test 2>&1 | tail -n 9'),
        ],
      },
      {
        sees: [/Plan updated: 2 of 3 steps completed/, /fail 0/],
        calls: [
          todo(
            ['Find the failing cases', 'completed'],
            ['Fix them with one patch', 'completed'],
            ['Run the tests', 'completed'],
          ),
        ],
      },
      { text: 'Fixed; all tests pass.' },
    ],
    expect: {
      status: [' M src/calc.js'],
      contains: { 'src/calc.js': ['total + value, 0);', 'Math.max(low, Math.min(high, value))'] },
    },
    verify: (played) => {
      const asked = played.events.flatMap((event) => (event.kind === 'approval_request' ? [event.tool] : []));
      expect(asked).toEqual(['apply_patch', 'run_command']);
      expect(currentPlan(played.events)?.items.every((item) => item.status === 'completed')).toBe(true);
    },
  },
];
