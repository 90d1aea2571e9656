import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { IPty } from 'node-pty';
import { z } from 'zod';
import { NetworkPolicy, type NetworkJoin, type SandboxInfo, type SandboxKind } from '../sandbox/box.js';
import { createRedactor, type RedactionStream } from '../sandbox/redact.js';
import { admitBoxedRun, BoxMounts, mountsOf } from './admit.js';
import { prepareBoxLaunch } from './boxLaunch.js';
import { forgetBox, recordBox } from './boxRecords.js';
import type { RunCgroup } from './cgroup.js';
import { createExcerptCollector } from './excerpt.js';
import { createExitMarkerScanner, wrapWithExitMarker } from './exitMarker.js';
import type { FlowControl } from './flow.js';
import { signalNameOf } from './processNames.js';
import { killRunTree } from './processTree.js';
import { loadPty } from './pty.js';

/** Default wall-clock limit of one command. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** No command may ask for more than this; larger values are clamped. */
export const MAX_TIMEOUT_MS = 30 * 60_000;
/** Default memory cap of one command (cgroup memory limit, else RLIMIT_AS). */
export const DEFAULT_MEMORY_MB = 4096;
/** Default cap on processes (and threads) of one command, when a pids cgroup can be created. */
export const DEFAULT_PIDS_MAX = 2048;
/** Default excerpt size: this many bytes of head and of tail. */
export const DEFAULT_EXCERPT_BYTES = 8 * 1024;

/** The data half of runCommand's options, checked at the boundary. */
export const RunCommandInput = z.object({
  command: z.string().min(1, 'the command is empty'),
  workspace: z.string().min(1),
  /** Working directory, inside the workspace or a writable path; defaults to the workspace. */
  cwd: z.string().min(1).optional(),
  /** Extra environment for the command, layered on the allowlisted child environment. */
  env: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().positive().optional(),
  memoryMb: z.number().int().min(16).optional(),
  pidsMax: z.number().int().min(8).optional(),
  /** Where the whole (redacted) output is written. */
  artifactPath: z.string().min(1),
  /** The handle named in the excerpt's omission line; defaults to the artifact path. */
  artifactHandle: z.string().min(1).optional(),
  idempotencyKey: z.string().min(1).optional(),
  network: NetworkPolicy.optional(),
  ...BoxMounts.shape,
  cols: z.number().int().min(20).max(1000).optional(),
  rows: z.number().int().min(5).max(1000).optional(),
  excerptHeadBytes: z.number().int().positive().optional(),
  excerptTailBytes: z.number().int().positive().optional(),
  /** false skips the run cgroup (memory then falls back to RLIMIT_AS); for comparisons and tests. */
  useCgroup: z.boolean().optional(),
  /** Must be true to run without an OS sandbox: the user approved this very command. */
  unconfinedApproved: z.boolean().optional(),
  /**
   * Where the box is recorded while it runs (the session's `boxes/` folder), so a later Keel can end it
   * after a crash before it settles the call (`endLeftoverBoxes` in ./boxRecords.js).
   */
  recordDir: z.string().min(1).optional(),
});

/** Options of one command run. */
export type RunCommandOptions = z.input<typeof RunCommandInput> & {
  /** From `detectSandbox()`. With `kind: 'none'` the run is refused unless `unconfinedApproved`. */
  sandbox: SandboxInfo;
  /** Live, redacted output (with colours) for the terminal view; never split inside a UTF-8 character. */
  onData?: (text: string) => void;
  /**
   * Ack-based flow control of the live view (`createFlowControl` in ./flow.js): every live chunk is also
   * delivered through it, and the pty is paused while its consumer is behind. Without it, as before.
   */
  flow?: FlowControl;
  /**
   * Aborting kills the whole process tree; the promise still resolves with what was captured
   * (`aborted: true`). A UI "Kill" button maps to this, or to `runningCommand(artifactPath).abort()`.
   */
  signal?: AbortSignal;
  /**
   * bwrap: the box joins this network namespace (a session's running background command's) instead of a new
   * one, so it reaches that command's servers on localhost (issue #32; see NetworkJoin).
   */
  joinNetwork?: NetworkJoin;
  /** Called once the box's launcher is spawned: its pid and the run's id (a background command finds its box by them). */
  onStart?: (started: { pid: number; runId: string }) => void;
};

