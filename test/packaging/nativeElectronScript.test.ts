import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { electronBindingRelativePath } from '../../main/store/native.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const script = join(repoRoot, 'scripts', 'native-electron.mjs');
const electronVersion = (
  JSON.parse(readFileSync(join(repoRoot, 'node_modules/electron/package.json'), 'utf8')) as {
    version: string;
  }
).version;

interface Plan {
  output: string;
  argv: string[];
  removedEnv: string[];
  envKeys: string[];
  relevantEnv: Record<string, string>;
}

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-native-script-'));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string>, scriptPath = script) {
  const base = { ...process.env };
  delete base['KEEL_SKIP_NATIVE_ELECTRON'];
  return spawnSync(process.execPath, [scriptPath, ...args], {
    env: { ...base, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

/** A loopback port with nothing listening: stands in for "offline" without sending traffic anywhere. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A copy of the scripts with a fake node_modules, so no-op and rebuild decisions are tested without the real repo. */
function fakeRepo(betterSqlite: string): string {
  const root = tempDir();
  mkdirSync(join(root, 'scripts'));
  for (const file of ['native-electron.mjs', 'native-layout.mjs']) {
    copyFileSync(join(repoRoot, 'scripts', file), join(root, 'scripts', file));
  }
  for (const [name, version] of [
    ['electron', '41.7.1'],
    ['better-sqlite3', betterSqlite],
  ] as const) {
    mkdirSync(join(root, 'node_modules', name), { recursive: true });
    writeFileSync(join(root, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
  }
  return root;
}

describe('scripts/native-electron.mjs', () => {
  it('builds for the installed Electron with no nodedir from npm or ~/.npmrc (--dry-run)', () => {
    const result = run(['--dry-run'], {
      npm_config_nodedir: '/usr',
      NPM_CONFIG_NODEDIR: '/usr',
      nodedir: '/usr',
      npm_package_config_node_gyp_nodedir: '/usr',
      npm_config_target: '20.20.2',
      npm_config_runtime: 'node',
      npm_config_https_proxy: 'http://127.0.0.1:3128',
    });
    expect(result.status, result.stderr).toBe(0);
    const plan = JSON.parse(result.stdout) as Plan;

    expect(plan.argv).toContain(`--target=${electronVersion}`);
    expect(plan.argv).toContain('--runtime=electron');
    expect(plan.argv).toContain('--dist-url=https://electronjs.org/headers');
    expect(plan.argv.some((arg) => /nodedir/i.test(arg))).toBe(false);
    expect(plan.envKeys.filter((key) => /nodedir|^npm_config_(target|runtime)$/i.test(key))).toEqual([]);
    expect(plan.removedEnv).toEqual(
      expect.arrayContaining(['npm_config_nodedir', 'NPM_CONFIG_NODEDIR', 'nodedir', 'npm_config_target']),
    );
    // Network settings still reach node-gyp, so a desktop behind a proxy can fetch the headers.
    expect(plan.relevantEnv['npm_config_https_proxy']).toBe('http://127.0.0.1:3128');
    const npmConfigKept = plan.envKeys.filter((key) => /^npm_config_/i.test(key));
    expect(
      npmConfigKept.every((key) =>
        /_(https?_proxy|proxy|noproxy|no_proxy|cafile|strict_ssl|python|jobs)$/i.test(key),
      ),
    ).toBe(true);
    // The script writes exactly where main/store/native.ts looks.
    expect(plan.output).toBe(join(repoRoot, electronBindingRelativePath(electronVersion)));
  });

  it('does nothing when KEEL_SKIP_NATIVE_ELECTRON=1', () => {
    const result = run([], {
      KEEL_SKIP_NATIVE_ELECTRON: '1',
      KEEL_ELECTRON_HEADERS_URL: 'http://127.0.0.1:1/x',
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/skipped \(KEEL_SKIP_NATIVE_ELECTRON=1\)/);
  });

  it('fails fast with one readable message when the headers cannot be downloaded', async () => {
    const port = await closedPort();
    const result = run(['--force'], {
      KEEL_ELECTRON_HEADERS_URL: `http://127.0.0.1:${port}/headers`,
      KEEL_ELECTRON_GYP_DIR: tempDir(),
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Cannot download Electron .*'s headers \(connect ECONNREFUSED/);
    expect(result.stderr).toMatch(/Connect to the internet/);
    expect(result.stderr).not.toMatch(/gyp ERR|\n\s+at /);
  });

  it('is a no-op when the build for this Electron and better-sqlite3 is present', () => {
    const root = fakeRepo('12.11.1');
    const dir = join(root, '.native', 'electron-41.7.1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'better_sqlite3.node'), 'built');
    writeFileSync(join(dir, 'build.json'), JSON.stringify({ electron: '41.7.1', betterSqlite3: '12.11.1' }));
    const result = run(
      [],
      { KEEL_ELECTRON_HEADERS_URL: 'http://127.0.0.1:1/x' },
      join(root, 'scripts', 'native-electron.mjs'),
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Electron 41\.7\.1 build of better-sqlite3 12\.11\.1 present/);
  });

  it('rebuilds when better-sqlite3 was upgraded since the Electron build', async () => {
    const root = fakeRepo('12.12.0');
    const dir = join(root, '.native', 'electron-41.7.1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'better_sqlite3.node'), 'built');
    writeFileSync(join(dir, 'build.json'), JSON.stringify({ electron: '41.7.1', betterSqlite3: '12.11.1' }));
    const port = await closedPort();
    const result = run(
      [],
      { KEEL_ELECTRON_HEADERS_URL: `http://127.0.0.1:${port}/h`, KEEL_ELECTRON_GYP_DIR: tempDir() },
      join(root, 'scripts', 'native-electron.mjs'),
    );
    expect(result.stdout).toMatch(/building better-sqlite3 12\.12\.0 for Electron 41\.7\.1/);
    expect(result.status).toBe(1);
  });
});
