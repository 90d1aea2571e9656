import { spawn, type ChildProcess } from 'node:child_process';
import { trackChild } from './childProcesses.js';
import { CLI_BIN, REPO_ROOT } from './cli.js';

/** A `keel` child process running asynchronously, so a server in the test process can answer it. */
export type KeelProcess = {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout (or stderr) matches, rejects when the process ends first or after 20 s. */
  waitFor: (pattern: RegExp, stream?: 'stdout' | 'stderr') => Promise<void>;
  /** Resolves when the process ends. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
};

/** Starts `node dist/cli/bin.js --home HOME ...args` without blocking the test's event loop. */
export function startKeel(home: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): KeelProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (env.KEEL_HOME === undefined) delete childEnv.KEEL_HOME;
  if (env.KEEL_CRASH_AT === undefined) delete childEnv.KEEL_CRASH_AT;
  if (env.KEEL_CRASH_KIND === undefined) delete childEnv.KEEL_CRASH_KIND;
  const child = trackChild(
    spawn(process.execPath, [CLI_BIN, '--home', home, ...args], {
      cwd: REPO_ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    for (const listener of listeners) listener();
  });
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout: out, stderr: err })));
  const waitFor = (pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout') =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(stream === 'stdout' ? out : err)) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${pattern} on ${stream}; stdout: ${out}\nstderr: ${err}`));
      }, 20_000);
      listeners.add(check);
      void done.then(() => {
        if (!listeners.has(check)) return;
        listeners.delete(check);
        clearTimeout(timer);
        if (pattern.test(stream === 'stdout' ? out : err)) resolve();
        else reject(new Error(`keel ended before ${pattern} on ${stream}; stdout: ${out}\nstderr: ${err}`));
      });
      check();
    });
  return { child, stdout: () => out, stderr: () => err, waitFor, done };
}

/** Runs `keel` to its end asynchronously. */
export async function keel(home: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return startKeel(home, args, env).done;
}
