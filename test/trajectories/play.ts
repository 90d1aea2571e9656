import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { ApprovalScope, Policy, SessionEvent } from '../../main/common/events.js';
import { recordDecision } from '../../main/core/approvals/decide.js';
import { createHarness, type LocalHarnessSession } from '../../main/core/harness/harness.js';
import { withWritableSession } from '../../main/core/harness/lock.js';
import { streamHarness } from '../../main/core/harness/stream.js';
import type { HarnessStreamPart } from '../../main/core/harness/types.js';
import type { TurnOutcome } from '../../main/core/turn/engine.js';
import { REPO_ROOT } from '../support/cli.js';
import { keel, startKeel } from '../support/keelProcess.js';
import {
  ProviderServer,
  validateAnthropicRequest,
  validateOpenAIRequest,
} from '../support/providerServer.js';
import { validateResponsesRequest } from '../support/responsesServer.js';
import { eventsOf } from '../support/sessionFixture.js';
import { TrajectoryModel, type ModelStep } from './model.js';

/*
 * Plays a trajectory: its project copied to a temp folder and made a git repository (as a user's would be),
 * a scripted provider speaking the style's wire format (Claude: Anthropic messages; GPT: OpenAI chat
 * completions), the real harness (the session API's streamHarness, or the built CLI), then the checks every
 * trajectory shares: every request valid, the script used up, the expected diff, the project's own tests.
 */

/** The projects of the suite, shared with `keel eval`'s default tasks. */
export const PROJECTS_DIR = path.join(REPO_ROOT, 'evals', 'projects');

/** A person's answer to an approval request. */
export type Answer = { tool: string } & ({ grant: ApprovalScope } | { deny: string });

/** One user turn of a trajectory. */
export type UserTurn = {
  prompt: string;
  /** Answers to the approval requests of this turn, in order. */
  answers?: Answer[];
  /** The user presses Stop once the streamed text contains this; then the turn is resumed. */
  stopWhen?: string;
};

/** What the project folder must hold when the session is over. */
export type ExpectedDiff = {
  /** `git status --porcelain` of the project folder, sorted (e.g. ` M src/calc.js`, `?? test/x.test.js`). */
  status: string[];
  /** Text each named file must contain afterwards. */
  contains?: Record<string, string[]>;
  /** Text each named file must no longer contain. */
  lacks?: Record<string, string[]>;
};

/** One real-shaped transcript and what it proves. */
export type Trajectory = {
  id: string;
  /** What the trajectory checks, in a sentence or two (listed in README.md). */
  checks: string;
  style: 'claude' | 'gpt';
  /**
   * GPT style only: `chat` plays it over OpenAI chat completions as an OpenAI-compatible server (Ollama, LM
   * Studio, vLLM) serves it; default the Responses API of OpenAI's own endpoint.
   */
  wire?: 'chat';
  project: 'node-calc' | 'py-inventory' | 'monorepo';
  /** Default full-auto. */
  policy?: Policy;
  /** `api`: the session API (streamHarness); `cli`: the built `keel run` (default api). */
  via?: 'api' | 'cli';
  /** Files the host stages into the session before the first turn (`/session/...` → text). */
  stage?: Record<string, string>;
  turns: UserTurn[];
  model: ModelStep[];
  expect: ExpectedDiff;
  /** Extra checks on what was played. */
  verify?: (played: Played) => void | Promise<void>;
};

/** What a played trajectory leaves to check. */
export type Played = {
  project: string;
  home: string;
  sessionId: string;
  server: ProviderServer;
  model: TrajectoryModel;
  events: SessionEvent[];
  outcomes: TurnOutcome['status'][];
  /** The session handle (api trajectories). */
  session?: LocalHarnessSession;
  /** Text each CLI run printed to stdout / stderr, in order (cli trajectories). */
  cli: { code: number | null; stdout: string; stderr: string }[];
};

/** The command that runs each project's own tests. */
export const PROJECT_TESTS: Record<Trajectory['project'], string> = {
  'node-calc': 'npm test',
  'py-inventory': 'python3 -m unittest',
  monorepo: 'npm test',
};

const KEY = 'sk-trajectory-0123456789';
const PATH_IN_BOX = '/usr/local/bin:/usr/bin:/bin';

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
  );
}

/** Copies a suite project into `dest` and commits it as a user's repository. */
export function copyProject(name: string, dest: string): string {
  fs.cpSync(path.join(PROJECTS_DIR, name), dest, { recursive: true });
  git(dest, 'init', '-q');
  git(dest, 'add', '-A');
  git(dest, 'commit', '-qm', 'initial');
  return dest;
}

