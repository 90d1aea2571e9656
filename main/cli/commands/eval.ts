import type { Command } from 'commander';
import { createHarness, detectSandbox } from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { runEvalTask, type EvalTaskResult } from '../eval/runner.js';
import { defaultTasksDir, loadTasks, type EvalTask } from '../eval/tasks.js';
import { modelPinFromFlags, type ModelFlags } from './run.js';

type EvalOptions = ModelFlags & {
  tasks?: string;
  only?: string[];
  json?: boolean;
  maxSteps?: number;
  timeout?: number;
  keep?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `keel eval [--provider P --model M --base-url URL] [--tasks DIR] [--json]`: runs every task (a prompt, a
 * project, a check command) against a real model, one full-auto session per task inside the box, and
 * prints solved/total with turns, tokens, cost and time per task. Exit 0 when every task was solved, 1
 * otherwise, 2 for bad input.
 */
export function registerEval(program: Command, context: CliContext): void {
  program
    .command('eval')
    .description(
      "measure a model on Keel's task suite (or your own): one full-auto session per task, then its check",
    )
    .option('--provider <provider>', 'anthropic | openai | openai-compatible (default: settings.json)')
    .option('--model <model>', 'model id (default: settings.json)')
    .option('--base-url <url>', 'provider base URL, e.g. http://localhost:11434/v1 for Ollama')
    .option('--context-window <tokens>', 'context window of a model Keel does not know', parsePositiveInteger)
    .option('--tasks <dir>', 'a folder of task files (*.json); default: the tasks shipped with Keel')
    .option('--only <id>', 'run only this task (repeatable)', collect)
    .option(
      '--max-steps <n>',
      'model requests per task when the task sets none (default 30)',
      parsePositiveInteger,
    )
    .option(
      '--timeout <seconds>',
      'seconds per task when the task sets none (default 600)',
      parsePositiveInteger,
    )
    .option('--keep', "keep each task's project folder (printed) instead of removing it")
    .option('--json', 'print one JSON document with every result')
    .action(async (options: EvalOptions) => {
      const dir = options.tasks ?? defaultTasksDir();
      let tasks = loadTasks(dir);
      if (options.only !== undefined) {
        const unknown = options.only.filter((id) => !tasks.some((task) => task.id === id));
        if (unknown.length > 0) throw new CliError(`--only: no task "${unknown.join('", "')}" in ${dir}`);
        tasks = tasks.filter((task) => options.only?.includes(task.id));
      }
      const sandbox = await detectSandbox();
      if (sandbox.kind === 'none') {
        throw new CliError(
          'keel eval runs each task in full-auto inside the OS sandbox, and this machine has none working' +
            (sandbox.reason ? ` (${sandbox.reason})` : ''),
          ExitCode.failure,
        );
      }
      const pin = await modelPinFromFlags(context, options);
      const harness = createHarness({ home: context.home(), env: context.io.env });
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.on('SIGINT', onSigint);
      const progress = createProgress(context, tasks);
      const results: EvalTaskResult[] = [];
      try {
        for (const [index, task] of tasks.entries()) {
          if (controller.signal.aborted) break;
          progress.start(index, task);
          const result = await runEvalTask(
            {
              harness,
              pin,
              sandbox,
              maxSteps: options.maxSteps ?? 30,
              timeoutSeconds: options.timeout ?? 600,
              keep: options.keep === true,
              signal: controller.signal,
            },
            task,
          );
          results.push(result);
          progress.done(index, result);
        }
      } finally {
        process.off('SIGINT', onSigint);
        progress.end();
      }
      const solved = results.filter((result) => result.solved).length;
      if (options.json) {
        context.io.stdout(
          `${JSON.stringify({
            model: {
              provider: pin.provider,
              model: pin.model,
              ...(pin.baseUrl ? { baseUrl: pin.baseUrl } : {}),
            },
            tasksDir: dir,
            solved,
            total: tasks.length,
            stopped: controller.signal.aborted,
            tasks: results,
          })}\n`,
        );
      } else {
        context.io.stdout(formatResults(results, tasks.length, `${pin.provider}:${pin.model}`));
      }
      if (controller.signal.aborted) context.setExitCode(ExitCode.interrupted);
      else context.setExitCode(solved === tasks.length ? ExitCode.ok : ExitCode.failure);
    });
}

const seconds = (value: number) => `${value.toFixed(1)} s`;
const money = (value: number | null) => (value === null ? 'unpriced' : `$${value.toFixed(4)}`);

/** The results table and the solved line. */
function formatResults(results: readonly EvalTaskResult[], total: number, model: string): string {
  const rows = [
    ['task', 'result', 'outcome', 'turns', 'tokens in', 'tokens out', 'cost', 'time'],
    ...results.map((result) => [
      result.id,
      result.solved ? 'solved' : 'FAILED',
      result.outcome,
      String(result.turns),
      result.tokens.input.toLocaleString('en-US'),
      result.tokens.output.toLocaleString('en-US'),
      money(result.costUsd),
      seconds(result.seconds),
    ]),
  ];
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  const solved = results.filter((result) => result.solved).length;
  const costs = results.map((result) => result.costUsd);
  const cost = costs.some((value) => value === null)
    ? 'cost partly unpriced'
    : money(costs.reduce<number>((sum, value) => sum + (value ?? 0), 0));
  const time = seconds(results.reduce((sum, result) => sum + result.seconds, 0));
  return `${lines.join('\n')}\n\n${model}: solved ${solved}/${total}, ${cost}, ${time}\n`;
}

/**
 * Progress on stderr: on a terminal one line redrawn in place (a bar, the task, its elapsed time); otherwise one
 * line per finished task, so logs stay readable.
 */
function createProgress(context: CliContext, tasks: readonly EvalTask[]) {
  const { stderr } = context.io;
  const tty = context.io.stderrIsTTY === true;
  const total = tasks.length;
  let solved = 0;
  let timer: NodeJS.Timeout | undefined;
  const bar = (done: number) => {
    const width = 20;
    const filled = Math.round((done / total) * width);
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  };
  const clear = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  return {
    start(index: number, task: EvalTask) {
      if (!tty) return;
      const began = Date.now();
      const draw = () =>
        stderr(
          `\r\x1b[2K${bar(index)} ${index}/${total} solved ${solved}  ${task.id} (${Math.round((Date.now() - began) / 1000)} s)`,
        );
      draw();
      clear();
      timer = setInterval(draw, 1000);
      timer.unref();
    },
    done(index: number, result: EvalTaskResult) {
      clear();
      if (result.solved) solved += 1;
      const line = `eval: [${index + 1}/${total}] ${result.id} ${result.solved ? 'solved' : 'FAILED'} (${result.outcome}, ${result.turns} turns, ${seconds(result.seconds)}; session ${result.sessionId})`;
      stderr(tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
    },
    end() {
      clear();
      if (tty) stderr(`\r\x1b[2K`);
    },
  };
}
