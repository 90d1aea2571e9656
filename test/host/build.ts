import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { trackChild } from '../support/childProcesses.js';
import { REPO_ROOT, ensureCliBuilt } from '../support/cli.js';

/** The built package entry `keel/core` resolves to (package.json "exports" "./core"). */
export const CORE_ENTRY = path.join(REPO_ROOT, 'dist', 'main', 'core', 'index.js');

/** The plain-Node host script. */
export const HOST_SCRIPT = path.join(REPO_ROOT, 'test', 'host', 'host.mjs');

/** Sources reachable from main/core/index.ts whose dist/ output is missing or older. */
function staleCoreOutputs(): string[] {
  const stale: string[] = [];
  const seen = new Set<string>();
  const pending = [path.join(REPO_ROOT, 'main', 'core', 'index.ts')];
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    if (seen.has(source)) continue;
    seen.add(source);
    const output = path.join(REPO_ROOT, 'dist', path.relative(REPO_ROOT, source).replace(/\.ts$/, '.js'));
    const outputTime = fs.statSync(output, { throwIfNoEntry: false })?.mtimeMs;
    if (outputTime === undefined || outputTime < fs.statSync(source).mtimeMs) stale.push(source);
    const text = fs.readFileSync(source, 'utf8');
    for (const match of text.matchAll(/from\s*'(\.{1,2}\/[^']+)\.js'/g)) {
      const target = path.resolve(path.dirname(source), `${match[1] ?? ''}.ts`);
      if (fs.existsSync(target)) pending.push(target);
    }
  }
  return stale;
}

/**
 * Builds the library (tsc -p tsconfig.lib.json) when `keel/core` or anything it imports is stale, under the
 * same lock as the CLI build so parallel test files never run two compilers at once.
 */
export async function ensureCoreBuilt(): Promise<void> {
  await ensureCliBuilt();
  if (staleCoreOutputs().length === 0) return;
  const lock = path.join(
    os.tmpdir(),
    `keel-cli-build-${crypto.createHash('sha1').update(REPO_ROOT).digest('hex').slice(0, 12)}.lock`,
  );
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) throw new Error(`waited too long for another build (lock ${lock})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (staleCoreOutputs().length === 0) return;
    const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.lib.json'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 170_000,
    });
    const stale = staleCoreOutputs();
    if (stale.length > 0) {
      throw new Error(`tsc left ${stale.slice(0, 5).join(', ')} unbuilt:\n${result.stdout}${result.stderr}`);
    }
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
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
