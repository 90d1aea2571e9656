import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { buildBwrapArgs, bwrapProbeArgs } from './bwrap.js';
import { buildSeatbeltArgs } from './boxSeatbelt.js';
import type { SandboxInfo, WrapOptions, WrappedCommand } from './boxCommon.js';
import { isInside, NetworkPolicy } from './boxCommon.js';
import { gitMetadataPaths } from './protectedPaths.js';

export * from './boxCommon.js';

let detected: Promise<SandboxInfo> | null = null;

/**
 * Finds the OS sandbox that actually works here (a trial command must start inside it), once per process
 * unless `refresh` is set. Never throws: a machine without a working sandbox gets `kind: 'none'` and a reason.
 */
export function detectSandbox(options: { refresh?: boolean } = {}): Promise<SandboxInfo> {
  if (detected === null || options.refresh === true) detected = probeSandbox(process.platform);
  return detected;
}

/** True when commands cannot be confined, so the caller must ask the user before every single command. */
export function requiresApprovalForEveryCommand(sandbox: SandboxInfo): boolean {
  return sandbox.kind === 'none';
}

/**
 * Builds the argv and environment that run `command` inside the detected sandbox. Pure apart from
 * `existsSync` checks for optional paths. Throws an actionable error when an allowlist is asked for
 * without a proxy, or when the cwd is outside every writable path.
 */
export function wrapCommand(options: WrapOptions): WrappedCommand {
  const policy = NetworkPolicy.parse(options.network);
  const cwd = options.cwd ?? options.workspace;
  const roots = [options.workspace, ...(options.writable ?? [])];
  if (!roots.some((root) => isInside(root, cwd))) {
    throw new Error(`The working directory ${cwd} is outside the workspace ${options.workspace}.`);
  }
  if (policy !== 'none' && options.proxy === undefined) {
    throw new Error(
      'A network allowlist needs the allowlist proxy to be running; pass its endpoint as `proxy`.',
    );
  }
  // The git metadata of every writable root stays read-only, whatever the caller pinned: a git outside
  // the box (Keel's, the user's) must never run hooks or config a command planted.
  const readOnly = [...(options.readOnly ?? []), ...roots.flatMap(gitMetadataPaths)];
  switch (options.sandbox.kind) {
    case 'bwrap': {
      if (policy !== 'none' && options.sandbox.socat === null) {
        throw new Error('A network allowlist needs socat inside the box; install it (apt install socat).');
      }
      return buildBwrapArgs({ ...options, readOnly, cwd, network: policy });
    }
    case 'sandbox-exec':
      return buildSeatbeltArgs({ ...options, readOnly, cwd, network: policy });
    case 'none': {
      const env: Record<string, string> = {};
      if (options.home !== undefined) env.HOME = options.home;
      if (options.tmpDir !== undefined) env.TMPDIR = options.tmpDir;
      return { argv: ['bash', '-c', options.command], env };
    }
  }
}

/**
 * Probes the sandbox without caching. `locate` finds an executable by name (tests substitute it to
 * simulate a machine without bwrap, or with a bwrap that cannot create namespaces).
 */
export async function probeSandbox(
  platform: NodeJS.Platform,
  locate: (name: string) => string | null = findExecutable,
): Promise<SandboxInfo> {
  const none = (reason: string): SandboxInfo => ({
    kind: 'none',
    reason,
    version: null,
    executable: null,
    socat: null,
  });
  if (platform === 'linux') {
    const bwrap = locate('bwrap');
    if (bwrap === null) {
      return none(
        'bubblewrap (bwrap) is not installed; install it (apt install bubblewrap) to confine commands.',
      );
    }
    const version = await run(bwrap, ['--version']);
    if (version.code !== 0) return none(`bwrap is installed but does not run: ${version.output.trim()}`);
    const trial = await run(bwrap, [...bwrapProbeArgs(), '--', 'true']);
    if (trial.code !== 0) {
      return none(
        `bwrap cannot create its namespaces here (${trial.output.trim() || `exit ${trial.code}`}); ` +
          'user namespaces may be disabled (check kernel.unprivileged_userns_clone or AppArmor).',
      );
    }
    return {
      kind: 'bwrap',
      reason: 'bubblewrap started a trial command with every namespace Keel needs.',
      version: version.output.trim().replace(/^bubblewrap\s+/, ''),
      executable: bwrap,
      socat: locate('socat'),
    };
  }
  if (platform === 'darwin') {
    const sandboxExec = '/usr/bin/sandbox-exec';
    const trial = await run(sandboxExec, ['-p', '(version 1)(allow default)', '/usr/bin/true']);
    if (trial.code !== 0) return none(`sandbox-exec could not start a trial command: ${trial.output.trim()}`);
    return {
      kind: 'sandbox-exec',
      reason: 'sandbox-exec started a trial command.',
      version: null,
      executable: sandboxExec,
      socat: null,
    };
  }
  return none(`No OS sandbox is supported on ${platform}; every command needs approval.`);
}

/** The first executable `name` on PATH (then /usr/bin, /bin, /usr/local/bin), or null. */
export function findExecutable(name: string): string | null {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of [...dirs, '/usr/bin', '/bin', '/usr/local/bin']) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return null;
}

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 127;
      resolve({ code, output: `${stdout}${stderr}` || (error?.message ?? '') });
    });
  });
}
