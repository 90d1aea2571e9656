import { randomInt } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  wrapCommand,
  type NetworkJoin,
  type NetworkPolicy,
  type SandboxInfo,
  type WrapOptions,
} from '../sandbox/box.js';
import { startAllowlistProxy, type AllowlistProxy } from '../sandbox/boxProxy.js';
import { enterHolder } from '../sandbox/overlayView.js';
import { insideView, viewPidOf } from '../sandbox/viewPath.js';
import { buildChildEnv } from '../sandbox/env.js';
import { mountsOf } from './admit.js';
import { makeRunScratch, sweepDeadScratch } from './boxRecords.js';
import { createRunCgroup, type RunCgroup } from './cgroup.js';
import { createLifeline, launcherArgv } from './lifeline.js';
import { RUN_MARKER_VARIABLE } from './processTree.js';

/*
 * Everything a boxed pty run (a command, the user's terminal) needs before node-pty spawns it, in one place:
 * its scratch folder, the allowlist proxy, the run cgroup, the lifeline, `wrapCommand`, the launcher that
 * makes the box die with Keel (./lifeline.ts), and the child environment. Both kinds of run differ only in
 * the flags they pass here, so a new link of the dying-with-Keel chain reaches both.
 */

/** How a run's memory cap is enforced. */
export type MemoryBy = 'cgroup' | 'rlimit' | 'none';

/** What prepareBoxLaunch needs: the wrapCommand options (without the ones it makes) and the run's own. */
export type BoxLaunchOptions = Omit<WrapOptions, 'command' | 'tmpDir' | 'proxy' | 'lifeline' | 'network'> & {
  sandbox: SandboxInfo;
  cwd: string;
  network: NetworkPolicy;
  /** Names the scratch folder (`keel-<kind>-<owner pid>-<owner start>-XXXXXX` in the temp folder). */
  kind: 'run' | 'terminal';
  runId: string;
  /** The shell text to run, given how memory is capped (a command adds `ulimit -v` when it is RLIMIT_AS). */
  command: (memoryBy: MemoryBy) => string;
  /** Run cgroup limits; null for none (useCgroup: false). */
  limits: { pidsMax: number; memoryMb: number } | null;
  /** Environment on top of the allowlisted child environment (the run marker is added here). */
  env: Record<string, string>;
  /** bwrap: prove bwrap alive inside the box before the command starts (the box then runs as its own PID 1). */
  lifeline: boolean;
  /** Keeps the pty as the controlling terminal (bwrap without --new-session): the user's interactive shell. */
  controllingTerminal?: boolean;
  /**
   * bwrap: run in this background command's network namespace instead of a new one (issue #32), so the
   * session's servers answer on localhost; ignored by other sandboxes (they have no private network).
   */
  joinNetwork?: NetworkJoin;
};

/** A box ready to spawn; `close()` undoes everything prepared (call it once the run and its sweep are done). */
export type BoxLaunch = {
  argv: string[];
  env: Record<string, string>;
  scratch: string;
  proxy: AllowlistProxy | null;
  cgroup: RunCgroup | null;
  memoryBy: MemoryBy;
  /** Closes the proxy, removes the cgroup and the scratch folder (with the lifeline FIFO). Never throws. */
  close(): Promise<void>;
};

let swept = false;

/**
 * Prepares one boxed run. On failure everything prepared so far is undone before the error is rethrown.
 */
