import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { IPty } from 'node-pty';
import { z } from 'zod';
import { NetworkPolicy, type SandboxInfo, type SandboxKind } from '../sandbox/box.js';
import { createRedactor, type Redactor } from '../sandbox/redact.js';
import { admitBoxedRun, BoxMounts, mountsOf } from './admit.js';
import { prepareBoxLaunch } from './boxLaunch.js';
import type { RunCgroup } from './cgroup.js';
import { createFlowControl, type FlowControl } from './flow.js';
import { signalNameOf } from './processNames.js';
import { killRunTree } from './processTree.js';
import { loadPty } from './pty.js';
import { DEFAULT_MEMORY_MB, DEFAULT_PIDS_MAX } from './boxedCommand.js';

/**
 * Quiet time after which the redactor's held-back tail is released. Much shorter than a command run's:
 * a person is waiting for the echo of each key. Output that arrives in one burst is still checked whole.
 */
const INTERACTIVE_FLUSH_MS = 8;
/** Output kept for the first listener when none is attached yet (the prompt, a banner). */
const EARLY_OUTPUT_CHARS = 256 * 1024;

/** The data half of openInteractiveTerminal's options, checked at the boundary. */
export const InteractiveTerminalInput = z.object({
  /** The session's checkout: the shell starts here and may write only here (and in `writable`). */
  workspace: z.string().min(1),
  cwd: z.string().min(1).optional(),
  /** No network (default), or only allowlisted hosts through Keel's proxy, as for commands. */
  network: NetworkPolicy.optional(),
  cols: z.number().int().min(2).max(1000).optional(),
  rows: z.number().int().min(2).max(1000).optional(),
  /** Extra environment, layered on the allowlisted child environment. */
  env: z.record(z.string(), z.string()).optional(),
  ...BoxMounts.shape,
  memoryMb: z.number().int().min(16).optional(),
  pidsMax: z.number().int().min(8).optional(),
  useCgroup: z.boolean().optional(),
  /** Must be true to open a shell without an OS sandbox: the user approved exactly that. */
  unconfinedApproved: z.boolean().optional(),
  /**
   * Ack-based flow control (see ./flow.ts): true for the default watermarks. The consumer must then call
   * `ack(chunk.length)` for every chunk it rendered, or the shell's output stalls.
   */
  flowControl: z
    .union([
      z.boolean(),
      z.object({
        highWatermarkChars: z.number().int().positive().optional(),
        lowWatermarkChars: z.number().int().positive().optional(),
      }),
    ])
    .optional(),
});

/** Options of openInteractiveTerminal. */
export type InteractiveTerminalOptions = z.input<typeof InteractiveTerminalInput> & {
  /** From `detectSandbox()`. `kind: 'none'` is refused unless `unconfinedApproved`. */
  sandbox: SandboxInfo;
  /** The session's redactor (it knows Keel's own keys); default: one built from the workspace and env. */
  redactor?: Redactor;
};

/** How an interactive terminal ended. */
export interface TerminalExit {
  exitCode: number | null;
  signal: string | null;
  /** True when `kill()` (or killAllInteractiveTerminals) ended it. */
  killed: boolean;
}

/** A user's shell in the box. Output is redacted; it never reaches the model or the log. */
export interface InteractiveTerminal {
  /** Unique per terminal: names it in IPC messages. */
  readonly id: string;
  readonly sandbox: SandboxKind;
  /** Sends keystrokes (or pasted text) to the shell. */
  write(data: string): void;
  /** Resizes the pty (the shell gets SIGWINCH). Sizes outside 2..1000 are clamped. */
  resize(cols: number, rows: number): void;
  /** Subscribes to redacted output (colours kept, never split inside a character); returns an unsubscribe. */
  onData(listener: (chunk: string) => void): () => void;
  /** Subscribes to the end of the shell (called at once if it already ended); returns an unsubscribe. */
  onExit(listener: (exit: TerminalExit) => void): () => void;
  /** With flow control: the consumer rendered `chars` more characters. A no-op otherwise. */
  ack(chars: number): void;
  /** Kills the shell and every process it started (background jobs and setsid escapees too). */
  kill(): Promise<TerminalExit>;
  /** Resolves when the shell has ended and its box is cleaned up. */
  readonly exited: Promise<TerminalExit>;
}

