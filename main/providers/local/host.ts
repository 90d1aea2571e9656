import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ProviderError } from '../errors.js';
import {
  FromWorker,
  type GenerateRequest,
  type LocalMachine,
  type LocalModelSettings,
  type ToWorker,
} from './protocol.js';
import os from 'node:os';

/** A running model process as the host sees it, whatever launched it. */
export type WorkerHandle = {
  readonly pid: number | undefined;
  send(message: ToWorker): void;
  onMessage(handler: (message: unknown) => void): void;
  /** Called once when the process ends, with a sentence saying how (exit code or signal, its last stderr). */
  onExit(handler: (how: string) => void): void;
  kill(): void;
  /**
   * Whether the process keeps this one alive: held while a load or a request is in flight, let go when idle, so
   * a CLI command ends when its work does (the idle worker follows: it exits when its channel disconnects).
   */
  hold?(busy: boolean): void;
};

/** Starts the worker script: `fork` in the CLI and tests, Electron's `utilityProcess.fork` in the app. */
export type WorkerLauncher = (script: string) => WorkerHandle;

/** The worker script beside this file (dist/ or out/): a source checkout run by a test passes its own. */
export function defaultWorkerScript(): string {
  return fileURLToPath(new URL('./worker.js', import.meta.url));
}

/** A Node child process with an IPC channel; its stderr's tail explains a crash. */
export const forkLauncher: WorkerLauncher = (script) => {
  const child = fork(script, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-2000);
  });
  return {
    pid: child.pid,
    send: (message) => {
      if (child.connected) child.send(message);
    },
    onMessage: (handler) => child.on('message', handler),
    onExit: (handler) =>
      child.once('exit', (code, signal) => {
        const last = tail.trim().split('\n').slice(-3).join(' | ');
        handler(`${signal ? `killed by ${signal}` : `exit code ${code ?? '?'}`}${last ? `: ${last}` : ''}`);
      }),
    kill: () => child.kill('SIGKILL'),
    hold: (busy) => {
      // The stderr pipe is a socket of its own: it too would keep this process alive.
      const pipe = child.stderr as (NodeJS.ReadableStream & { ref?: () => void; unref?: () => void }) | null;
      if (busy) {
        child.ref();
        child.channel?.ref();
        pipe?.ref?.();
      } else {
        child.unref();
        child.channel?.unref();
        pipe?.unref?.();
      }
    },
  };
};

/** Hashes already computed in this process, by path, size and modification time (a 5 GB file takes seconds). */
const hashed = new Map<string, string>();

/** The file's SHA-256, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Refuses a model file that is gone or is not the one the session was pinned to. */
async function checkPinnedHash(path: string, expected: string): Promise<void> {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) {
    throw new ProviderError(
      'not_found',
      `the pinned model file ${path} is gone: pull it again (keel models local pull)`,
    );
  }
  const key = `${path}\0${stat.size}\0${stat.mtimeMs}`;
  const actual = hashed.get(key) ?? (await sha256File(path));
  hashed.set(key, actual);
  if (actual !== expected) {
    throw new ProviderError(
      'bad_request',
      `the model file ${path} changed since this session was pinned (sha256 ${actual.slice(0, 12)}…, pinned ${expected.slice(0, 12)}…): restore it or switch the session's model`,
    );
  }
}

let launcher: WorkerLauncher = forkLauncher;
let script: string | undefined;

/** The app sets its utility-process launcher (and the bundled worker's path) at startup. */
export function setLocalWorkerLauncher(next: WorkerLauncher, workerScript?: string): void {
  launcher = next;
  script = workerScript;
}

export type LoadedModel = Extract<FromWorker, { type: 'loaded' }>;
type Listener = (message: FromWorker) => void;

/**
 * One model process for one file and settings. Started at the first request; when it dies, every request in
 * flight fails with a retryable `server` error and the next request starts a new process (the session goes on).
 */
export class LocalModelHost {
  private worker: WorkerHandle | undefined;
  private loaded: Promise<LoadedModel> | undefined;
  private readonly listeners = new Map<
    number,
    { listener: Listener; fail: (error: ProviderError) => void }
  >();
  private nextId = 1;

  constructor(
    readonly settings: LocalModelSettings,
    private readonly options: { launcher?: WorkerLauncher; script?: string } = {},
  ) {}

  get pid(): number | undefined {
    return this.worker?.pid;
  }

  /** Holds the process while it loads or answers; lets it go when idle (see `WorkerHandle.hold`). */
  private holdWhileBusy(): void {
    this.worker?.hold?.(this.starting || this.listeners.size > 0);
  }

  private starting = false;

