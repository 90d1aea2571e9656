import { spawn } from 'node:child_process';
import path from 'node:path';
import { trackChild } from '../support/childProcesses.js';
import { REPO_ROOT, ensureCliBuilt, ensureLibraryBuilt } from '../support/cli.js';

/** The built package entry `keel/core` resolves to (package.json "exports" "./core"). */
export const CORE_ENTRY = path.join(REPO_ROOT, 'dist', 'main', 'core', 'index.js');

/** The plain-Node host script. */
export const HOST_SCRIPT = path.join(REPO_ROOT, 'test', 'host', 'host.mjs');

/**
 * Builds the library (tsc -p tsconfig.lib.json) when `keel/core` or anything it imports is stale, under the
 * same lock as the CLI build so parallel test files never run two compilers at once.
 */
export async function ensureCoreBuilt(): Promise<void> {
  await ensureCliBuilt();
  await ensureLibraryBuilt(path.join(REPO_ROOT, 'main', 'core', 'index.ts'));
}

/** What a host process printed (one JSON value per line) and how it ended. */
export type HostRun = { code: number | null; lines: Record<string, unknown>[]; stderr: string };

/** Runs `node test/host/host.mjs <phase>` with its configuration, asynchronously (the provider server lives here). */
export function runHost(phase: string, config: Record<string, unknown>): Promise<HostRun> {
  return new Promise((resolve) => {
    const child = trackChild(
      spawn(process.execPath, [HOST_SCRIPT, phase], {
        cwd: REPO_ROOT,
        env: { ...process.env, KEEL_HOST_CONFIG: JSON.stringify(config) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => {
      const lines = stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, lines, stderr });
    });
  });
}
