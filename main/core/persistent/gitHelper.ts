// Starting a process forks Keel's own, and the fork blocks Keel's event loop for a time that grows with Keel's
// memory (measured on the 2-core VM: 1 ms at 45 MB RSS, 8 ms at 145 MB, 26 ms at 345 MB; the app's main process
// is the large one). So buffered git calls (`runGit`) are started by a small helper process instead: one Node
// process per Keel process, started at the first call, that spawns each git exactly as asked (file, argv,
// folder, environment: git.ts builds them; no shell) and sends back its exit and output. Keel then pays a
// message each way. Calls made while it boots start git themselves (helperReady). Not in the app's Electron
// process (helperUsable). See README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** One git run, as git.ts would spawn it. */
export type HelperRun = {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  input: string | Buffer;
  timeoutMs?: number;
};

/** How it ended: git's exit (code, or the signal a timeout sent) and output, or why it could not start. */
export type HelperResult =
  { code: number | null; signal: string | null; stdout: Buffer; stderr: Buffer } | { startError: string };

/**
 * The helper's whole program (run with `node -e`, so nothing is packaged apart: the app's bundle and the CLI's
 * dist both carry it). It ends when Keel's end of the channel closes (Keel exited or was killed).
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
process.on('disconnect', () => process.exit(0));
process.on('message', (run) => {
  let done = false;
  const answer = (message) => {
    if (done) return;
    done = true;
    if (process.connected) process.send({ id: run.id, ...message });
  };
  let child;
  try {
    child = spawn(run.file, run.args, {
      cwd: run.cwd,
      env: run.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(run.timeoutMs === undefined ? {} : { timeout: run.timeoutMs }),
    });
  } catch (error) {
    answer({ startError: String(error && error.message) });
    return;
  }
  const out = [];
  const err = [];
  child.stdout.on('data', (chunk) => out.push(chunk));
  child.stderr.on('data', (chunk) => err.push(chunk));
  child.on('error', (error) => answer({ startError: error.message }));
  child.on('close', (code, signal) =>
    answer({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
  );
  child.stdin.on('error', () => undefined);
  child.stdin.end(run.input);
});
process.send({ ready: true });
`;

/**
 * Whether this process can start the helper: plain Node (the CLI, `keel serve`, tests, the bench). The app's
 * Electron binary has its RunAsNode fuse off (electron-builder.yml), so it could only start another app:
 * there git.ts starts each git itself, as before.
 */
export function helperUsable(): boolean {
  return process.versions['electron'] === undefined;
}

type Pending = { resolve: (result: HelperResult) => void };

let helper: ChildProcess | undefined;
/** The helper once it said it is listening (it takes ~70 ms to start: Node's own boot). */
let ready: ChildProcess | undefined;
const waitingForReady: ((ok: boolean) => void)[] = [];
const pending = new Map<number, Pending>();
let nextId = 1;

/**
 * Whether a started helper is listening. Until then git.ts starts git itself (early in a process's life its
 * memory, and so the fork, is small), so no call waits for the helper's boot.
 */
export function helperReady(): boolean {
  return ready !== undefined && ready === helper && ready.connected;
}

/** Starts the helper in the background when none runs (it holds no process open while it boots). */
export function startHelper(): void {
  helperProcess();
  holdOpen();
}

/** Resolves when the helper is listening (true) or ended first (false); starts it when needed (for tests). */
export function whenHelperReady(): Promise<boolean> {
  startHelper();
  if (helperReady()) return Promise.resolve(true);
  return new Promise((resolve) => waitingForReady.push(resolve));
}

function settleReadyWaits(ok: boolean): void {
  for (const resolve of waitingForReady.splice(0)) resolve(ok);
}

/** The running helper, started when there is none (or the last one ended). */
function helperProcess(): ChildProcess {
  if (helper !== undefined && helper.connected) return helper;
  const started = spawn(process.execPath, ['-e', HELPER_SOURCE], {
    // Nothing of Keel's environment matters to the helper (each git gets the environment git.ts built for it);
    // NODE_OPTIONS could make it load code before its program.
    env: { ...process.env, NODE_OPTIONS: '' },
    // A folder that stays: Keel's own working folder may be removed while it runs.
    cwd: path.parse(process.execPath).root,
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    serialization: 'advanced',
  });
  helper = started;
  started.on('message', (message: ({ id: number } & HelperResult) | { ready: true }) => {
    if ('ready' in message) {
      if (helper === started) ready = started;
      settleReadyWaits(helper === started);
      return;
    }
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    holdOpen();
    if ('startError' in message) waiting.resolve({ startError: String(message.startError) });
    else
      waiting.resolve({
        code: message.code,
        signal: message.signal,
        stdout: asBuffer(message.stdout),
        stderr: asBuffer(message.stderr),
      });
  });
  const ended = () => {
    if (helper === started) helper = undefined;
    if (ready === started) ready = undefined;
    settleReadyWaits(false);
    // What was asked of it has no answer: each call fails as a git that could not be run, never silently.
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.resolve({ startError: 'the git helper process ended' });
    }
  };
  started.on('exit', ended);
  started.on('error', ended);
  started.on('disconnect', ended);
  return started;
}

/** The channel's copy of a Buffer may arrive as a plain Uint8Array: the same bytes, viewed as a Buffer. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The helper keeps Keel's process alive only while a call waits on it (an idle CLI exits as before). */
function holdOpen(): void {
  const running = helper;
  if (running === undefined) return;
  if (pending.size > 0) {
    running.ref();
    running.channel?.ref();
  } else {
    running.unref();
    running.channel?.unref();
  }
}

/** Runs one git through the helper; resolves with how it ended (never rejects). */
export function runInHelper(run: HelperRun): Promise<HelperResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = helperProcess();
    } catch (error) {
      resolve({ startError: error instanceof Error ? error.message : String(error) });
      return;
    }
    const id = nextId++;
    pending.set(id, { resolve });
    holdOpen();
    const message = {
      id,
      file: run.file,
      args: [...run.args],
      cwd: run.cwd,
      env: run.env,
      input: run.input,
      ...(run.timeoutMs === undefined ? {} : { timeoutMs: run.timeoutMs }),
    };
    try {
      child.send(message, (error) => {
        if (!error || !pending.has(id)) return;
        pending.delete(id);
        holdOpen();
        resolve({ startError: `the git helper process could not be asked: ${error.message}` });
      });
    } catch (error) {
      pending.delete(id);
      holdOpen();
      resolve({ startError: error instanceof Error ? error.message : String(error) });
    }
  });
}