/** Errors that mean no terminal was opened (bad options, no sandbox and no approval). */
export class InteractiveTerminalError extends Error {
  override readonly name = 'InteractiveTerminalError';
}

const open = new Map<string, InteractiveTerminal>();
let exitHookInstalled = false;

/** Kills every interactive terminal of this process (session end, app quit); resolves once all are gone. */
export async function killAllInteractiveTerminals(): Promise<void> {
  await Promise.all([...open.values()].map((terminal) => terminal.kill()));
}

/**
 * Opens a login-less interactive bash in a pty inside the same box as commands: the workspace (and
 * `writable`) writable, the rest read-only, the real home hidden, no network unless allowlisted (through
 * the allowlist proxy), cgroup limits where available. It is the user's terminal, never the model's. One
 * difference from commands: the shell keeps the pty as its controlling terminal (bwrap without
 * --new-session) so job control and Ctrl-C work; the pty belongs to this box alone, so keystrokes injected
 * with TIOCSTI can only reach the box's own shell. Rejects with InteractiveTerminalError when nothing started.
 */
export async function openInteractiveTerminal(
  options: InteractiveTerminalOptions,
): Promise<InteractiveTerminal> {
  const sandbox = options.sandbox;
  const { input, workspace, cwd } = admitBoxedRun(InteractiveTerminalInput, options, sandbox, {
    what: 'terminal',
    unconfined: 'a terminal would run unconfined, which needs your explicit approval.',
    fail: (message) => new InteractiveTerminalError(message),
  });
  const { spawn } = await loadPty();
  const id = randomUUID();
  let launch: Awaited<ReturnType<typeof prepareBoxLaunch>> | null = null;
  let pty: IPty;
  try {
    launch = await prepareBoxLaunch({
      kind: 'terminal',
      runId: id,
      sandbox,
      command: () => 'exec bash --noprofile --norc -i',
      workspace,
      cwd,
      ...mountsOf(input),
      network: input.network ?? 'none',
      limits:
        input.useCgroup === false
          ? null
          : { pidsMax: input.pidsMax ?? DEFAULT_PIDS_MAX, memoryMb: input.memoryMb ?? DEFAULT_MEMORY_MB },
      env: { PS1: '\\w \\$ ', ...(input.env ?? {}), TERM: 'xterm-256color' },
      // Link 1 only (./lifeline.ts): the shell keeps bwrap's init for job control, and the pty's hangup ends
      // it when Keel's master end closes.
      lifeline: false,
      controllingTerminal: true,
    });
    const [file, ...args] = launch.argv;
    if (file === undefined) throw new InteractiveTerminalError('Nothing to run.');
    try {
      pty = spawn(file, args, {
        name: 'xterm-256color',
        cols: input.cols ?? 120,
        rows: input.rows ?? 30,
        cwd,
        env: launch.env,
        encoding: null,
      });
    } catch (error) {
      throw new InteractiveTerminalError(`Could not start the terminal: ${(error as Error).message}`);
    }
  } catch (error) {
    await launch?.close();
    if (error instanceof InteractiveTerminalError) throw error;
    throw new InteractiveTerminalError(`Could not open the terminal: ${(error as Error).message}`);
  }
  const { cgroup } = launch;
  const box = launch;
  const cleanup = (): Promise<void> => box.close();

  const redactor =
    options.redactor ?? createRedactor({ workspaceRoot: workspace, env: { ...process.env, ...input.env } });
  const terminal = attach({
    id,
    pty,
    sandbox: sandbox.kind,
    redactor,
    cgroup,
    cleanup,
    flow:
      input.flowControl === undefined || input.flowControl === false
        ? undefined
        : createFlowControl(input.flowControl === true ? {} : input.flowControl),
  });
  return terminal;
}

