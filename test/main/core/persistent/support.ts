import { afterAll, beforeAll } from 'vitest';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
import { runningView } from '../../../../main/core/persistent/viewHolder.js';
import { probeOverlay, type OverlaySupport } from '../../../../main/sandbox/overlayView.js';

/** A temp folder (real path) removed by `cleanup`. */
export function makeTemp(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Whether this machine can make a copy-on-write view (probeOverlay in a temp folder of its own, removed after). */
export async function overlayHere(): Promise<OverlaySupport> {
  const scratch = makeTemp('keel-overlay-probe-');
  try {
    return await probeOverlay(scratch);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs git in `cwd` with a fixed identity; returns stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=T', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args],
    {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    },
  );
}

/** Writes files (relative path → text) under `root`, creating folders. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

/** A git repository at `dir` with `files` committed. */
export function makeRepo(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'initial');
  return dir;
}

/** Text of a file, or undefined when it does not exist. */
export function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` with KEEL_CHECKOUT_KIND unset: that variable overrides the `kind` a checkout is opened with (as it
 * overrides the setting for sessions), so a case that needs a full copy under a run with the view forced asks here.
 */
export async function unforced<T>(fn: () => Promise<T>): Promise<T> {
  const forced = process.env['KEEL_CHECKOUT_KIND'];
  delete process.env['KEEL_CHECKOUT_KIND'];
  try {
    return await fn();
  } finally {
    if (forced !== undefined) process.env['KEEL_CHECKOUT_KIND'] = forced;
  }
}

/**
 * For a suite that asks for its checkouts' kind itself (the copy-on-write view's suites, each kind's suite):
 * KEEL_CHECKOUT_KIND unset while it runs, so a run with a kind forced (`KEEL_CHECKOUT_KIND=copy`, the kind machines
 * without overlay get) still tests the kind asked for rather than failing it. Call at the top of the file or of a
 * describe.
 */
export function ignoreForcedKind(): void {
  let forced: string | undefined;
  beforeAll(() => {
    forced = process.env['KEEL_CHECKOUT_KIND'];
    delete process.env['KEEL_CHECKOUT_KIND'];
  });
  afterAll(() => {
    if (forced !== undefined) process.env['KEEL_CHECKOUT_KIND'] = forced;
  });
}

/** Where session `s1`'s checkout of its `project` dir lives in a home at `<dir>/home`. */
export function projectLocation(dir: string): CheckoutLocation {
  return {
    workspaceRoot: path.join(dir, 'home', 's1', 'workspace'),
    checkout: path.join(dir, 'home', 's1', 'workspace', 'persistent', 'project'),
    stateDir: path.join(dir, 'home', 's1', 'checkouts', 'project'),
    locksRoot: path.join(dir, 'home', 'locks'),
  };
}

/**
 * Git in a session's view namespace (where its files are), as the box's git runs: its output and warnings. The folder
 * is entered inside the namespace (nsenter's own --wd opens it before entering).
 */
export function gitInViewRun(
  sessionDir: string,
  checkout: string,
  args: readonly string[],
): { status: number | null; stdout: string; stderr: string } {
  const view = runningView(sessionDir, checkout);
  if (view === undefined) throw new Error('no view is mounted');
  const enter = [`--target=${view.pid}`, '--user', '--mount', '--preserve-credentials'];
  const result = spawnSync(
    'nsenter',
    [...enter, '--', '/bin/sh', '-c', 'cd -- "$0" && exec git "$@"', checkout, ...args],
    { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `gitInViewRun`'s output; throws when git fails. */
export function gitInViewOf(sessionDir: string, checkout: string, args: readonly string[]): string {
  const result = gitInViewRun(sessionDir, checkout, args);
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed in the view: ${result.stderr}`);
  return result.stdout;
}

/**
 * A box as bwrap makes one in a session's view holder: a mount namespace of its own holding a copy of the view's
 * mount, alive until killed (what `overlayInUse` / `boxesOnView` see).
 */
export function boxOnView(sessionDir: string, checkout: string): ChildProcess {
  const view = runningView(sessionDir, checkout);
  if (view === undefined) throw new Error('no view is mounted');
  const enter = [`--target=${view.pid}`, '--user', '--mount', '--preserve-credentials'];
  return spawn('nsenter', [...enter, '--', 'unshare', '--mount', 'sleep', '60'], { stdio: 'ignore' });
}
