import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { SandboxInfo } from '../sandbox/box.js';
import { NetworkPolicy } from '../sandbox/box.js';
import { admitBoxedRun, BoxMounts, mountsOf } from './admit.js';
import { prepareBoxLaunch } from './boxLaunch.js';
import { killRunTree } from './processTree.js';

/*
 * Issue #30: one hook command (Claude Code's and Codex's `{ "type": "command", "command": … }`) run inside
 * the session's box. Unlike a tool's command it reads its input on stdin and answers on stdout and stderr
 * apart (exit code 2 means "stderr is the reason"), so it runs with pipes, not a pty. Each stream is kept up
 * to `capBytes` and the rest is drained and counted, never held: a hook printing 50 MB costs 2 × cap of memory.
 */

export const HookProcessInput = z.object({
  command: z.string().min(1, 'the hook command is empty'),
  /** The JSON the hook reads on stdin. */
  stdin: z.string(),
  workspace: z.string().min(1),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().positive(),
  capBytes: z.number().int().positive(),
  network: NetworkPolicy.optional(),
  ...BoxMounts.shape,
});

export type HookProcessOptions = z.input<typeof HookProcessInput> & {
  sandbox: SandboxInfo;
  /** The turn's stop: kills the hook's tree (the run ends as an error, like a timeout). */
  signal?: AbortSignal;
};

export type HookProcessResult = {
  /** null when killed (timeout) or never started. */
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Bytes each stream printed in all (more than was kept when `truncated`). */
  bytes: number;
  truncated: boolean;
  durationMs: number;
  /** Set when the hook could not start (no sandbox, a bad folder, a failed spawn). */
  startError?: string;
};

/** Runs one hook command in the box; never throws: a hook that cannot start says why in `startError`. */
export async function runHookProcess(options: HookProcessOptions): Promise<HookProcessResult> {
  const started = performance.now();
  const failed = (message: string): HookProcessResult => ({
    exitCode: null,
    timedOut: false,
    stdout: '',
    stderr: '',
    bytes: 0,
    truncated: false,
    durationMs: Math.round(performance.now() - started),
    startError: message,
  });
  let admitted;
  try {
    // A hook never runs unconfined: no approval exists for it (unconfinedApproved is never passed).
    admitted = admitBoxedRun(HookProcessInput, options, options.sandbox, {
      what: 'hook',
      unconfined: 'Keel does not run hooks unconfined.',
      fail: (message) => new Error(message),
    });
  } catch (error) {
    return failed((error as Error).message);
  }
  const { input, workspace, cwd } = admitted;
  const runId = randomUUID();
  let launch;
  try {
    launch = await prepareBoxLaunch({
      kind: 'run',
      runId,
      sandbox: options.sandbox,
      command: () => input.command,
      workspace,
      cwd,
      ...mountsOf(input),
      network: input.network ?? 'none',
      limits: { pidsMax: 256, memoryMb: 2048 },
      env: input.env ?? {},
      lifeline: true,
    });
  } catch (error) {
    return failed(`the box could not start: ${(error as Error).message}`);
  }
  try {
    return await new Promise<HookProcessResult>((resolve) => {
      const [file, ...args] = launch.argv;
      const child = spawn(file as string, args, { cwd, env: launch.env, stdio: ['pipe', 'pipe', 'pipe'] });
      const out = capped(input.capBytes);
      const err = capped(input.capBytes);
      child.stdout.on('data', out.push);
      child.stderr.on('data', err.push);
      // A hook that does not read its input (or exits first) must not fail the run with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(input.stdin);
      let timedOut = false;
      const kill = () =>
        child.pid === undefined
          ? Promise.resolve(0)
          : killRunTree(child.pid, runId, { extraPids: () => launch.cgroup?.members() ?? [] });
      const timer = setTimeout(() => {
        timedOut = true;
        void kill();
      }, input.timeoutMs);
      const onAbort = () => void kill();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) onAbort();
      child.once('error', (error) => {
        clearTimeout(timer);
        resolve(failed(`the hook could not start: ${error.message}`));
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        // Whatever the hook left behind (a background child) ends with it.
        void kill().then(() =>
          resolve({
            exitCode: timedOut ? null : code,
            timedOut,
            stdout: out.text(),
            stderr: err.text(),
            bytes: out.bytes() + err.bytes(),
            truncated: out.truncated() || err.truncated(),
            durationMs: Math.round(performance.now() - started),
          }),
        );
      });
    });
  } finally {
    await launch.close();
  }
}

/** Keeps the first `cap` bytes of a stream and counts the rest. */
function capped(cap: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    push: (chunk: Buffer) => {
      total += chunk.length;
      if (kept >= cap) return;
      const part = chunk.subarray(0, cap - kept);
      chunks.push(part);
      kept += part.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
    bytes: () => total,
    truncated: () => total > kept,
  };
}