/** Runs a project's tests outside Keel; the exit status and the output. */
export function runProjectTests(project: string, command: string): { status: number | null; output: string } {
  const result = spawnSync('bash', ['-c', command], {
    cwd: project,
    encoding: 'utf8',
    env: { PATH: PATH_IN_BOX, HOME: os.tmpdir(), npm_config_update_notifier: 'false' },
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `git status --porcelain` of the project, sorted, without the files the tests leave behind. */
export function statusOf(project: string): string[] {
  return git(project, 'status', '--porcelain', '--untracked-files=all')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .sort();
}

function pinOf(trajectory: Trajectory, server: ProviderServer) {
  if (trajectory.style === 'claude') {
    return { provider: 'anthropic' as const, model: 'scripted-claude', baseUrl: server.anthropicBaseUrl };
  }
  return trajectory.wire === 'chat'
    ? { provider: 'openai-compatible' as const, model: 'scripted-local', baseUrl: server.openaiBaseUrl }
    : { provider: 'openai' as const, model: 'scripted-gpt', baseUrl: server.openaiBaseUrl };
}

/** The key variable of the trajectory's provider (the server wants a key from every client). */
function keyEnv(trajectory: Trajectory): Record<string, string> {
  if (trajectory.style === 'claude') return { ANTHROPIC_API_KEY: KEY };
  return trajectory.wire === 'chat' ? { KEEL_OPENAI_COMPATIBLE_API_KEY: KEY } : { OPENAI_API_KEY: KEY };
}

/** The wire format the trajectory's requests must be in. */
const formatOf = (trajectory: Trajectory) =>
  trajectory.style === 'claude' ? 'anthropic' : trajectory.wire === 'chat' ? 'openai' : 'responses';

/** Plays a trajectory through the session API or the CLI, then makes the shared checks. */
export async function play(trajectory: Trajectory): Promise<Played> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `keel-traj-${trajectory.id}-`)));
  const project = copyProject(trajectory.project, path.join(dir, 'project'));
  const testCommand = PROJECT_TESTS[trajectory.project];
  // The project starts broken: the trajectory's work is what makes its tests pass.
  expect(runProjectTests(project, testCommand).status, 'the project tests fail before').not.toBe(0);
  const model = new TrajectoryModel(trajectory.model, trajectory.style);
  const server = await new ProviderServer({ apiKey: KEY, respond: model.respond }).start();
  const home = path.join(dir, 'home');
  try {
    const played =
      trajectory.via === 'cli'
        ? await playCli(trajectory, { dir, home, project, server, model })
        : await playApi(trajectory, { dir, home, project, server, model });
    checkShared(trajectory, played, testCommand);
    await trajectory.verify?.(played);
    return played;
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

type Setup = { dir: string; home: string; project: string; server: ProviderServer; model: TrajectoryModel };

async function playApi(trajectory: Trajectory, setup: Setup): Promise<Played> {
  const { home, project, server, model } = setup;
  const harness = createHarness({
    home,
    model: { ...pinOf(trajectory, server), contextWindow: 200_000 },
    persistentDirs: { project },
    policy: trajectory.policy ?? 'full-auto',
    env: {
      PATH: PATH_IN_BOX,
      ...keyEnv(trajectory),
    },
  });
  const session = (await harness.sessions.getOrCreate({ id: trajectory.id })) as LocalHarnessSession;
  for (const [file, text] of Object.entries(trajectory.stage ?? {})) {
    await session.files.write(file, text, { mediaType: 'text/plain', source: 'trajectory' });
  }
  const outcomes: TurnOutcome['status'][] = [];
  for (const turn of trajectory.turns) {
    const answers = [...(turn.answers ?? [])];
    let messages = [{ role: 'user' as const, content: turn.prompt }];
    let stopWhen = turn.stopWhen;
    for (;;) {
      const controller = new AbortController();
      let streamed = '';
      const watch = stopWhen;
      const onPart = (part: HarnessStreamPart) => {
        if (part.type !== 'text' || watch === undefined) return;
        streamed += part.text;
        if (streamed.includes(watch)) controller.abort();
      };
      const stream = streamHarness({ harness, session, messages, signal: controller.signal, onPart });
      const { outcome } = await stream.result;
      outcomes.push(outcome.status);
      messages = [];
      if (outcome.status === 'completed') break;
      if (outcome.status === 'interrupted' && watch !== undefined) {
        stopWhen = undefined; // Resumed later: the same session, no new message.
        continue;
      }
      if (outcome.status === 'awaiting_approval') {
        const answer = answers.shift();
        const pending = outcome.pending[0];
        expect(answer, `an answer for the approval of ${pending?.tool}`).toBeDefined();
        expect(pending?.tool).toBe(answer?.tool);
        await answerApproval(home, trajectory.id, answer as Answer);
        continue;
      }
      throw new Error(`turn ended ${JSON.stringify(outcome)}; model failures: ${model.failures.join('\n')}`);
    }
    expect(answers, 'every scripted approval answer was used').toEqual([]);
  }
  return {
    project,
    home,
    sessionId: trajectory.id,
    server,
    model,
    events: eventsOf(home, trajectory.id),
    outcomes,
    session,
    cli: [],
  };
}

async function answerApproval(home: string, sessionId: string, answer: Answer): Promise<void> {
  await withWritableSession(home, sessionId, (log) => {
    const result = recordDecision(
      log,
      'grant' in answer
        ? { decision: 'grant', scope: answer.grant }
        : { decision: 'deny', reason: answer.deny },
    );
    if (!result.ok) throw new Error(result.message);
    return Promise.resolve();
  });
}

async function playCli(trajectory: Trajectory, setup: Setup): Promise<Played> {
  const { home, project, server, model } = setup;
  const pin = pinOf(trajectory, server);
  const env = {
    PATH: PATH_IN_BOX,
    ...keyEnv(trajectory),
  };
  const cli: Played['cli'] = [];
  const outcomes: TurnOutcome['status'][] = [];
  let sessionId: string | undefined;
  const statusOfCode = (code: number | null): TurnOutcome['status'] =>
    code === 0 ? 'completed' : code === 3 ? 'awaiting_approval' : code === 130 ? 'interrupted' : 'failed';
  for (const [index, turn] of trajectory.turns.entries()) {
    const answers = [...(turn.answers ?? [])];
    const args =
      sessionId === undefined
        ? [
            'run',
            '--project',
            project,
            '--provider',
            pin.provider,
            '--base-url',
            pin.baseUrl,
            '--model',
            pin.model,
            '--context-window',
            '200000',
            '--policy',
            trajectory.policy ?? 'full-auto',
            turn.prompt,
          ]
        : ['run', '--session', sessionId, turn.prompt];
    let run: Played['cli'][number];
    if (turn.stopWhen !== undefined) {
      const running = startKeel(home, args, env);
      await running.waitFor(new RegExp(turn.stopWhen.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      running.child.kill('SIGINT');
      run = await running.done;
    } else {
      run = await keel(home, args, env);
    }
    for (;;) {
      cli.push(run);
      outcomes.push(statusOfCode(run.code));
      sessionId ??= /keel: session (\S+)/.exec(run.stderr)?.[1];
      expect(sessionId, `turn ${index + 1}: keel run named its session; stderr: ${run.stderr}`).toBeDefined();
      const id = sessionId as string;
      if (run.code === 0) break;
      if (run.code === 130) {
        run = await keel(home, ['resume', id], env);
        continue;
      }
      if (run.code === 3) {
        const answer = answers.shift();
        expect(answer, `an answer for: ${run.stderr}`).toBeDefined();
        expect(run.stderr).toContain(`approval needed (request`);
        expect(run.stderr).toContain(`): ${answer?.tool} `);
        const decision =
          answer && 'grant' in answer
            ? ['approve', id, '--scope', answer.grant, '--resume']
            : ['deny', id, '--reason', (answer as { deny: string }).deny, '--resume'];
        run = await keel(home, decision, env);
        continue;
      }
      throw new Error(`keel exited ${run.code}: ${run.stderr}\nmodel failures: ${model.failures.join('\n')}`);
    }
    expect(answers, 'every scripted approval answer was used').toEqual([]);
  }
  const id = sessionId as string;
  return { project, home, sessionId: id, server, model, events: eventsOf(home, id), outcomes, cli };
}

/** The checks every trajectory makes once it is played. */
function checkShared(trajectory: Trajectory, played: Played, testCommand: string): void {
  const { server, model, project } = played;
  expect(model.failures, 'the model saw what it expected at every step').toEqual([]);
  expect(model.remaining, 'the whole script was played').toBe(0);
  // Every request the server got is one the real provider would take.
  expect(server.requests.filter((r) => r.rejected !== undefined).map((r) => r.rejected)).toEqual([]);
  const validate = {
    openai: validateOpenAIRequest,
    anthropic: validateAnthropicRequest,
    responses: validateResponsesRequest,
  };
  for (const request of server.requests) {
    expect(validate[request.format](request.body)).toBeNull();
    // Claude models speak Anthropic messages; OpenAI's own endpoint is the Responses API.
    expect(request.format).toBe(formatOf(trajectory));
  }
  expect(server.requests.length).toBe(trajectory.model.length);
  expect(played.events.filter((event) => event.kind === 'error')).toEqual([]);
  // The diff in the user's folder.
  expect(statusOf(project)).toEqual([...trajectory.expect.status].sort());
  for (const [file, texts] of Object.entries(trajectory.expect.contains ?? {})) {
    const text = fs.readFileSync(path.join(project, file), 'utf8');
    for (const wanted of texts) expect(text, file).toContain(wanted);
  }
  for (const [file, texts] of Object.entries(trajectory.expect.lacks ?? {})) {
    const text = fs.readFileSync(path.join(project, file), 'utf8');
    for (const unwanted of texts) expect(text, file).not.toContain(unwanted);
  }
  // The project's own tests, run outside Keel.
  const tests = runProjectTests(project, testCommand);
  expect(tests.status, tests.output).toBe(0);
}

/** The raw bodies of every request, joined (for "the request carried X" checks). */
export const allRequestText = (played: Played) => played.server.requests.map((r) => r.raw).join('\n');

/** The first request's raw body. */
export const firstRequest = (played: Played) => played.server.requests[0]?.raw ?? '';