/** A command while it runs, found by its artifact path (unique per session and call). */
export interface RunningCommand {
  /** Kills the command's whole tree exactly as aborting `signal` does; the run resolves with `aborted: true`. */
  abort(): void;
  /** Flow-controls the live output from now on (delivered uncounted before); returns a detach function. */
  attachFlow(flow: FlowControl): () => void;
}

/** What happened to one command. Every field is filled whether it exited, timed out or was killed. */
export interface RunCommandResult {
  /** Exit code, or null when the command was killed by a signal. */
  exitCode: number | null;
  /** Signal name (e.g. `SIGKILL`) when killed, else null. */
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** Best effort: the kernel OOM-killed it (cgroup), or it failed with an out-of-memory message under RLIMIT_AS. */
  killedForMemory: boolean;
  durationMs: number;
  /** Path of the artifact holding the whole redacted output. */
  artifact: string;
  /** Bounded, ANSI-free view for the model (head + tail + omission line). */
  excerpt: string;
  /** Bytes of (redacted) output, i.e. the artifact's size. */
  bytes: number;
  /** True when the excerpt leaves something out. */
  truncated: boolean;
  sandbox: SandboxKind;
  /** How limits were enforced for this run. */
  limits: { memory: 'cgroup' | 'rlimit' | 'none'; pids: 'cgroup' | 'none'; timeoutMs: number };
  /** Hosts the allowlist proxy refused during the run. */
  networkRefused: string[];
}

/** Errors that mean the command was never started (bad options, no sandbox and no approval). */
export class RunCommandError extends Error {
  override readonly name = 'RunCommandError';
}

const running = new Map<string, () => Promise<void>>();
const runningByArtifact = new Map<string, RunningCommand>();
let exitHookInstalled = false;

/**
 * The command of this process currently writing `artifactPath`, if any. How a UI reaches a command the
 * model's turn started: the artifact is `<session artifacts dir>/<artifactNameFor(idempotencyKey)>`.
 */
export function runningCommand(artifactPath: string): RunningCommand | undefined {
  return runningByArtifact.get(path.resolve(artifactPath));
}

/** Kills every command still running (session end, app quit); resolves once each tree is gone. */
export async function killAllRunningCommands(): Promise<void> {
  await Promise.all([...running.values()].map((kill) => kill()));
}

/**
 * Runs `bash -c command` in a pty inside the OS sandbox, with no stdin (a command waiting for input
 * runs into its timeout), a wall-clock timeout, a memory cap and a process cap. Output is redacted,
 * streamed to `onData`, written whole to the artifact with backpressure, and bounded for the model.
 * On timeout, abort or exit, the whole process tree dies, background and `setsid` escapees included.
 * Resolves with the outcome; rejects only with RunCommandError when nothing was started.
 */
