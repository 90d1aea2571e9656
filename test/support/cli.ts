import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, buildOnce } from './buildOnce.js';
import { trackChild } from './childProcesses.js';

/*
 * Helpers for tests that run the built `keel` CLI as a real child process against real temp homes.
 * The CLI is compiled with `tsc -p tsconfig.lib.json` into dist/ when a source it loads is newer than
 * its output; `buildOnce` keeps parallel test files from compiling at the same time.
 */

export { REPO_ROOT };

/** The built CLI: the compiled one (dist/main/cli) bundled into dist/cli by scripts/bundle-cli.mjs, as `keel` ships. */
export const CLI_BIN = path.join(REPO_ROOT, 'dist', 'cli', 'bin.js');

/** What one run of the CLI produced. */
export type KeelRun = { code: number | null; stdout: string; stderr: string };

/** Options of one CLI run. */
export type KeelRunOptions = { input?: string; env?: NodeJS.ProcessEnv; cwd?: string };

/** Runs `node dist/cli/bin.js --home <home> ...args` and waits for it (30 s cap). */
export function runKeel(home: string, args: readonly string[], options: KeelRunOptions = {}): KeelRun {
  return runKeelRaw(['--home', home, ...args], options);
}

/** Runs the built CLI with exactly these arguments (no --home added). */
export function runKeelRaw(args: readonly string[], options: KeelRunOptions = {}): KeelRun {
  const env = { ...process.env, ...options.env };
  // A developer's own KEEL_HOME or KEEL_DEBUG must not leak into a test run unless the test sets it.
  if (options.env?.KEEL_HOME === undefined) delete env.KEEL_HOME;
  if (options.env?.KEEL_DEBUG === undefined) delete env.KEEL_DEBUG;
  const result = spawnSync(process.execPath, [CLI_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Creates an empty temp folder to use as a Keel home; remove it with `removeTempDir`. */
export function makeTempDir(prefix = 'keel-cli-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Removes a temp folder made by `makeTempDir`. */
export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Compiles the CLI (tsc -p tsconfig.lib.json) unless every source the CLI loads has an up-to-date
 * output in dist/, then bundles it (scripts/bundle-cli.mjs) unless the bundle is newer than every compiled file
 * it is made of. Safe to call from parallel test files: one builds, the others wait.
 */
export async function ensureCliBuilt(): Promise<void> {
  const entries = ['cli/bin.ts', 'providers/local/worker.ts'].map((entry) =>
    path.join(REPO_ROOT, 'main', entry),
  );
  for (const entry of entries) await ensureLibraryBuilt(entry);
  await buildOnce(
    'cli-bundle',
    () => bundleIsStale(entries),
    () => {
      const result = spawnSync(process.execPath, [BUNDLER], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 120_000,
      });
      if (result.status !== 0 || bundleIsStale(entries)) {
        throw new Error(`scripts/bundle-cli.mjs failed:\n${result.stdout}${result.stderr}`);
      }
    },
  );
}

const BUNDLER = path.join(REPO_ROOT, 'scripts', 'bundle-cli.mjs');

/** True when dist/cli/bin.js is missing or older than the bundler or a compiled file the entries reach. */
function bundleIsStale(entries: readonly string[]): boolean {
  const bundled = fs.statSync(CLI_BIN, { throwIfNoEntry: false })?.mtimeMs;
  if (bundled === undefined || bundled < fs.statSync(BUNDLER).mtimeMs) return true;
  return entries.some((entry) =>
    reachedSources(entry).some(
      (source) => (fs.statSync(outputOf(source), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > bundled,
    ),
  );
}

/**
 * Compiles the library (tsc -p tsconfig.lib.json) unless `entry` and every source it reaches have an up-to-date
 * output in dist/, under the one lock of every dist/ build (`buildOnce`).
 */
export async function ensureLibraryBuilt(entry: string): Promise<void> {
  await buildOnce(
    'cli',
    () => staleOutputs(entry).length > 0,
    () => {
      let output = compile();
      // tsc's incremental state can believe an output exists that was deleted: start it over once.
      if (staleOutputs(entry).length > 0) {
        fs.rmSync(path.join(REPO_ROOT, 'dist', '.tsbuildinfo'), { force: true });
        output = compile();
      }
      const stale = staleOutputs(entry);
      if (stale.length > 0) {
        throw new Error(`tsc -p tsconfig.lib.json left ${stale.slice(0, 5).join(', ')} unbuilt:\n${output}`);
      }
    },
  );
}

/** Runs tsc on the library config; type errors elsewhere do not stop it emitting, so only output is kept. */
function compile(): string {
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.lib.json'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 170_000,
  });
  return `${result.stdout}${result.stderr}`;
}

/**
 * Sources `entry` loads (itself and every relative import it reaches, statically or by dynamic import) whose
 * dist/ output is missing or older than the source.
 */
function staleOutputs(entry: string): string[] {
  return reachedSources(entry)
    .filter((source) => {
      const outputTime = fs.statSync(outputOf(source), { throwIfNoEntry: false })?.mtimeMs;
      return outputTime === undefined || outputTime < fs.statSync(source).mtimeMs;
    })
    .map((source) => path.relative(REPO_ROOT, source));
}

/** A source's compiled file in dist/. */
function outputOf(source: string): string {
  return path.join(REPO_ROOT, 'dist', path.relative(REPO_ROOT, source).replace(/\.ts$/, '.js'));
}

/** `entry` and every source it reaches by a relative import, static or dynamic. */
function reachedSources(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    if (seen.has(source)) continue;
    seen.add(source);
    const text = fs.readFileSync(source, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g)) {
      const target = path.resolve(path.dirname(source), `${match[1] ?? ''}.ts`);
      if (fs.existsSync(target)) pending.push(target);
    }
  }
  return [...seen];
}

/** A child process holding a session's writer lease until `release` is called. */
export type LeaseHolderProcess = { pid: number; release: () => Promise<void> };

/**
 * Starts a separate Node process that opens the session for writing (taking its lease) from the
 * built library and keeps it open until released, so tests can see what other processes see.
 */
export async function holdSessionLease(home: string, sessionId: string): Promise<LeaseHolderProcess> {
  const moduleUrl = pathToFileURL(path.join(REPO_ROOT, 'dist', 'main', 'core', 'log', 'sessionLog.js'));
  const script = `
    import { SessionLog } from ${JSON.stringify(moduleUrl.href)};
    const log = SessionLog.open(${JSON.stringify(home)}, ${JSON.stringify(sessionId)}, { write: true });
    process.stdout.write('ready\\n');
    process.stdin.resume();
    process.stdin.on('end', () => { log.close(); process.exit(0); });
  `;
  const child: ChildProcess = trackChild(
    spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('ready')) resolve();
    });
    child.on('exit', (code) =>
      reject(new Error(`lease holder exited (${code}) before it was ready: ${stderr}`)),
    );
  });
  return {
    pid: child.pid ?? -1,
    release: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.stdin?.end();
      }),
  };
}
