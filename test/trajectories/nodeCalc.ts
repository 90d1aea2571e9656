import { expect } from 'vitest';
import { call } from './model.js';
import { allRequestText, type Trajectory } from './play.js';

// Trajectories on evals/projects/node-calc: `npm test` (node --test) fails on `sum([])` and on `clamp`.

const SUM_BUG = 'return values.reduce((total, value) => total + value);';
const SUM_FIX = 'return values.reduce((total, value) => total + value, 0);';
const CLAMP_BUG = 'return Math.max(high, Math.min(low, value));';
const CLAMP_FIX = 'return Math.max(low, Math.min(high, value));';

const fixedCalc = {
  status: [' M src/calc.js'],
  contains: { 'src/calc.js': [SUM_FIX, CLAMP_FIX] },
  lacks: { 'src/calc.js': [SUM_BUG, CLAMP_BUG] },
};

/** The two edits of the fix, as separate edit_file calls. */
const fixEdits = (file = 'src/calc.js') => [
  call.edit(file, SUM_BUG, SUM_FIX),
  call.edit(file, CLAMP_BUG, CLAMP_FIX),
];

export const nodeCalcTrajectories: Trajectory[] = [
  {
    id: 'claude-parallel-explore-then-fix',
    checks:
      'Claude style: three read-only tool_use blocks in one message (package.json, the test, list_dir src) answered in call order; `npm test` run in the project root shows the failures; two edit_file calls in one message; the tests pass in the box and afterwards in the folder.',
    style: 'claude',
    project: 'node-calc',
    turns: [{ prompt: 'The tests are failing. Please fix them.' }],
    model: [
      {
        sees: [/The tests are failing/],
        text: "I'll look at how the project is tested and what the failing tests expect.",
        calls: [call.read('package.json'), call.read('test/calc.test.js'), call.list('src')],
      },
      {
        sees: [/"test": "node --test"/, /sum of an empty list is 0/, /calc\.js[\s\S]*format\.js/],
        text: 'Let me run the test suite to see what fails.',
        calls: [call.run('npm test')],
      },
      {
        sees: [/✖ sum of an empty list is 0/, /✖ clamp keeps a value within its bounds/, /fail 2/],
        calls: [call.read('src/calc.js')],
      },
      {
        sees: [/total \+ value\);/],
        text: 'Two bugs: `reduce` has no initial value, so `sum([])` throws, and `clamp` swaps its bounds.',
        calls: fixEdits(),
      },
      {
        sees: [/Updated src\/calc\.js \(\+1 -1 lines\)\n---\nUpdated src\/calc\.js \(\+1 -1 lines\)/],
        calls: [call.run('npm test')],
      },
      { sees: [/pass 5/, /fail 0/], text: 'Fixed `sum` and `clamp` in `src/calc.js`; all 5 tests pass.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      // The three results of the parallel message came back in call order, in one user message.
      const third = played.server.requests[1]?.body as { messages: { role: string; content: unknown }[] };
      const last = third.messages.at(-1)?.content as { type: string; tool_use_id?: string }[];
      const results = last.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id);
      expect(results).toHaveLength(3);
      expect(results).toEqual([...results].sort());
    },
  },
  ((): Trajectory => {
    // The folder `pwd` printed, as the model remembers it.
    let root = '';
    return {
      id: 'gpt-absolute-paths-from-pwd',
      checks:
        'GPT style: the model runs `pwd`, then reads and edits by the absolute path it printed (inside the checkout), as models that work in absolute paths do; results and diffs name the file project-relative.',
      style: 'gpt',
      project: 'node-calc',
      turns: [{ prompt: 'Fix the failing tests in this repo.' }],
      model: [
        { calls: [call.run('pwd && ls')] },
        {
          sees: [/^\/\S+\n[\s\S]*package\.json/],
          calls: (seen) => {
            root = (seen.results[0] ?? '').split('\n')[0] ?? '';
            return [call.read(`${root}/src/calc.js`), call.read(`${root}/test/calc.test.js`)];
          },
        },
        {
          sees: [/total \+ value\);/, /clamp keeps a value/],
          calls: () => fixEdits(`${root}/src/calc.js`),
        },
        { sees: [/Updated src\/calc\.js/], calls: [call.run('npm test 2>&1 | tail -n 8')] },
        {
          sees: [/fail 0/],
          text: 'Both failures are fixed: `sum` starts from 0 and `clamp` uses its bounds in order.',
        },
      ],
      expect: fixedCalc,
    };
  })(),
  {
    id: 'claude-near-match-retry',
    checks:
      'A path that does not exist (`calc.js`, `tests/calc.test.js`) is answered with "did you mean src/calc.js?" / "test/calc.test.js"; the model retries with the suggestion and finishes the fix.',
    style: 'claude',
    project: 'node-calc',
    turns: [{ prompt: 'sum([]) throws. Fix calc.js.' }],
    model: [
      { calls: [call.read('calc.js'), call.read('tests/calc.test.js')] },
      {
        sees: [/does not exist; did you mean src\/calc\.js\?/, /did you mean test\/calc\.test\.js/],
        text: 'The files are under `src/` and `test/`.',
        calls: [call.read('src/calc.js')],
      },
      { sees: [/export function sum/], calls: fixEdits() },
      { calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'Done.' },
    ],
    expect: fixedCalc,
  },
  {
    id: 'claude-cd-and-npm-test-with-several-edits',
    checks:
      '`cd test && cd .. && npm test` style compound commands run from the project root; edit_file several times on one file across messages (one edit fails on a stale old_string and is redone after re-reading); `replace_all` renames a parameter.',
    style: 'claude',
    project: 'node-calc',
    turns: [
      { prompt: 'Make the test suite green, and rename the `values` parameter to `numbers` in calc.js.' },
    ],
    model: [
      {
        calls: [
          call.run(
            'cd test && ls && cd .. && npm test -- --test-reporter=tap 2>&1 | grep -E "^(not ok|# fail)"',
          ),
        ],
      },
      {
        sees: [/calc\.test\.js/, /not ok \d+ - sum of an empty list/, /fail 2/],
        calls: [call.read('src/calc.js')],
      },
      {
        calls: [call.edit('src/calc.js', 'total + value)', 'total + value, 0)')],
      },
      {
        sees: [/Updated src\/calc\.js/],
        calls: [call.edit('src/calc.js', 'Math.max(high, Math.min(low', 'Math.max(low, Math.min(high', {})],
      },
      // A stale copy of the line (the model forgot its own first edit): the tool says it is not there.
      { sees: [/Updated/], calls: [call.edit('src/calc.js', SUM_BUG, SUM_FIX)] },
      {
        sees: [/not found|does not occur|no match/i],
        calls: [call.read('src/calc.js', { offset: 1, limit: 5 })],
      },
      {
        sees: [/total \+ value, 0\);/],
        text: 'That edit was already made. Now the rename.',
        calls: [call.edit('src/calc.js', 'values', 'numbers', { replace_all: true })],
      },
      { sees: [/Updated src\/calc\.js/], calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'Green, and `values` is now `numbers` throughout `src/calc.js`.' },
    ],
    expect: {
      status: [' M src/calc.js'],
      contains: {
        'src/calc.js': [
          'numbers.reduce((total, value) => total + value, 0);',
          'sum(numbers) / numbers.length',
          CLAMP_FIX,
        ],
      },
      lacks: { 'src/calc.js': ['values'] },
    },
  },
  {
    id: 'gpt-long-output-artifact',
    checks:
      'A very long command output (a verbose reporter over 4,000 lines) reaches the model cut to its head and tail with the path of the whole output (`/artifacts/<handle>`); the model greps that artifact for the failures and reads its middle with read_file offset/limit (lines that never reached it in the cut), then fixes the bug; the artifact cannot be written.',
    style: 'gpt',
    project: 'node-calc',
    turns: [{ prompt: 'Run the tests with a verbose reporter and fix whatever fails.' }],
    model: [
      {
        calls: [
          call.run(
            'for i in $(seq 1 4000); do echo "trace line $i: checking calc"; done; npm test --silent -- --test-reporter=tap',
          ),
        ],
      },
      {
        sees: [
          /trace line 1: checking calc/,
          /fail 2/,
          /the whole output is \/artifacts\/\S+\.log: read it with read_file/,
        ],
        calls: (seen) => {
          const artifact = artifactOf(seen.results.join('\n'));
          return [
            call.grep('not ok', { path: artifact }),
            call.read(artifact, { offset: 2000, limit: 3 }),
            call.write(artifact, 'overwritten'),
          ];
        },
      },
      {
        sees: [
          /not ok \d+ - sum of an empty list/,
          /2000\ttrace line 2000: checking calc/,
          /the session's record of command output, which no tool can change/,
        ],
        calls: [call.read('src/calc.js')],
      },
      { calls: fixEdits() },
      { calls: [call.run('npm test 2>&1 | tail -n 8')] },
      { sees: [/fail 0/], text: 'Fixed `sum` and `clamp`.' },
    ],
    expect: fixedCalc,
    verify: async (played) => {
      const first = played.model.seen[1]?.results[0] ?? '';
      // Cut: the middle lines never reached the model.
      expect(first).not.toContain('trace line 2000: checking calc');
      const handle = artifactOf(first).slice('/artifacts/'.length);
      const whole = (await played.session?.artifacts.read(handle))?.toString('utf8') ?? '';
      expect(whole).toContain('trace line 2000: checking calc');
      expect(whole).toContain('trace line 4000: checking calc');
      expect(whole).toMatch(/fail 2/);
    },
  },
  {
    id: 'claude-denied-install-then-builtin',
    checks:
      'Policy auto-edit: the model asks to `npm install --save-dev jest`; the user denies it ("no new dependencies"); the model gets the reason, does not retry the install, fixes the code with edits (which run) and asks to run `npm test`, which the user grants by prefix.',
    style: 'claude',
    project: 'node-calc',
    policy: 'auto-edit',
    turns: [
      {
        prompt: 'Fix the failing tests.',
        answers: [
          { tool: 'run_command', deny: 'no new dependencies; use the built-in runner' },
          { tool: 'run_command', grant: 'prefix:npm test' },
        ],
      },
    ],
    model: [
      { text: "I'll set up Jest to get clearer failures.", calls: [call.run('npm install --save-dev jest')] },
      {
        sees: [/denied by the user: no new dependencies; use the built-in runner/],
        text: 'Understood, no new dependencies. Reading the code instead.',
        calls: [call.read('src/calc.js'), call.read('test/calc.test.js')],
      },
      { calls: fixEdits() },
      { sees: [/Updated src\/calc\.js/], calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'Fixed with the built-in runner; no dependency added.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      const requests = played.events.filter((event) => event.kind === 'approval_request');
      expect(requests.map((event) => event.kind === 'approval_request' && event.arguments)).toEqual([
        expect.stringContaining('npm install --save-dev jest'),
        expect.stringContaining('npm test'),
      ]);
      expect(allRequestText(played)).not.toContain('"jest"');
    },
  },
  {
    id: 'gpt-new-module-with-tests',
    checks:
      'write_file creates a new module and its test file (new folders’ files show as untracked in the user’s repository), edit_file fixes the old bug, and `node --test` picks up the new test: 7 tests pass.',
    style: 'gpt',
    project: 'node-calc',
    turns: [{ prompt: 'Add a median() helper in src/stats.js with tests, and get the suite green.' }],
    model: [
      { calls: [call.read('src/calc.js'), call.read('test/calc.test.js')] },
      {
        calls: [
          call.write(
            'src/stats.js',
            "import { sum } from './calc.js';\n\n/** The middle value of a list (the mean of the two middle values for an even length). */\nexport function median(values) {\n  if (values.length === 0) return 0;\n  const sorted = [...values].sort((a, b) => a - b);\n  const middle = Math.floor(sorted.length / 2);\n  return sorted.length % 2 === 1 ? sorted[middle] : sum(sorted.slice(middle - 1, middle + 1)) / 2;\n}\n",
          ),
          call.write(
            'test/stats.test.js',
            "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { median } from '../src/stats.js';\n\ntest('median of an odd list', () => {\n  assert.equal(median([3, 1, 2]), 2);\n});\n\ntest('median of an even list', () => {\n  assert.equal(median([4, 1, 3, 2]), 2.5);\n});\n",
          ),
          ...fixEdits(),
        ],
      },
      {
        sees: [
          /Created src\/stats\.js \(\d+ lines/,
          /Created test\/stats\.test\.js/,
          /Updated src\/calc\.js/,
        ],
        calls: [call.run('npm test 2>&1 | tail -n 9')],
      },
      { sees: [/pass 7/, /fail 0/], text: 'Added `median` in `src/stats.js` with two tests; 7/7 pass.' },
    ],
    expect: {
      status: [' M src/calc.js', '?? src/stats.js', '?? test/stats.test.js'],
      contains: { 'src/stats.js': ['export function median(values)'], 'src/calc.js': [SUM_FIX, CLAMP_FIX] },
    },
  },
  {
    id: 'claude-protected-path-denied-in-full-auto',
    checks:
      'Even in full-auto a write under `.vscode/` asks (a protected path); the user denies it; the model does not retry it another way, fixes the code, and the folder has no `.vscode`.',
    style: 'claude',
    project: 'node-calc',
    turns: [
      {
        prompt: 'Fix the tests, and set up VS Code to run them on save if you can.',
        answers: [{ tool: 'write_file', deny: 'leave my editor settings alone' }],
      },
    ],
    model: [
      {
        text: 'First the editor setting.',
        calls: [call.write('.vscode/settings.json', '{ "nodejs.testOnSave": true }\n')],
      },
      {
        sees: [/denied by the user: leave my editor settings alone/],
        text: 'Skipping the editor settings. Now the code.',
        calls: [call.read('src/calc.js')],
      },
      { calls: fixEdits() },
      { calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'Tests fixed; I left `.vscode/` alone as you asked.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      const request = played.events.find((event) => event.kind === 'approval_request');
      expect(request?.kind === 'approval_request' && request.tool).toBe('write_file');
      expect(played.events.filter((event) => event.kind === 'approval_request')).toHaveLength(1);
    },
  },
];

/** The path of the whole output a cut command result names (`/artifacts/<handle>`). */
function artifactOf(result: string): string {
  const found = /the whole output is (\/artifacts\/\S+\.log): read it/.exec(result)?.[1];
  if (!found) throw new Error(`no artifact path in: ${result.slice(-300)}`);
  return found;
}