interface AttachOptions {
  id: string;
  pty: IPty;
  sandbox: SandboxKind;
  redactor: Redactor;
  cgroup: RunCgroup | null;
  cleanup: () => Promise<void>;
  flow: FlowControl | undefined;
}

function attach(options: AttachOptions): InteractiveTerminal {
  const { id, pty, cgroup } = options;
  const decoder = new StringDecoder('utf8');
  const stream = options.redactor.stream();
  const dataListeners = new Set<(chunk: string) => void>();
  const exitListeners = new Set<(exit: TerminalExit) => void>();
  const early: string[] = [];
  let earlyChars = 0;
  let ended: TerminalExit | undefined;
  let killed = false;

  const publish = (chunk: string): void => {
    if (dataListeners.size === 0) {
      // Nobody listens yet (the UI subscribes right after open): keep the prompt for the first listener.
      early.push(chunk);
      earlyChars += chunk.length;
      while (earlyChars > EARLY_OUTPUT_CHARS && early.length > 1) earlyChars -= early.shift()?.length ?? 0;
      return;
    }
    for (const listener of dataListeners) listener(chunk);
  };
  const flow = options.flow;
  if (flow) flow.bind({ pause: () => pty.pause(), resume: () => pty.resume() });
  const emit = (text: string): void => {
    if (text.length === 0) return;
    if (flow) flow.deliver(text);
    publish(text);
  };
  let idleTimer: NodeJS.Timeout | undefined;
  pty.onData((data: string | Buffer) => {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    emit(stream.push(decoder.write(chunk)));
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => emit(stream.flush()), INTERACTIVE_FLUSH_MS);
  });

  const kill: { done: Promise<number> | null } = { done: null };
  const killTree = (): Promise<number> =>
    (kill.done ??= killRunTree(pty.pid, id, { extraPids: () => cgroup?.members() ?? [] }));

  const exited = new Promise<TerminalExit>((resolve) => {
    pty.onExit(({ exitCode, signal }) => {
      void (async () => {
        open.delete(id);
        // The shell is gone; its background jobs and escapees go with it.
        await kill.done;
        await killRunTree(pty.pid, id, { extraPids: () => cgroup?.members() ?? [], rootExited: true });
        clearTimeout(idleTimer);
        emit(stream.push(decoder.end()));
        emit(stream.end());
        flow?.release();
        await options.cleanup();
        const signalName = signal !== undefined && signal > 0 ? signalNameOf(signal) : null;
        ended = killed
          ? { exitCode: null, signal: signalName ?? 'SIGKILL', killed: true }
          : { exitCode: signalName === null ? exitCode : null, signal: signalName, killed: false };
        for (const listener of exitListeners) listener(ended);
        exitListeners.clear();
        resolve(ended);
      })();
    });
  });

  const terminal: InteractiveTerminal = {
    id,
    sandbox: options.sandbox,
    exited,
    write(data) {
      if (ended !== undefined || data.length === 0) return;
      pty.write(data);
    },
    resize(cols, rows) {
      if (ended !== undefined) return;
      pty.resize(clamp(cols), clamp(rows));
    },
    onData(listener) {
      dataListeners.add(listener);
      if (dataListeners.size === 1 && early.length > 0) {
        for (const chunk of early.splice(0)) listener(chunk);
        earlyChars = 0;
      }
      return () => dataListeners.delete(listener);
    },
    onExit(listener) {
      if (ended !== undefined) listener(ended);
      else exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
    ack(chars) {
      flow?.ack(chars);
    },
    async kill() {
      if (ended === undefined) {
        killed = true;
        flow?.release();
        await killTree();
      }
      return exited;
    },
  };
  open.set(id, terminal);
  installExitHook();
  return terminal;
}

function clamp(size: number): number {
  return Math.min(1000, Math.max(2, Math.round(Number.isFinite(size) ? size : 2)));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when Keel exits: the launcher's death signal and bwrap's cover boxed shells; this the rest.
  process.once('exit', () => {
    for (const terminal of open.values()) void terminal.kill();
  });
}
