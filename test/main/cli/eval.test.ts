import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../main/cli/program.js';
import { REPO_ROOT } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { RecordedRequest, ScriptStep } from '../../support/providerServer.js';
import { eventsOf } from '../../support/sessionFixture.js';
import { call, seenIn, TrajectoryModel, type ModelStep } from '../../trajectories/model.js';

// keel eval against the scripted provider: a tiny scripted "model" that solves some tasks and fails one, to
// prove the runner (copies, sessions, checks in the box, counts, JSON, exit codes), not a model.

const TASKS = path.join(REPO_ROOT, 'evals', 'tasks');
const prompt = (id: string) =>
  (JSON.parse(fs.readFileSync(path.join(TASKS, `${id}.json`), 'utf8')) as { prompt: string }).prompt;

/** Scripts by task: the first two solve their task, the monorepo one gives up without changing anything. */
const SCRIPTS: Record<string, ModelStep[]> = {
  'node-calc-fix-tests': [
    { calls: [call.run('npm test 2>&1 | tail -n 12')] },
    {
      sees: [/fail 2/],
      calls: [
        call.edit('src/calc.js', 'total + value);', 'total + value, 0);'),
        call.edit(
          'src/calc.js',
          'Math.max(high, Math.min(low, value))',
          'Math.max(low, Math.min(high, value))',
        ),
      ],
    },
    { text: 'Fixed sum and clamp.' },
  ],
  'py-inventory-fix-remove': [
    {
      calls: [
        call.edit(
          'inventory/stock.py',
          '        self._counts[item] = self._counts.get(item, 0) - quantity\n',
          '        if quantity > self._counts.get(item, 0):\n            raise ValueError("not enough stock")\n        self._counts[item] = self._counts.get(item, 0) - quantity\n',
        ),
      ],
    },
    { calls: [call.run('python3 -m unittest')] },
    { sees: [/\bOK\b/], text: 'Fixed remove().' },
  ],
  'monorepo-fix-packages': [{ text: 'I could not find the bug.' }],
};

/** A scripted model per task, chosen by the prompt of the user message that starts its session. */
function evalModel(scripts: Record<string, ModelStep[]> = SCRIPTS) {
  const models = new Map<string, TrajectoryModel>();
  let current: TrajectoryModel | undefined;
  return {
    models,
    respond: (request: RecordedRequest): ScriptStep => {
      const { user, results } = seenIn(request);
      if (results.length === 0 && user !== undefined) {
        const id = fs
          .readdirSync(TASKS)
          .map((name) => name.replace(/\.json$/, ''))
          .find((task) => user.includes(prompt(task)));
        if (id !== undefined) {
          current = new TrajectoryModel(scripts[id] ?? [{ text: 'I will not change anything.' }], 'gpt');
          models.set(id, current);
        }
      }
      return current ? current.respond(request) : { kind: 'reply', text: 'no task' };
    },
  };
}

let model: ReturnType<typeof evalModel>;

const fixture = useCliFixture('keel-eval-', {
  // A test may swap the model: the server asks whichever is current.
  server: { respond: (request) => model.respond(request) },
  prepare: () => {
    model = evalModel();
  },
});

const evalArgs = (extra: string[]) => [
  'eval',
  '--provider',
  'openai-compatible',
  '--base-url',
  fixture.server.openaiBaseUrl,
  '--model',
  'scripted-model',
  '--context-window',
  '32000',
  ...extra,
];

type EvalJson = {
  model: { provider: string; model: string; baseUrl?: string };
  solved: number;
  total: number;
  stopped: boolean;
  tasks: {
    id: string;
    solved: boolean;
    outcome: string;
    sessionId: string;
    turns: number;
    tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
    costUsd: number | null;
    seconds: number;
    check: { exitCode: number | null; timedOut: boolean; output: string };
  }[];
};