export async function runCommand(options: RunCommandOptions): Promise<RunCommandResult> {
  const sandbox = options.sandbox;
  const { input, workspace, cwd } = admitBoxedRun(RunCommandInput, options, sandbox, {
    what: 'command',
    unconfined: "this command needs the user's explicit approval to run unconfined.",
    fail: (message) => new RunCommandError(message),
  });
  const timeoutMs = Math.min(input.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const memoryMb = input.memoryMb ?? DEFAULT_MEMORY_MB;
  const network = input.network ?? 'none';
  const runId = randomUUID();
  const nonce = randomUUID().replace(/-/g, '');
  const started = performance.now();

  const launch = await prepareBoxLaunch({
    kind: 'run',
    runId,
    sandbox,
    // Wrapped twice: the exit marker inside, the box around it (./boxLaunch.ts: one launch for every pty run).
    command: (memoryBy) =>
      wrapWithExitMarker(input.command, nonce, {
        memoryKb: memoryBy === 'rlimit' ? memoryMb * 1024 : undefined,
      }),
    workspace,
    cwd,
    ...mountsOf(input),
    network,
    limits: input.useCgroup === false ? null : { pidsMax: input.pidsMax ?? DEFAULT_PIDS_MAX, memoryMb },
    env: {
      ...(input.env ?? {}),
      TERM: 'xterm-256color',
      ...(input.idempotencyKey === undefined ? {} : { KEEL_IDEMPOTENCY_KEY: input.idempotencyKey }),
    },
    // The box proves its armed parent alive before the command starts, so it never outlives Keel (./lifeline.ts).
    lifeline: true,
    ...(options.joinNetwork === undefined ? {} : { joinNetwork: options.joinNetwork }),
  });
  const { proxy, cgroup, memoryBy } = launch;
  try {
    const redactor = createRedactor({
      workspaceRoot: workspace,
      env: { ...process.env, ...(input.env ?? {}) },
    });
    const outcome = await execute({
      argv: launch.argv,
      cwd,
      env: launch.env,
      runId,
      nonce,
      timeoutMs,
      cols: input.cols ?? 120,
      rows: input.rows ?? 30,
      artifactPath: input.artifactPath,
      stream: redactor.stream(),
      liveStream: redactor.stream(),
      excerptLimits: {
        headBytes: input.excerptHeadBytes ?? DEFAULT_EXCERPT_BYTES,
        tailBytes: input.excerptTailBytes ?? DEFAULT_EXCERPT_BYTES,
      },
      artifactHandle: input.artifactHandle ?? input.artifactPath,
      onData: options.onData,
      flow: options.flow,
      signal: options.signal,
      cgroup,
      recordDir: input.recordDir,
      onStart: options.onStart,
    });

    const oom = cgroup?.oomKilled() === true;
    const failedForMemory =
      memoryBy === 'rlimit' && outcome.exitCode !== 0 && OUT_OF_MEMORY.test(outcome.lastOutput);
    return {
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      timedOut: outcome.timedOut,
      aborted: outcome.aborted,
      killedForMemory: oom || failedForMemory,
      durationMs: Math.round(performance.now() - started),
      artifact: input.artifactPath,
      excerpt: outcome.excerpt.text,
      bytes: outcome.excerpt.bytes,
      truncated: outcome.excerpt.truncated,
      sandbox: sandbox.kind,
      limits: { memory: memoryBy, pids: cgroup?.enforces.pids === true ? 'cgroup' : 'none', timeoutMs },
      networkRefused: (proxy?.decisions ?? []).filter((d) => !d.allowed).map((d) => `${d.host}:${d.port}`),
    };
  } finally {
    await launch.close();
  }
}

/**
 * Quiet time after which held-back output is released to the live view. A secret printed in two
 * halves more than this far apart may show in the live view; the artifact and the excerpt never hold it.
 */
export const IDLE_FLUSH_MS = 250;

/** Messages programs print when an allocation fails under RLIMIT_AS (the limit does not kill, it refuses). */
const OUT_OF_MEMORY =
  /MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|memory exhausted|heap out of memory|xmalloc: cannot allocate/i;

interface ExecuteOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  runId: string;
  nonce: string;
  timeoutMs: number;
  cols: number;
  rows: number;
  artifactPath: string;
  artifactHandle: string;
  /** Redacts what is kept (artifact, excerpt): never flushed early, so a secret split by a pause is caught. */
  stream: RedactionStream;
  /** Redacts the live view: flushed when output goes idle, so a prompt or last line shows at once. */
  liveStream: RedactionStream;
  excerptLimits: { headBytes: number; tailBytes: number };
  onData?: (text: string) => void;
  flow?: FlowControl;
  signal?: AbortSignal;
  cgroup: RunCgroup | null;
  recordDir: string | undefined;
  onStart?: (started: { pid: number; runId: string }) => void;
}

interface ExecuteOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  excerpt: { text: string; truncated: boolean; bytes: number };
  lastOutput: string;
}

