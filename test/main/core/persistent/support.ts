import { afterAll, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckoutLocation } from '../../../../main/core/persistent/checkout.js';
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