describe('keel eval', () => {
  it('runs each task in its own session and judges it by its check command: 2/3 solved, JSON, exit 1', async () => {
    const run = await keel(
      fixture.home,
      evalArgs([
        '--only',
        'node-calc-fix-tests',
        '--only',
        'py-inventory-fix-remove',
        '--only',
        'monorepo-fix-packages',
        '--json',
      ]),
    );
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as EvalJson;
    expect(report.model).toEqual({
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: fixture.server.openaiBaseUrl,
    });
    expect([report.solved, report.total, report.stopped]).toEqual([2, 3, false]);
    // Task files are read in name order.
    expect(report.tasks.map((task) => [task.id, task.solved, task.outcome, task.turns])).toEqual([
      ['monorepo-fix-packages', false, 'completed', 1],
      ['node-calc-fix-tests', true, 'completed', 3],
      ['py-inventory-fix-remove', true, 'completed', 3],
    ]);
    const [mono, node, py] = report.tasks;
    expect(mono?.check.exitCode).not.toBe(0);
    expect(mono?.check.output).toMatch(/fail 1/);
    expect(node?.check).toMatchObject({ exitCode: 0, timedOut: false });
    expect(node?.check.output).toMatch(/pass 5/);
    expect(py?.check.output).toMatch(/OK/);
    // Tokens are the scripted usage summed over the session's requests (prompt 1200 + 300 per step, 900 of it
    // cached after the first; 80 out): input counts the uncached part.
    expect(node?.tokens).toEqual({ input: 4500 - 1800, output: 240, cacheRead: 1800, cacheWrite: 0 });
    expect(node?.costUsd).toBeNull(); // scripted-model has no price
    for (const task of report.tasks) {
      expect(task.seconds).toBeGreaterThan(0);
      const events = eventsOf(fixture.home, task.sessionId);
      expect(events[0]).toMatchObject({ kind: 'session_created', policy: 'full-auto' });
    }
    expect(fixture.server.requests.filter((request) => request.rejected !== undefined)).toEqual([]);
    for (const [id, scripted] of model.models) {
      expect(scripted.failures, id).toEqual([]);
      expect(scripted.remaining, id).toBe(0);
    }
    // The shipped projects themselves are untouched.
    expect(fs.readFileSync(path.join(REPO_ROOT, 'evals/projects/node-calc/src/calc.js'), 'utf8')).toContain(
      'total + value);',
    );
  }, 120_000);

  it('prints a table and solved/total, with one progress line per task on a non-terminal stderr; exit 0 when all are solved', async () => {
    const run = await keel(fixture.home, evalArgs(['--only', 'py-inventory-fix-remove']));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^task\s+result\s+outcome\s+turns\s+tokens in\s+tokens out\s+cost\s+time$/m);
    expect(run.stdout).toMatch(
      /^py-inventory-fix-remove\s+solved\s+completed\s+3\s+2,700\s+240\s+unpriced\s+\d+\.\d s$/m,
    );
    expect(run.stdout).toMatch(
      /openai-compatible:scripted-model: solved 1\/1, cost partly unpriced, \d+\.\d s\n$/,
    );
    expect(run.stderr).toMatch(
      /^eval: \[1\/1\] py-inventory-fix-remove solved \(completed, 3 turns, \d+\.\d s; session \S+\)$/m,
    );
    expect(run.stderr).not.toContain('\r');
  }, 90_000);

  it('redraws one progress line with a bar on a terminal', async () => {
    let stderr = '';
    let stdout = '';
    const code = await runCli(['--home', fixture.home, ...evalArgs(['--only', 'monorepo-fix-packages'])], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: { ...process.env, KEEL_HOME: undefined },
      stderrIsTTY: true,
      readStdin: () => Promise.resolve(''),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('\r\x1b[2K[--------------------] 0/1 solved 0  monorepo-fix-packages (');
    expect(stderr).toContain('\r\x1b[2Keval: [1/1] monorepo-fix-packages FAILED (completed, 1 turns');
    expect(stdout).toContain('solved 0/1');
  }, 90_000);

  it('names the file and the field of a bad task, and a bad --tasks folder, with exit 2 before any session', async () => {
    const dir = path.join(fixture.dir, 'tasks');
    fs.mkdirSync(dir);
    const missing = await keel(fixture.home, evalArgs(['--tasks', path.join(dir, 'nope')]));
    expect([missing.code, missing.stderr]).toEqual([
      2,
      `keel: --tasks ${path.join(dir, 'nope')}: not a folder\n`,
    ]);
    const empty = await keel(fixture.home, evalArgs(['--tasks', dir]));
    expect([empty.code, empty.stderr]).toEqual([2, `keel: ${dir}: no task files (*.json) in this folder\n`]);
    const file = path.join(dir, 'a.json');
    const cases: [unknown, RegExp][] = [
      [{ project: '.', check: 'true' }, /a\.json: prompt: .*expected string/],
      [{ prompt: 'x', project: '.', check: 'true', maxSteps: 'ten' }, /a\.json: maxSteps: .*expected number/],
      [{ prompt: 'x', project: '.', check: 'true', checks: 'typo' }, /a\.json: checks: not a task field/],
      [
        { prompt: 'x', project: 'no-such-folder', check: 'true' },
        /a\.json: project: \S+no-such-folder is not a folder/,
      ],
      [{ prompt: ' ', project: '.', check: 'true' }, /a\.json: prompt: must not be empty/],
    ];
    for (const [content, message] of cases) {
      fs.writeFileSync(file, JSON.stringify(content));
      const bad = await keel(fixture.home, evalArgs(['--tasks', dir]));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(message);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
    fs.writeFileSync(file, '{ not json');
    const broken = await keel(fixture.home, evalArgs(['--tasks', dir]));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/a\.json: not valid JSON/);
    expect(fixture.server.requests).toEqual([]);
    expect(fs.existsSync(path.join(fixture.home, 'sessions'))).toBe(false);
  }, 90_000);

  it('judges by the check, not the model: deleting the failing tests is not a solution', async () => {
    const cheat = evalModel({
      'node-calc-fix-tests': [
        {
          calls: [
            call.write('test/calc.test.js', "import { test } from 'node:test';\ntest('ok', () => {});\n"),
          ],
        },
        { calls: [call.run('npm test 2>&1 | tail -n 3')] },
        { sees: [/fail 0/], text: 'All tests pass now.' },
      ],
    });
    model = cheat;
    const run = await keel(fixture.home, evalArgs(['--only', 'node-calc-fix-tests', '--json']));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as EvalJson;
    expect(report.tasks[0]).toMatchObject({ solved: false, outcome: 'completed', check: { exitCode: 1 } });
  }, 90_000);

  it('stops a session at the task timeout and at its step budget, and still runs the check', async () => {
    const dir = path.join(fixture.dir, 'budget-tasks');
    fs.mkdirSync(dir);
    const project = path.join(REPO_ROOT, 'evals', 'projects', 'node-calc');
    const task = (name: string, extra: Record<string, unknown>) =>
      fs.writeFileSync(
        path.join(dir, `${name}.json`),
        JSON.stringify({ prompt: `${name}: fix the tests`, project, check: 'npm test', ...extra }),
      );
    task('hangs', { timeoutSeconds: 2 });
    task('loops', { maxSteps: 2 });
    model = {
      models: new Map(),
      respond: (request) => {
        const { user } = seenIn(request);
        if (user?.includes('hangs:')) return { kind: 'hang' };
        return { kind: 'reply', toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] };
      },
    };
    const run = await keel(fixture.home, evalArgs(['--tasks', dir, '--json']));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as EvalJson;
    expect(report.tasks.map((t) => [t.id, t.outcome, t.solved])).toEqual([
      ['hangs', 'timed_out', false],
      ['loops', 'budget_exhausted', false],
    ]);
    expect(report.tasks[1]?.turns).toBe(2);
    for (const result of report.tasks) expect(result.check.output).toMatch(/fail 2/);
  }, 90_000);

  it('leaves every shipped task unsolved when the model changes nothing', async () => {
    model = evalModel({});
    const run = await keel(fixture.home, evalArgs(['--json']));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as EvalJson;
    expect(report.total).toBe(fs.readdirSync(TASKS).filter((name) => name.endsWith('.json')).length);
    expect(report.solved).toBe(0);
    for (const task of report.tasks) expect(task.check.exitCode, task.id).not.toBe(0);
  }, 180_000);

  it('ships its default tasks where the built CLI finds them, each naming an existing project', async () => {
    const run = await keel(fixture.home, ['eval', '--only', 'no-such-task']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`keel: --only: no task "no-such-task" in ${TASKS}\n`);
    const ids = fs.readdirSync(TASKS).filter((name) => name.endsWith('.json'));
    expect(ids.length).toBeGreaterThanOrEqual(5);
  });
});