  /** Starts the process and loads the model, once; a failed load is forgotten so a later request tries again. */
  ready(): Promise<LoadedModel> {
    this.loaded ??= this.start().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async start(): Promise<LoadedModel> {
    if (this.settings.sha256) await checkPinnedHash(this.settings.path, this.settings.sha256);
    return this.launch();
  }

  private launch(): Promise<LoadedModel> {
    const path = this.options.script ?? script ?? defaultWorkerScript();
    if (!existsSync(path)) {
      return Promise.reject(
        new ProviderError('server', `the local model worker is missing (${path}): build Keel`),
      );
    }
    const worker = (this.options.launcher ?? launcher)(path);
    this.worker = worker;
    this.starting = true;
    this.holdWhileBusy();
    return new Promise<LoadedModel>((resolve, reject) => {
      let settled = false;
      const loadEnded = (): void => {
        settled = true;
        this.starting = false;
        this.holdWhileBusy();
      };
      worker.onMessage((raw) => {
        const parsed = FromWorker.safeParse(raw);
        if (!parsed.success) return;
        const message = parsed.data;
        if (message.type === 'loaded') {
          loadEnded();
          resolve(message);
        } else if (message.type === 'load_failed') {
          loadEnded();
          reject(new ProviderError('server', `could not load ${this.settings.path}: ${message.message}`));
          worker.kill();
        } else if (message.type !== 'machine') this.listeners.get(message.id)?.listener(message);
      });
      worker.onExit((how) => {
        if (this.worker === worker) {
          this.worker = undefined;
          this.loaded = undefined;
          this.starting = false;
        }
        const error = new ProviderError('server', `the local model process stopped (${how})`, true);
        if (!settled) reject(error);
        for (const { fail } of this.listeners.values()) fail(error);
        this.listeners.clear();
      });
      worker.send({ type: 'load', settings: this.settings });
    });
  }

  /**
   * Sends one request; `listener` gets its messages until `done` or `failed`, `fail` a crash. Returns the
   * request's id, for `abort`.
   */
  generate(
    request: Omit<GenerateRequest, 'type' | 'id'>,
    listener: Listener,
    fail: (error: ProviderError) => void,
  ): number {
    const id = this.nextId++;
    const worker = this.worker;
    if (!worker) {
      fail(new ProviderError('server', 'the local model process is not running', true));
      return id;
    }
    this.listeners.set(id, {
      listener: (message) => {
        if (message.type === 'done' || message.type === 'failed') {
          this.listeners.delete(id);
          this.holdWhileBusy();
        }
        listener(message);
      },
      fail,
    });
    this.holdWhileBusy();
    worker.send({ type: 'generate', id, ...request });
    return id;
  }

  /** Stops a generation at once (the worker checks the signal between tokens). */
  abort(id: number): void {
    this.listeners.delete(id);
    this.worker?.send({ type: 'abort', id });
    this.holdWhileBusy();
  }

  /** Ends the process (tests, app quit). */
  kill(): void {
    this.worker?.kill();
  }
}

const hosts = new Map<string, LocalModelHost>();

/** The shared process for a file and settings: sessions on the same model share it, each with its own sequence. */
export function localModelHost(
  settings: LocalModelSettings,
  options: { launcher?: WorkerLauncher; script?: string } = {},
): LocalModelHost {
  const key = JSON.stringify([settings, options.script ?? '']);
  let host = hosts.get(key);
  if (!host) {
    host = new LocalModelHost(settings, options);
    hosts.set(key, host);
  }
  return host;
}

/** Ends every model process (the app's quit, a test file's end). */
export function stopLocalModels(): void {
  for (const host of hosts.values()) host.kill();
  hosts.clear();
}

/**
 * What this machine offers a local model (GPU backend, devices, VRAM, RAM), asked of a short-lived model process
 * so the caller never loads llama.cpp itself (a crash there is the worker's). Never throws: a runtime that cannot
 * load, or a process that dies or does not answer in time, is a CPU-only machine with the `problem` said.
 */
export async function detectLocalMachine(
  options: { script?: string; timeoutMs?: number } = {},
): Promise<LocalMachine> {
  const cpuOnly = (problem: string): LocalMachine => ({
    gpu: false,
    gpuNames: [],
    vramBytes: 0,
    vramFreeBytes: 0,
    unifiedBytes: 0,
    ramBytes: os.totalmem(),
    problem,
  });
  const worker = launcher(options.script ?? script ?? defaultWorkerScript());
  try {
    return await new Promise<LocalMachine>((resolve) => {
      const timer = setTimeout(
        () => resolve(cpuOnly('the model runtime did not answer in time')),
        options.timeoutMs ?? 60_000,
      );
      worker.onMessage((raw) => {
        const parsed = FromWorker.safeParse(raw);
        if (parsed.success && parsed.data.type === 'machine') {
          clearTimeout(timer);
          resolve(parsed.data.machine);
        }
      });
      worker.onExit((how) => {
        clearTimeout(timer);
        resolve(cpuOnly(`the model runtime stopped (${how})`));
      });
      worker.send({ type: 'detect' });
    });
  } finally {
    worker.kill();
  }
}
