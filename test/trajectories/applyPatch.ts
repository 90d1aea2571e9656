import { expect } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';
import { call, type Call } from './model.js';
import type { Trajectory } from './play.js';

// Trajectories with the tools that came with the Codex-shaped tool set: apply_patch (`{input}`: the Codex patch
// format, several files and hunks in one call, all or nothing) and reads of one message run in parallel.

/** A Codex patch from its file sections. */
const patch = (...sections: string[][]): Call => ({
  tool: 'apply_patch',
  args: { input: ['*** Begin Patch', ...sections.flat(), '*** End Patch'].join('\n') },
});
const context = (line: string) => ` ${line}`;

const CALC_HUNKS = [
  '*** Update File: src/calc.js',
  '@@ export function sum(values) {',
  '-  return values.reduce((total, value) => total + value);',
  '+  return values.reduce((total, value) => total + value, 0);',
  context('}'),
  '@@ export function clamp(value, low, high) {',
  '-  return Math.max(high, Math.min(low, value));',
  '+  return Math.max(low, Math.min(high, value));',
  context('}'),
];

const STOCK_HUNK = [
  '*** Update File: inventory/stock.py',
  '@@ def remove(self, item, quantity):',
  context('        """Takes `quantity` of `item` out of stock."""'),
  '-        self._counts[item] = self._counts.get(item, 0) - quantity',
  '+        available = self._counts.get(item, 0)',
  '+        if quantity > available:',
  '+            raise ValueError(f"only {available} {item} in stock")',
  '+        self._counts[item] = available - quantity',
];

/** The kinds of the events from the first assistant message with `calls` tool calls to the last of their results. */
function callRun(events: readonly SessionEvent[], calls: number): string[] {
  const start = events.findIndex(
    (event) => event.kind === 'assistant_message' && event.toolCalls.length === calls,
  );
  const rest = events.slice(start + 1);
  const end = rest.findIndex((event) => event.kind === 'assistant_message');
  return rest.slice(0, end).map((event) => event.kind);
}

