import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelPin } from '../../common/events.js';
import {
  type Harness,
  newSessionId,
  readOnlyPathsFor,
  readTraceSummary,
  runCommand,
  runGit,
  type SandboxInfo,
  streamHarness,
} from '../../core/harness/index.js';
import type { EvalTask } from './tasks.js';

/*
 * Runs one keel eval task: the project copied to a temp folder (a git repository, as a user's would be), one
 * session on it in full-auto (inside the box) with a step budget and a timeout, then the task's check command
 * in the box in that folder. The session stays in the home (keel show / keel trace name it).
 */

/** The check command's limit, whatever the session's timeout. */
const CHECK_TIMEOUT_MS = 5 * 60_000;
/** How much of the check's output a result keeps (its tail). */
const CHECK_OUTPUT_CHARS = 2000;

/** What one task came to. */
export type EvalTaskResult = {
  id: string;
  solved: boolean;
  /** How the session's turn ended: completed, budget_exhausted, timed_out, failed, awaiting_approval, … */
  outcome: string;
  /** Why the turn failed, when it did. */
  error?: string;
  sessionId: string;
  /** Model requests answered. */
  turns: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** USD at list prices; null when the model has no price in Keel's catalogue. */
  costUsd: number | null;
  /** Wall-clock seconds of the session and the check. */
  seconds: number;
  check: { exitCode: number | null; timedOut: boolean; output: string };
  /** The task's project folder after the session, when --keep kept it. */
  folder?: string;
};

/** What every task of one run shares. */
export type EvalRun = {
  harness: Harness;
  pin: ModelPin;
  sandbox: SandboxInfo;
  /** Defaults for tasks that set none. */
  maxSteps: number;
  timeoutSeconds: number;
  /** Keep the task folders (printed in the results) instead of removing them. */
  keep: boolean;
  /** Aborted when the user presses Ctrl-C: the running session stops, no further task starts. */
  signal: AbortSignal;
};

/** Copies the task's project and makes it a git repository with one commit unless it is one already. */
async function prepareProject(task: EvalTask, into: string): Promise<string> {
  const project = path.join(into, task.id);
  fs.cpSync(task.projectDir, project, { recursive: true });
  if (!fs.existsSync(path.join(project, '.git'))) {
    // Through Keel's one git spawner (hooks, fsmonitor and system config off), as every git Keel runs.
    const side = { cwd: project, env: {} };
    const identity = ['-c', 'user.name=keel eval', '-c', 'user.email=eval@keel.invalid'];
    try {
      await runGit(side, ['-c', 'init.defaultBranch=main', 'init', '-q']);
      await runGit(side, ['add', '-A']);
      await runGit(side, [...identity, 'commit', '-qm', 'task start']);
    } catch {
      // Without git the session still works on a private copy; with it, the model sees a user's repository.
    }
  }
  return fs.realpathSync(project);
}

/** Runs one task to its result; never throws for the model's or the check's failures. */
export async function runEvalTask(run: EvalRun, task: EvalTask): Promise<EvalTaskResult> {
  const started = Date.now();
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-eval-')));
  try {
    const project = await prepareProject(task, work);
    const { id } = await run.harness.sessions.getOrCreate({
      id: newSessionId(),
      title: `eval ${task.id}`,
      metadata: { eval: { task: task.id, file: task.file } },
      create: {
        model: run.pin,
        persistentDirs: { project: { path: project, commit: 'auto' } },
        policy: 'full-auto',
        toolMode: 'write',
        networkAllow: [],
      },
    });
    const timeoutMs = (task.timeoutSeconds ?? run.timeoutSeconds) * 1000;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onUserStop = () => controller.abort();
    run.signal.addEventListener('abort', onUserStop);
    let outcome: string;
    let error: string | undefined;
    try {
      const stream = streamHarness({
        harness: run.harness,
        session: id,
        messages: [{ role: 'user', content: task.prompt }],
        signal: controller.signal,
        maxSteps: task.maxSteps ?? run.maxSteps,
      });
      const result = await stream.result;
      outcome = timedOut ? 'timed_out' : result.outcome.status;
      if (result.outcome.status === 'failed') error = result.outcome.error;
    } catch (thrown) {
      outcome = 'failed';
      error = thrown instanceof Error ? thrown.message : String(thrown);
    } finally {
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onUserStop);
    }
    // The turn's changes were committed into the copy when it stopped: the check judges that folder.
    const check = await runCheck(run, task, project, work);
    const trace = readTraceSummary(run.harness.home, id);
    const totals = trace.totals;
    return {
      id: task.id,
      solved: check.exitCode === 0 && !check.timedOut,
      outcome,
      ...(error !== undefined ? { error } : {}),
      sessionId: id,
      turns: trace.turns.reduce((sum, turn) => sum + turn.requests, 0),
      tokens: {
        input: totals.inputTokens,
        output: totals.outputTokens,
        cacheRead: totals.cacheReadTokens,
        cacheWrite: totals.cacheWriteTokens,
      },
      costUsd: totals.costKnown ? totals.costUsd : null,
      seconds: (Date.now() - started) / 1000,
      check,
      ...(run.keep ? { folder: project } : {}),
    };
  } finally {
    if (!run.keep) fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The task's check command, in the box, in the project folder, without network. */
async function runCheck(
  run: EvalRun,
  task: EvalTask,
  project: string,
  work: string,
): Promise<EvalTaskResult['check']> {
  const result = await runCommand({
    command: task.check,
    workspace: project,
    cwd: project,
    timeoutMs: CHECK_TIMEOUT_MS,
    sandbox: run.sandbox,
    network: 'none',
    readOnly: readOnlyPathsFor(project),
    artifactPath: path.join(work, `check-${task.id}.log`),
  });
  // The excerpt is the model's view of output: ANSI-free, head and tail.
  const output = result.excerpt;
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    output: output.length > CHECK_OUTPUT_CHARS ? output.slice(-CHECK_OUTPUT_CHARS) : output,
  };
}
