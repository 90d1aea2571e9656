import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { call } from './model.js';
import type { Trajectory } from './play.js';

// Trajectories on evals/projects/py-inventory: `python3 -m unittest` fails because remove() lets stock go negative.

const REMOVE_BUG = '        self._counts[item] = self._counts.get(item, 0) - quantity\n';
const REMOVE_FIX = [
  '        available = self._counts.get(item, 0)',
  '        if quantity > available:',
  '            raise ValueError(f"only {available} {item} in stock")',
  '        self._counts[item] = available - quantity',
  '',
].join('\n');
const fixRemove = (file = 'inventory/stock.py') => call.edit(file, REMOVE_BUG, REMOVE_FIX);

const fixedStock = {
  status: [' M inventory/stock.py'],
  contains: { 'inventory/stock.py': ['if quantity > available:'] },
};

export const pyInventoryTrajectories: Trajectory[] = [
  {
    id: 'gpt-unittest-grep-offset-limit',
    checks:
      'GPT style over chat completions (a local OpenAI-compatible server) on a Python project: `python3 -m unittest` fails; grep finds `def remove` as path:line; read_file with offset and limit shows just that method (numbered from the offset); one edit; the tests pass.',
    style: 'gpt',
    wire: 'chat',
    project: 'py-inventory',
    turns: [{ prompt: 'python3 -m unittest is failing, can you fix it?' }],
    model: [
      { calls: [call.run('python3 -m unittest 2>&1 | tail -n 15')] },
      {
        sees: [/FAIL: test_cannot_remove_more_than_in_stock/, /AssertionError: ValueError not raised/],
        calls: [call.grep('def remove', { path: 'inventory' })],
      },
      {
        sees: [/inventory\/stock\.py:16:/],
        calls: [call.read('inventory/stock.py', { offset: 16, limit: 3 })],
      },
      {
        sees: [/^\s*16\D[^\n]*def remove/m, /- quantity/],
        calls: [fixRemove()],
      },
      { sees: [/Updated inventory\/stock\.py \(\+4 -1 lines\)/], calls: [call.run('python3 -m unittest')] },
      { sees: [/Ran 3 tests/, /\bOK\b/], text: '`remove` now refuses to take more than is in stock.' },
    ],
    expect: fixedStock,
    verify: (played) => {
      const read = played.model.seen[3]?.results[0] ?? '';
      expect(read).not.toMatch(/def add/);
    },
  },
  {
    id: 'claude-session-upload-and-scratch',
    checks:
      'The host stages `/session/uploads/orders.csv`; the model reads it by that path, keeps notes in `/session/scratch/plan.md`, writes a new test from the CSV in the project, fixes the bug; the project diff holds only the project files, the session area keeps the notes.',
    style: 'claude',
    project: 'py-inventory',
    stage: { '/session/uploads/orders.csv': 'item,quantity\napple,5\napple,-2\n' },
    turns: [
      {
        prompt:
          'Add a test replaying the orders in the uploaded CSV (negative = removal), then fix the failing test.',
      },
    ],
    model: [
      {
        sees: [/file staged: \/session\/uploads\/orders\.csv/],
        calls: [call.read('/session/uploads/orders.csv'), call.read('tests/test_stock.py', { limit: 12 })],
      },
      {
        sees: [/apple,-2/, /class InventoryTest/],
        calls: [
          call.write(
            '/session/scratch/plan.md',
            '- replay orders.csv in tests/test_orders.py\n- fix remove()\n',
          ),
        ],
      },
      {
        sees: [/Created \/session\/scratch\/plan\.md/],
        calls: [
          call.write(
            'tests/test_orders.py',
            [
              'import unittest',
              '',
              'from inventory import Inventory',
              '',
              'ORDERS = [("apple", 5), ("apple", -2)]',
              '',
              '',
              'class OrdersTest(unittest.TestCase):',
              '    def test_replay_orders(self):',
              '        stock = Inventory()',
              '        for item, quantity in ORDERS:',
              '            if quantity > 0:',
              '                stock.add(item, quantity)',
              '            else:',
              '                stock.remove(item, -quantity)',
              '        self.assertEqual(stock.count("apple"), 3)',
              '',
            ].join('\n'),
          ),
          call.read('inventory/stock.py'),
        ],
      },
      { sees: [/Created tests\/test_orders\.py/, /def remove/], calls: [fixRemove()] },
      { calls: [call.run('python3 -m unittest -v 2>&1 | tail -n 5')] },
      { sees: [/Ran 4 tests/, /\bOK\b/], text: 'Added `tests/test_orders.py` and fixed `remove`.' },
    ],
    expect: {
      status: [' M inventory/stock.py', '?? tests/test_orders.py'],
      contains: { 'tests/test_orders.py': ['ORDERS = [("apple", 5), ("apple", -2)]'] },
    },
    verify: (played) => {
      const dataDir = played.session?.dataDir as string;
      expect(
        fs.readFileSync(path.join(dataDir, 'workspace', 'session', 'scratch', 'plan.md'), 'utf8'),
      ).toContain('replay orders.csv');
      expect(fs.existsSync(path.join(played.project, 'session'))).toBe(false);
    },
  },
  {
    id: 'claude-stopped-mid-stream-then-resumed',
    checks:
      'The user presses Stop while the model is still explaining (an interrupted turn with its partial text); later the turn is resumed: the next request carries the partial text, is valid, and the model finishes the fix.',
    style: 'claude',
    project: 'py-inventory',
    turns: [{ prompt: 'Fix the failing unit test.', stopWhen: 'carefully' }],
    model: [
      {
        text: 'I will read the failing test and the stock module carefully before changing anything, because the bug could be in either place and I want to be sure.',
        delayMs: 40,
      },
      { calls: [call.read('inventory/stock.py')] },
      { sees: [/def remove/], calls: [fixRemove()] },
      { calls: [call.run('python3 -m unittest')] },
      { sees: [/\bOK\b/], text: 'Fixed.' },
    ],
    expect: fixedStock,
    verify: (played) => {
      expect(played.outcomes).toEqual(['interrupted', 'completed']);
      const interrupted = played.events.find((event) => event.kind === 'interrupted');
      expect(interrupted?.kind === 'interrupted' && interrupted.content).toMatch(
        /^I will read the failing test and the stock module carefully/,
      );
      const resumed = played.server.requests[1]?.body as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(resumed.messages)).toContain('the stock module carefully');
    },
  },
  {
    id: 'gpt-two-turns-question-then-feature',
    checks:
      'Two user turns: a question answered from reads, then a feature request; the second turn’s requests carry the first turn’s conversation; write_file creates a test module, edit_file adds the method; the new and old tests pass.',
    style: 'gpt',
    project: 'py-inventory',
    turns: [
      { prompt: 'What does the Inventory class keep track of?' },
      {
        prompt:
          'Add total_value() (sum of count * unit price, in cents) with a test, and fix the failing test too.',
      },
    ],
    model: [
      { calls: [call.read('inventory/stock.py')] },
      { sees: [/_prices/], text: 'It keeps a count and a unit price (in cents) per item.' },
      {
        sees: [/Add total_value\(\)/],
        calls: [
          call.edit(
            'inventory/stock.py',
            '    def items(self):\n',
            '    def total_value(self):\n        """The value of the stock in cents."""\n        return sum(count * self._prices.get(item, 0) for item, count in self._counts.items())\n\n    def items(self):\n',
          ),
          fixRemove(),
        ],
      },
      {
        calls: [
          call.write(
            'tests/test_value.py',
            'import unittest\n\nfrom inventory import Inventory\n\n\nclass ValueTest(unittest.TestCase):\n    def test_total_value(self):\n        stock = Inventory()\n        stock.add("apple", 3, price=50)\n        stock.add("pear", 2, price=120)\n        self.assertEqual(stock.total_value(), 390)\n',
          ),
        ],
      },
      { calls: [call.run('python3 -m unittest')] },
      {
        sees: [/Ran 4 tests/, /\bOK\b/],
        text: 'Added `total_value()` with `tests/test_value.py`; all 4 tests pass.',
      },
    ],
    expect: {
      status: [' M inventory/stock.py', '?? tests/test_value.py'],
      contains: { 'inventory/stock.py': ['def total_value(self):', 'if quantity > available:'] },
    },
    verify: (played) => {
      const text = played.server.requests[2]?.raw ?? '';
      expect(text).toContain('What does the Inventory class keep track of?');
      expect(text).toContain('It keeps a count and a unit price');
    },
  },
  {
    id: 'claude-glob-list-and-persistent-project-path',
    checks:
      'Exploration as Claude does it: glob `**/*.py`, list_dir `.` with depth; the edit names the file as `/persistent/project/inventory/stock.py` (the session API’s name for the project), which is the project root; the result shows it project-relative.',
    style: 'claude',
    project: 'py-inventory',
    turns: [{ prompt: 'Make remove() refuse to go below zero.' }],
    model: [
      { calls: [call.glob('**/*.py'), { tool: 'list_dir', args: { path: '.', depth: 1 } }] },
      {
        sees: [/inventory\/stock\.py/, /tests\/test_stock\.py/, /README\.md/],
        calls: [call.read('/persistent/project/inventory/stock.py')],
      },
      { sees: [/def remove/], calls: [fixRemove('/persistent/project/inventory/stock.py')] },
      { sees: [/Updated inventory\/stock\.py/], calls: [call.run('python3 -m unittest 2>&1 | tail -n 3')] },
      { sees: [/\bOK\b/], text: 'Done: `remove` raises `ValueError` when asked for more than is in stock.' },
    ],
    expect: fixedStock,
  },
];