export async function prepareBoxLaunch(given: BoxLaunchOptions): Promise<BoxLaunch> {
  const { sandbox } = given;
  // Issue #36: a workspace seen through a copy-on-write view's holder: the box runs in its namespaces.
  const view = viewEntry(given);
  const options = view?.options ?? given;
  // The first run of a process clears what a killed Keel left in the temp folder (its `finally` never ran).
  if (!swept) {
    swept = true;
    await sweepDeadScratch();
  }
  const scratch = makeRunScratch(options.kind, options.runId);
  let proxy: AllowlistProxy | null = null;
  let cgroup: RunCgroup | null = null;
  const close = async (): Promise<void> => {
    await proxy?.close().catch(() => undefined);
    await cgroup?.remove();
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const network = options.network;
    if (network !== 'none' && sandbox.kind !== 'none') {
      proxy = await startAllowlistProxy({
        allow: network.allow,
        hosts: network.hosts,
        listen: sandbox.kind === 'bwrap' ? { socketPath: path.join(scratch, 'proxy.sock') } : { port: 0 },
      });
    }
    if (options.limits !== null) cgroup = createRunCgroup(options.runId, options.limits);
    const memoryBy: MemoryBy =
      cgroup?.enforces.memory === true ? 'cgroup' : process.platform === 'linux' ? 'rlimit' : 'none';
    const lifeline = options.lifeline && sandbox.kind === 'bwrap' ? createLifeline(scratch) : null;
    const join = sandbox.kind === 'bwrap' ? (options.joinNetwork ?? null) : null;
    const wrapped = wrapCommand({
      sandbox,
      command: options.command(memoryBy),
      workspace: options.workspace,
      cwd: options.cwd,
      ...mountsOf(options),
      tmpDir: sandbox.kind === 'bwrap' ? undefined : scratch,
      // Without a sandbox nothing confines the network; the approval covers that.
      network: sandbox.kind === 'none' ? 'none' : network,
      proxy: proxy?.endpoint,
      ...(lifeline === null ? {} : { lifeline }),
      // The namespace's own bridge holds the usual port; a random high one is unlikely to be a server's.
      ...(join === null ? {} : { sharedNetwork: { proxyPort: 30_000 + randomInt(10_000) } }),
    });
    const boxArgv =
      options.controllingTerminal === true ? withControllingTerminal(wrapped.argv) : wrapped.argv;
    // HOME and TMPDIR are private: the box's own (bwrap) or folders in this run's scratch area.
    const home = wrapped.env.HOME ?? path.join(scratch, 'home');
    if (sandbox.kind !== 'bwrap') mkdirSync(home, { recursive: true });
    const env = buildChildEnv({
      base: process.env,
      home,
      tmpDir: wrapped.env.TMPDIR ?? scratch,
      extra: { ...options.env, [RUN_MARKER_VARIABLE]: options.runId, ...wrapped.env },
    });
    return {
      argv: [...joinFor(cgroup?.procsFiles ?? [], lifeline, join, view), ...boxArgv],
      env,
      scratch,
      proxy,
      cgroup,
      memoryBy,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The box of a workspace under a view's holder (`/proc/<pid>/root/...`, main/sandbox/viewPath.ts): bwrap must run in
 * the holder's namespaces (a bind mount of another namespace's folder is refused, and there the views are mounted),
 * with every folder named as that namespace names it. Refused, not run elsewhere, when the pid is no holder of
 * this process (it ended and the pid may be another process's).
 */
function viewEntry(
  options: BoxLaunchOptions,
): { options: BoxLaunchOptions; enter: string[]; pid: number } | undefined {
  const pid = viewPidOf(options.workspace);
  if (pid === undefined) return undefined;
  const enter = enterHolder(pid);
  if (enter === undefined)
    throw new Error('the copy-on-write view this command would run in has ended; run the turn again');
  const list = (paths: readonly string[] | undefined) => paths?.map(insideView);
  return {
    enter,
    pid,
    options: {
      ...options,
      workspace: insideView(options.workspace),
      cwd: insideView(options.cwd),
      ...(options.writable ? { writable: list(options.writable) } : {}),
      ...(options.readOnly ? { readOnly: list(options.readOnly) } : {}),
      ...(options.hidden ? { hidden: list(options.hidden) } : {}),
    },
  };
}

/**
 * The argv before the box: the launcher, and for a view its holder entered. By the view's own nsenter when the box
 * makes its own network namespace; joining a background server's network, one nsenter enters both (the holder's
 * user and mount namespaces, then the server's network: lifeline.ts's enterNetwork), since a second nsenter into
 * the holder's user namespace from the server's (its child) is refused by the kernel.
 */
function joinFor(
  procsFiles: readonly string[],
  lifeline: string | null,
  join: NetworkJoin | null,
  view: { enter: string[]; pid: number } | undefined,
): string[] {
  if (view === undefined || join === null)
    return [...launcherArgv(procsFiles, lifeline, join), ...(view?.enter ?? [])];
  return launcherArgv(procsFiles, lifeline, join, view.pid);
}

/**
 * bwrap's --new-session takes the shell off its terminal: no job control, and Ctrl-C would reach bwrap
 * itself (killing the box) instead of the foreground job. A terminal's pty belongs to its box alone, so
 * the shell keeps it; every other flag stays.
 */
function withControllingTerminal(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return argv.filter((arg, index) => !(arg === '--new-session' && (end === -1 || index < end)));
}
