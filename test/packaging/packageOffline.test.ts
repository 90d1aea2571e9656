import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The offline `electron-builder --dir` build from STACK.md, run for real against a stub Electron (~15 s).
const repoRoot = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const asar = require('@electron/asar') as {
  listPackage: (archive: string, options: { isPack: boolean }) => string[];
  statFile: (archive: string, file: string) => { unpacked?: boolean; size?: number };
  extractFile: (archive: string, file: string) => Buffer;
};
const electronVersion = (
  JSON.parse(readFileSync(join(repoRoot, 'node_modules/electron/package.json'), 'utf8')) as {
    version: string;
  }
).version;

interface Summary {
  archive: string;
  archiveBytes: number;
  unpackedDir: string;
  unpacked: string[];
  unpackedBytes: number;
  fuses: Record<string, string>;
  nativeStandIn: boolean;
  timings: Record<string, number>;
  violations: string[];
}

let workDir: string;
let summary: Summary;
let files: string[];

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'keel-package-test-'));
  // `npm test` builds first; a bare `vitest run` may not have, so build only when out/ is missing.
  const built = existsSync(join(repoRoot, 'out/main/index.js'));
  const args = [
    'scripts/package-offline.mjs',
    '--work-dir',
    workDir,
    '--json',
    ...(built ? ['--skip-build'] : []),
  ];
  const result = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', timeout: 110_000 });
  const lastLine = result.stdout.trim().split('\n').at(-1) ?? '';
  if (!lastLine.startsWith('{'))
    throw new Error(`package-offline failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  summary = JSON.parse(lastLine) as Summary;
  files = asar.listPackage(summary.archive, { isPack: false }).map((file) => file.replaceAll('\\', '/'));
  console.log(
    `app.asar ${(summary.archiveBytes / 1e6).toFixed(1)} MB (${files.length} entries), unpacked ` +
      `${(summary.unpackedBytes / 1e6).toFixed(1)} MB; electron-builder ${summary.timings['electronBuilder']} s` +
      (summary.nativeStandIn ? '; Node build of better-sqlite3 stood in for the Electron one' : ''),
  );
}, 120_000);

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the offline --dir package', () => {
  it('contains the built main, preload and renderer, and a main entry that exists', () => {
    for (const file of [
      '/out/main/index.js',
      '/out/preload/index.cjs',
      '/out/renderer/index.html',
      '/package.json',
    ]) {
      expect(files).toContain(file);
    }
    const manifest = JSON.parse(asar.extractFile(summary.archive, 'package.json').toString('utf8')) as {
      main: string;
    };
    expect(files).toContain(`/${manifest.main.replace(/^\.\//, '')}`);
  });

  it('holds no test files, TypeScript sources or source maps', () => {
    expect(
      files.filter((file) => /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?js$/.test(file)),
    ).toEqual([]);
    expect(files.filter((file) => /\.(ts|tsx|mts|cts)$/.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(summary.violations).toEqual([]);
  });

  it('leaves renderer-only and build-only packages out', () => {
    const packages = files.filter((file) => /^\/node_modules\/(@[^/]+\/)?[^/]+$/.test(file));
    for (const name of [
      'react',
      'react-dom',
      'monaco-editor',
      '@xterm/xterm',
      'electron',
      'vite',
      'typescript',
    ]) {
      expect(packages).not.toContain(`/node_modules/${name}`);
    }
    expect(packages).toEqual(
      expect.arrayContaining(['/node_modules/better-sqlite3', '/node_modules/node-pty']),
    );
  });

  it('unpacks every native module, including the Electron build of better-sqlite3', () => {
    const native = files.filter((file) => file.endsWith('.node'));
    expect(native).toEqual(
      expect.arrayContaining([
        `/.native/electron-${electronVersion}/better_sqlite3.node`,
        '/node_modules/node-pty/build/Release/pty.node',
      ]),
    );
    for (const file of native) {
      expect(asar.statFile(summary.archive, file.slice(1)).unpacked, file).toBe(true);
      expect(existsSync(join(summary.unpackedDir, file)), file).toBe(true);
    }
    // better-sqlite3's Node build and C sources are not shipped: the app loads the .native build.
    expect(
      files.filter(
        (file) => file.startsWith('/node_modules/better-sqlite3/') && /\/(build|deps|src)\//.test(file),
      ),
    ).toEqual([]);
  });

  it('flips the security fuses in the packaged executable', () => {
    expect(summary.fuses).toMatchObject({
      RunAsNode: 'off',
      EnableCookieEncryption: 'on',
      EnableNodeOptionsEnvironmentVariable: 'off',
      EnableNodeCliInspectArguments: 'off',
      EnableEmbeddedAsarIntegrityValidation: 'on',
      OnlyLoadAppFromAsar: 'on',
    });
  });
});
