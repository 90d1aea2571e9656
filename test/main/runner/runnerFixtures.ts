import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import {
  runCommand,
  type RunCommandOptions,
  type RunCommandResult,
} from '../../../main/runner/boxedCommand.js';

/** A temp area with a workspace, an artifacts folder and a sibling "outside" folder, removed by `cleanup`. */
export interface RunnerArea {
  root: string;
  workspace: string;
  outside: string;
  artifacts: string;
  cleanup(): void;
}

/**
 * Creates a fresh area. `outside` sits next to the workspace and shares its name prefix (`/ws` vs
 * `/ws-evil`). Under `base` /var/tmp the outside folder stays visible (read-only) inside the box; under
 * /tmp it is hidden by the box's private /tmp.
 */
export function createArea(base = os.tmpdir()): RunnerArea {
  const root = mkdtempSync(path.join(base, 'keel-runner-test-'));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'ws-evil');
  const artifacts = path.join(root, 'artifacts');
  for (const dir of [workspace, outside, artifacts]) mkdirSync(dir);
  return {
    root,
    workspace,
    outside,
    artifacts,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The sandbox this machine offers (bwrap here). */
export async function boxedSandbox(): Promise<SandboxInfo> {
  return detectSandbox();
}

/** The explicit no-sandbox value, as a machine without bwrap would report it. */
export const noSandbox: SandboxInfo = {
  kind: 'none',
  reason: 'test: running unconfined on purpose',
  version: null,
  executable: null,
  socat: null,
};

let counter = 0;

/** Runs a command in the area with an artifact of its own; extra options override the defaults. */
export function run(
  area: RunnerArea,
  sandbox: SandboxInfo,
  command: string,
  extra: Partial<RunCommandOptions> = {},
): Promise<RunCommandResult> {
  counter += 1;
  return runCommand({
    command,
    workspace: area.workspace,
    sandbox,
    artifactPath: path.join(area.artifacts, `run-${counter}.log`),
    timeoutMs: 10_000,
    unconfinedApproved: sandbox.kind === 'none',
    ...extra,
  });
}

/** A fingerprint of a directory tree (names, sizes, mtimes), to prove nothing outside the workspace changed. */
export function snapshotTree(dir: string): string {
  const lines: string[] = [];
  const walk = (current: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(current).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(current, name);
      try {
        const stat = statSync(full, { throwIfNoEntry: false });
        if (stat === undefined) continue;
        lines.push(`${path.relative(dir, full)} ${stat.size} ${stat.mtimeMs}`);
        if (stat.isDirectory()) walk(full);
      } catch {
        lines.push(`${path.relative(dir, full)} unreadable`);
      }
    }
  };
  walk(dir);
  return lines.join('\n');
}

/** PIDs of host processes whose command line contains `marker`. */
export function processesMatching(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const zombie = stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
      if (!zombie && cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

/** Waits until `predicate` holds or `ms` pass; returns whether it held. */
export async function waitFor(predicate: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return predicate();
}