async function execute(options: ExecuteOptions): Promise<ExecuteOutcome> {
  const { spawn } = await loadPty();
  mkdirSync(path.dirname(options.artifactPath), { recursive: true });
  const artifact = createWriteStream(options.artifactPath, {
    flags: 'w',
    mode: 0o600,
    highWaterMark: 1024 * 1024,
  });
  const artifactOpened = new Promise<void>((resolve, reject) => {
    artifact.once('open', () => resolve());
    artifact.once('error', reject);
  });
  await artifactOpened;

  const excerpt = createExcerptCollector(options.excerptLimits);
  const decoder = new StringDecoder('utf8');
  const failure: { artifact: Error | null; record: Error | null } = { artifact: null, record: null };
  artifact.on('error', (error) => {
    failure.artifact = error;
  });

  const [file, ...args] = options.argv;
  if (file === undefined) throw new RunCommandError('Nothing to run.');
  // Recorded before the spawn too (no pid yet; the run marker finds its processes), so a Keel killed right
  // after the spawn still leaves a record that resume ends the box by.
  if (options.recordDir !== undefined) {
    try {
      recordBox(options.recordDir, {
        runId: options.runId,
        pid: null,
        cgroupProcsFiles: options.cgroup?.procsFiles ?? [],
      });
    } catch (error) {
      artifact.destroy();
      throw new RunCommandError(
        `Could not record the command before starting it: ${(error as Error).message}`,
      );
    }
  }
  let pty: IPty;
  try {
    pty = spawn(file, args, {
      name: 'xterm-256color',
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: options.env,
      encoding: null,
    });
  } catch (error) {
    artifact.destroy();
    if (options.recordDir !== undefined) forgetBox(options.recordDir, options.runId);
    throw new RunCommandError(`Could not start the command: ${(error as Error).message}`);
  }

  // Two independent reasons hold the pty: the artifact file is behind, or a live viewer is behind.
  // It reads again only when neither holds; the command meanwhile blocks on write.
  let paused = false;
  let artifactBehind = false;
  const heldBy = new Set<FlowControl>();
  const syncPause = (): void => {
    const hold = artifactBehind || heldBy.size > 0;
    if (hold === paused) return;
    paused = hold;
    if (hold) pty.pause();
    else pty.resume();
  };
  const flows = new Set<FlowControl>();
  const detachers = new Map<FlowControl, () => void>();
  const attachFlow = (flow: FlowControl): (() => void) => {
    if (flows.has(flow)) return () => undefined;
    flows.add(flow);
    const unbind = flow.bind({
      pause: () => {
        heldBy.add(flow);
        syncPause();
      },
      resume: () => {
        heldBy.delete(flow);
        syncPause();
      },
    });
    const detach = (): void => {
      if (!flows.delete(flow)) return;
      detachers.delete(flow);
      unbind();
      heldBy.delete(flow);
      syncPause();
    };
    detachers.set(flow, detach);
    return detach;
  };
  if (options.flow) attachFlow(options.flow);
  const emitLive = (text: string): void => {
    if (text.length === 0) return;
    options.onData?.(text);
    for (const flow of flows) flow.deliver(text);
  };
  const emit = (text: string): void => {
    if (text.length === 0) return;
    excerpt.push(text);
    if (!artifact.write(text) && !artifactBehind) {
      // Backpressure: stop reading the pty (the command blocks on write) until the file catches up.
      artifactBehind = true;
      syncPause();
      artifact.once('drain', () => {
        artifactBehind = false;
        syncPause();
      });
    }
  };
  // The redactor holds back a few hundred characters to catch a secret split across chunks; when the
  // command goes quiet, the live view's stream releases them so it never sits on a prompt or a last line.
  // What is kept (artifact, excerpt) has its own stream that never releases early: a secret printed in
  // two halves with a pause between is redacted there whatever the pause.
  let idleTimer: NodeJS.Timeout | undefined;
  const flushWhenIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => emitLive(options.liveStream.flush()), IDLE_FLUSH_MS);
  };
  const pushText = (text: string): void => {
    emitLive(options.liveStream.push(text));
    emit(options.stream.push(text));
  };
  const marker = createExitMarkerScanner(options.nonce);
  let finishedWith: number | null = null;
  pty.onData((data: string | Buffer) => {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const scan = marker.push(decoder.write(chunk));
    pushText(scan.text);
    flushWhenIdle();
    if (scan.exitCode !== undefined && !timedOut && !aborted) {
      // Everything the command wrote has been read (the marker comes last); now end the tree.
      finishedWith = scan.exitCode;
      clearTimeout(timer);
      void killTree();
    }
  });

  let timedOut = false;
  let aborted = false;
  const kill: { done: Promise<number> | null } = { done: null };
  const killTree = (): Promise<void> => {
    kill.done ??= killRunTree(pty.pid, options.runId, { extraPids: () => options.cgroup?.members() ?? [] });
    return kill.done.then(() => undefined);
  };
  const exited = new Promise<{ exitCode: number; signal: number }>((resolve) => {
    pty.onExit(({ exitCode, signal }) => resolve({ exitCode, signal: signal ?? 0 }));
  });

  running.set(options.runId, killTree);
  installExitHook();
  options.onStart?.({ pid: pty.pid, runId: options.runId });
  if (options.recordDir !== undefined) {
    try {
      recordBox(options.recordDir, {
        runId: options.runId,
        pid: pty.pid,
        cgroupProcsFiles: options.cgroup?.procsFiles ?? [],
      });
    } catch (error) {
      // Without its record a crash could leave the box unfindable: it does not run at all.
      failure.record = error as Error;
      void killTree();
    }
  }
  const timer = setTimeout(() => {
    timedOut = true;
    void killTree();
  }, options.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    void killTree();
  };
  if (options.signal?.aborted === true) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const artifactKey = path.resolve(options.artifactPath);
  const handle: RunningCommand = { abort: onAbort, attachFlow };
  runningByArtifact.set(artifactKey, handle);

  let exit: { exitCode: number; signal: number };
  try {
    exit = await exited;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    running.delete(options.runId);
    if (runningByArtifact.get(artifactKey) === handle) runningByArtifact.delete(artifactKey);
  }
  // The command is done; anything it left running in the background (or that escaped with setsid)
  // dies now, so a finished command never leaves processes behind.
  await kill.done;
  await killRunTree(pty.pid, options.runId, {
    extraPids: () => options.cgroup?.members() ?? [],
    rootExited: true,
  });
  if (options.recordDir !== undefined) forgetBox(options.recordDir, options.runId);

  clearTimeout(idleTimer);
  pushText(marker.push(decoder.end()).text);
  pushText(marker.flush());
  emitLive(options.liveStream.end());
  emit(options.stream.end());
  for (const detach of [...detachers.values()]) detach();
  if (paused) pty.resume();
  await new Promise<void>((resolve) => artifact.end(() => resolve()));
  if (failure.record !== null) {
    throw new RunCommandError(`Could not record the running command: ${failure.record.message}`);
  }
  if (failure.artifact !== null) {
    throw new RunCommandError(`Could not write the output artifact: ${failure.artifact.message}`);
  }

  if (finishedWith !== null) {
    return {
      exitCode: finishedWith,
      signal: null,
      timedOut: false,
      aborted: false,
      excerpt: excerpt.finish(options.artifactHandle),
      lastOutput: excerpt.tail(),
    };
  }
  // No marker: the wrapper itself died (timeout, abort, or the command killed its own shell).
  const killedByUs = timedOut || aborted;
  const signalName = exit.signal > 0 ? signalNameOf(exit.signal) : killedByUs ? 'SIGKILL' : null;
  return {
    exitCode: signalName === null ? exit.exitCode : null,
    signal: signalName,
    timedOut,
    aborted,
    excerpt: excerpt.finish(options.artifactHandle),
    lastOutput: excerpt.tail(),
  };
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when Keel itself exits: the lifeline chain (./lifeline.ts) covers boxed runs; this the rest.
  process.once('exit', () => {
    for (const kill of running.values()) void kill();
  });
}
