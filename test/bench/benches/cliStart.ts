import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI_BIN, ensureCliBuilt, REPO_ROOT } from '../../support/cli.js';
import { ProviderServer } from '../../support/providerServer.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/**
 * Runs the built CLI once, asynchronously (a scripted provider in this process can answer it): when it was
 * spawned (performance.now()) and its wall ms; a run that does not exit 0 throws with its stderr.
 */
export async function runKeelTimed(
  args: readonly string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ startedAt: number; ms: number }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env.KEEL_HOME;
  delete env.KEEL_DEBUG;
  const startedAt = performance.now();
  const child = spawn(process.execPath, [CLI_BIN, ...args], { cwd: REPO_ROOT, env, stdio: 'pipe' });
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const ms = performance.now() - startedAt;
  if (code !== 0) throw new Error(`keel ${args.join(' ')} exited ${code}: ${stderr.trim()}`);
  return { startedAt, ms };
}

const timeKeel = async (args: readonly string[]): Promise<number> => (await runKeelTimed(args)).ms;

/**
 * What a `keel` command costs before it does its job, the price of every command a person types and of each of
 * the test suite's hundreds of spawns: the wall time of `node dist/cli/bin.js` (the bundled CLI) for `--help`, `sessions` on
 * an empty home, and one `run` turn (a new session, a text reply from the scripted OpenAI-compatible server),
 * spawned one after another, median of `cliStartRuns`.
 */
export const cliStartBench: Bench = {
  name: 'cli-start',
  title: 'CLI start-up: keel --help, keel sessions on an empty home, one keel run turn',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    await ensureCliBuilt();
    const dir = scratch.dir('cli-start');
    const server = await new ProviderServer().start();
    const runs = sizes.cliStartRuns;
    const help: number[] = [];
    const list: number[] = [];
    const turn: number[] = [];
    try {
      const emptyHome = join(dir, 'empty-home');
      const turnHome = join(dir, 'turn-home');
      const project = join(dir, 'project');
      mkdirSync(project, { recursive: true });
      // One untimed run of each warms the page cache (the first spawn after a build reads every file cold).
      const turnArgs = [
        '--home',
        turnHome,
        'run',
        '--project',
        project,
        '--provider',
        'openai-compatible',
        '--base-url',
        server.openaiBaseUrl,
        '--model',
        'scripted-model',
        '--context-window',
        '32000',
        '--policy',
        'read-only',
        'say hello',
      ];
      await timeKeel(['--help']);
      await timeKeel(['--home', emptyHome, 'sessions']);
      await timeKeel(turnArgs);
      for (let run = 0; run < runs; run += 1) {
        help.push(await timeKeel(['--help']));
        list.push(await timeKeel(['--home', emptyHome, 'sessions']));
        turn.push(await timeKeel(turnArgs));
        progress(`cli-start: ${run + 1}/${runs}`);
      }
    } finally {
      await server.close();
      scratch.remove(dir);
    }
    return {
      name: this.name,
      title: this.title,
      params: { runs, node: process.version },
      metrics: [
        makeMetric('keel --help (median wall)', 'ms', 'lower', { keel: round(median(help), 1) }),
        makeMetric('keel sessions, empty home (median wall)', 'ms', 'lower', {
          keel: round(median(list), 1),
        }),
        makeMetric('keel run, one turn, new session (median wall)', 'ms', 'lower', {
          keel: round(median(turn), 1),
        }),
      ],
      notes: [
        `Spawned one after another, ${runs} of each, after one untimed warm-up each; wall time from spawn to exit.`,
        `The turn: a new session on an empty project, one text reply from the scripted OpenAI-compatible server; every run adds a session to the same home.`,
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
