import { expect } from 'vitest';
import { call } from './model.js';
import type { Trajectory } from './play.js';

// Trajectories through the built CLI, as a user types them: `keel run --project DIR ...`, then `keel deny`,
// `keel approve --resume`, Ctrl-C and `keel resume`. The session works on a checkout (--commit auto).

const SUM_BUG = 'return values.reduce((total, value) => total + value);';
const SUM_FIX = 'return values.reduce((total, value) => total + value, 0);';
const CLAMP_BUG = 'return Math.max(high, Math.min(low, value));';
const CLAMP_FIX = 'return Math.max(low, Math.min(high, value));';
const fixCalc = [call.edit('src/calc.js', SUM_BUG, SUM_FIX), call.edit('src/calc.js', CLAMP_BUG, CLAMP_FIX)];
const fixedCalc = { status: [' M src/calc.js'], contains: { 'src/calc.js': [SUM_FIX, CLAMP_FIX] } };

export const cliTrajectories: Trajectory[] = [
  {
    id: 'cli-gpt-fix-node',
    checks:
      '`keel run --project DIR --provider openai-compatible --base-url URL` (as for Ollama; key from KEEL_OPENAI_COMPATIBLE_API_KEY) with a GPT-style script over chat completions: text on stdout, each call and its result on stderr (project-relative paths), the fix written into DIR when the turn ends.',
    style: 'gpt',
    wire: 'chat',
    project: 'node-calc',
    via: 'cli',
    turns: [{ prompt: 'fix the failing tests' }],
    model: [
      { calls: [call.run('npm test 2>&1 | tail -n 12')] },
      { sees: [/fail 2/], calls: [call.read('src/calc.js')] },
      { calls: fixCalc },
      { calls: [call.run('npm test 2>&1 | tail -n 12')] },
      { sees: [/fail 0/], text: 'Fixed sum and clamp; 5/5 tests pass.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      const [run] = played.cli;
      expect(run?.stdout).toContain('Fixed sum and clamp; 5/5 tests pass.');
      expect(run?.stderr).toContain('→ read_file {"path":"src/calc.js"}');
      expect(run?.stderr).toMatch(/← edit_file ok: Updated src\/calc\.js/);
    },
  },
  {
    id: 'cli-claude-fix-python',
    checks:
      '`keel run --provider anthropic --base-url URL` (key from ANTHROPIC_API_KEY): Claude-style text + tool_use on the Anthropic wire format through the CLI; python3 -m unittest inside the box; the fix lands in DIR.',
    style: 'claude',
    project: 'py-inventory',
    via: 'cli',
    turns: [{ prompt: 'python3 -m unittest fails; fix it' }],
    model: [
      {
        text: "I'll run the tests first.",
        calls: [call.run('python3 -m unittest 2>&1 | tail -n 14'), call.read('inventory/stock.py')],
      },
      {
        sees: [/FAIL: test_cannot_remove_more_than_in_stock/, /def remove/],
        calls: [
          call.edit(
            'inventory/stock.py',
            '        self._counts[item] = self._counts.get(item, 0) - quantity\n',
            '        if quantity > self._counts.get(item, 0):\n            raise ValueError("not enough stock")\n        self._counts[item] = self._counts.get(item, 0) - quantity\n',
          ),
        ],
      },
      { calls: [call.run('python3 -m unittest')] },
      { sees: [/\bOK\b/], text: '`remove` now raises ValueError when stock would go negative.' },
    ],
    expect: { status: [' M inventory/stock.py'], contains: { 'inventory/stock.py': ['not enough stock'] } },
  },
  {
    id: 'cli-denied-then-granted',
    checks:
      'Policy auto-edit through the CLI: `keel run` stops with exit 3 on `git stash`; `keel deny --reason ... --resume` gives the model the reason; it edits instead and its `npm test` stops on approval again; `keel approve --scope prefix:npm test --resume` runs it and ends with exit 0.',
    style: 'claude',
    project: 'node-calc',
    via: 'cli',
    policy: 'auto-edit',
    turns: [
      {
        prompt: 'are the failures new? fix them',
        answers: [
          { tool: 'run_command', deny: 'do not touch my stash' },
          { tool: 'run_command', grant: 'prefix:npm test' },
        ],
      },
    ],
    model: [
      { calls: [call.run('git stash && npm test; git stash pop')] },
      {
        sees: [/denied by the user: do not touch my stash/],
        text: "I won't use the stash; reading the code instead.",
        calls: [call.read('src/calc.js')],
      },
      { calls: fixCalc },
      { calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'The failures were in sum and clamp; both fixed.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      expect(played.cli.map((run) => run.code)).toEqual([3, 3, 0]);
      expect(played.cli[0]?.stderr).toMatch(/approval needed \(request \d+\): run_command .*git stash/);
    },
  },
  {
    id: 'cli-ctrl-c-then-resume',
    checks:
      'Ctrl-C while the model streams (`keel run` exits 130, the partial text recorded as interrupted), then `keel resume SESSION` continues the same turn: the request is valid, the model fixes the code and the change reaches DIR.',
    style: 'gpt',
    project: 'node-calc',
    via: 'cli',
    turns: [{ prompt: 'fix the tests please', stopWhen: 'plan:' }],
    model: [
      {
        text: 'Here is my plan: read the code, find the two failing cases, fix them one at a time, and run the tests after each change to be sure nothing else breaks.',
        delayMs: 40,
      },
      { calls: [call.read('src/calc.js')] },
      { calls: fixCalc },
      { calls: [call.run('npm test')] },
      { sees: [/fail 0/], text: 'Done.' },
    ],
    expect: fixedCalc,
    verify: (played) => {
      expect(played.cli.map((run) => run.code)).toEqual([130, 0]);
      expect(played.events.some((event) => event.kind === 'interrupted')).toBe(true);
    },
  },
];