export const applyPatchTrajectories: Trajectory[] = [
  {
    id: 'gpt-apply-patch-hunks-across-files',
    checks:
      'GPT style: one apply_patch call with two @@ hunks in src/calc.js, a new test file and a README change; the result lists each file (M/A with line counts); the new test runs with the old ones.',
    style: 'gpt',
    project: 'node-calc',
    turns: [
      {
        prompt:
          'Fix the failing tests, add a test for clamp with equal bounds, and note the behaviour in the README.',
      },
    ],
    model: [
      { calls: [call.read('src/calc.js'), call.read('README.md')] },
      {
        calls: [
          patch(
            CALC_HUNKS,
            [
              '*** Add File: test/clamp.test.js',
              "+import { test } from 'node:test';",
              "+import assert from 'node:assert/strict';",
              "+import { clamp } from '../src/calc.js';",
              '+',
              "+test('clamp with equal bounds', () => {",
              '+  assert.equal(clamp(7, 3, 3), 3);',
              '+});',
            ],
            [
              '*** Update File: README.md',
              '@@',
              context(
                "Small numeric helpers. `npm test` runs the tests with Node's built-in runner (no dependencies).",
              ),
              '+',
              '+`sum([])` is 0; `clamp(value, low, high)` keeps a value within its bounds.',
            ],
          ),
        ],
      },
      {
        sees: [
          /Applied the patch to 3 files:\nM src\/calc\.js \(\+2 -2\)\nA test\/clamp\.test\.js \(\+7 -0\)\nM README\.md \(\+2 -0\)/,
        ],
        calls: [call.run('npm test 2>&1 | tail -n 9')],
      },
      {
        sees: [/pass 6/, /fail 0/],
        text: 'Fixed `sum` and `clamp`, added `test/clamp.test.js`, documented both.',
      },
    ],
    expect: {
      status: [' M README.md', ' M src/calc.js', '?? test/clamp.test.js'],
      contains: {
        'src/calc.js': ['total + value, 0);', 'Math.max(low, Math.min(high, value))'],
        'README.md': ['`sum([])` is 0;'],
      },
    },
  },
  {
    id: 'gpt-apply-patch-all-or-nothing',
    checks:
      'A patch whose second file does not match (a hunk whose context is not in tests/test_stock.py) fails naming that file and changes nothing, not even the first file (git status empty); the model re-reads and sends a patch that applies.',
    style: 'gpt',
    project: 'py-inventory',
    turns: [{ prompt: 'Make remove() refuse to go negative and add a test for removing everything.' }],
    model: [
      {
        calls: [
          patch(STOCK_HUNK, [
            '*** Update File: tests/test_stock.py',
            '@@ def test_remove_everything(self):',
            context('        stock = Inventory()'),
            '+        stock.add("fig", 2)',
          ]),
        ],
      },
      { sees: [/tests\/test_stock\.py/], calls: [call.run('git status --short; echo status-done')] },
      { sees: [/^status-done/m], calls: [call.read('tests/test_stock.py', { offset: 19 })] },
      {
        sees: [/self\.assertEqual\(stock\.count\("plum"\), 1\)/],
        calls: [
          patch(STOCK_HUNK, [
            '*** Update File: tests/test_stock.py',
            '@@ def test_cannot_remove_more_than_in_stock(self):',
            context('        self.assertEqual(stock.count("plum"), 1)'),
            '+',
            '+    def test_remove_everything(self):',
            '+        stock = Inventory()',
            '+        stock.add("fig", 2)',
            '+        stock.remove("fig", 2)',
            '+        self.assertEqual(stock.count("fig"), 0)',
          ]),
        ],
      },
      { sees: [/Applied the patch to 2 files/], calls: [call.run('python3 -m unittest')] },
      { sees: [/Ran 4 tests/, /\bOK\b/], text: 'Done: remove() refuses to go negative, with a new test.' },
    ],
    expect: {
      status: [' M inventory/stock.py', ' M tests/test_stock.py'],
      contains: { 'tests/test_stock.py': ['def test_remove_everything(self):'] },
    },
    verify: (played) => {
      const failed = played.events.find(
        (event) => event.kind === 'tool_result' && event.tool === 'apply_patch',
      );
      expect(failed?.kind === 'tool_result' && failed.isError).toBe(true);
      // Nothing of the failed patch was written: git status in the checkout printed nothing before the marker.
      expect(played.model.seen[2]?.results[0]).toMatch(/^status-done/);
    },
  },
  {
    id: 'gpt-apply-patch-across-packages',
    checks:
      'In the workspace, one apply_patch updates files in two packages and the CHANGELOG the nested AGENTS.md asks for; `npm test --workspaces` passes.',
    style: 'gpt',
    project: 'monorepo',
    turns: [{ prompt: 'Fix both packages’ failing tests.' }],
    model: [
      { calls: [call.run('npm test --workspaces 2>&1 | grep -E "^not ok"')] },
      {
        sees: [
          /not ok \d+ - slugify drops leading and trailing separators/,
          /not ok \d+ - daysBetween counts whole days/,
        ],
        calls: [
          patch(
            [
              '*** Update File: packages/strings/src/slug.js',
              '@@ export function slugify(text) {',
              "-  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');",
              "+  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');",
            ],
            [
              '*** Update File: packages/dates/src/days.js',
              '@@ export function daysBetween(from, to) {',
              '-  return (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;',
              '+  return (Date.parse(to) - Date.parse(from)) / 86_400_000;',
            ],
            [
              '*** Update File: packages/strings/CHANGELOG.md',
              '@@',
              context('## Unreleased'),
              '+',
              '+- slugify drops leading and trailing dashes.',
            ],
          ),
        ],
      },
      {
        sees: [/Applied the patch to 3 files/],
        calls: [call.run('npm test --workspaces >/dev/null 2>&1 && echo GREEN')],
      },
      { sees: [/GREEN/], text: 'Both packages pass.' },
    ],
    expect: {
      status: [
        ' M packages/dates/src/days.js',
        ' M packages/strings/CHANGELOG.md',
        ' M packages/strings/src/slug.js',
      ],
      contains: {
        'packages/strings/CHANGELOG.md': ['## Unreleased\n\n- slugify drops leading and trailing dashes.'],
      },
    },
  },
  {
    id: 'claude-parallel-reads-in-one-message',
    checks:
      'Claude style: grep, glob, list_dir and two read_file calls in one message run in parallel (every tool_call_started before the first tool_result) and come back in call order in one user message.',
    style: 'claude',
    project: 'monorepo',
    turns: [{ prompt: 'Where is slugify used and tested? Then fix its failing test.' }],
    model: [
      {
        text: "I'll search and read in one go.",
        calls: [
          call.grep('slugify'),
          call.glob('packages/*/test/*.js'),
          call.list('packages'),
          call.read('packages/strings/src/slug.js'),
          call.read('packages/strings/AGENTS.md'),
        ],
      },
      {
        sees: [
          /packages\/strings\/test\/slug\.test\.js/,
          /packages\/dates\/test\/days\.test\.js/,
          /export function slugify/,
          /CHANGELOG/,
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
          call.edit('packages/dates/src/days.js', '/ 86_400_000 + 1;', '/ 86_400_000;'),
        ],
      },
      { calls: [call.run('npm test >/dev/null 2>&1 && echo GREEN')] },
      {
        sees: [/GREEN/],
        text: 'slugify is only used in its own package; fixed it (and daysBetween, so the workspace passes).',
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
      const kinds = callRun(played.events, 5);
      expect(kinds.slice(0, 5)).toEqual(Array(5).fill('tool_call_started'));
      expect(kinds.filter((kind) => kind === 'tool_result')).toHaveLength(5);
      const body = played.server.requests[1]?.body as { messages: { role: string; content: unknown }[] };
      const blocks = body.messages.at(-1)?.content as { type: string; tool_use_id?: string }[];
      const firstAnswer = played.server.requests[1]
        ? played.events.find((e) => e.kind === 'assistant_message')
        : undefined;
      const order = firstAnswer?.kind === 'assistant_message' ? firstAnswer.toolCalls.map((c) => c.id) : [];
      expect(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)).toEqual(order);
    },
  },
];
