import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);

type Config = Record<string, unknown>;
// electron-builder's own loader and schema validator (app-builder-lib is what the electron-builder CLI runs).
const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
  getConfig: (projectDir: string, configPath: string | null, options: Config | null) => Promise<Config>;
  validateConfiguration: (config: Config, debugLogger: unknown) => Promise<void>;
};
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
const yaml = require('js-yaml') as { load: (text: string) => unknown };
const { minimatch } = require('minimatch') as {
  minimatch: (path: string, pattern: string, options: { dot: boolean }) => boolean;
};

interface PlatformConfig {
  target: string[];
  icon: string;
  category?: string;
  files?: string[];
}
interface KeelBuilderConfig {
  appId: string;
  productName: string;
  directories: { output: string; buildResources: string };
  npmRebuild: boolean;
  beforePack: string;
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
  linux: PlatformConfig;
  mac: PlatformConfig;
  win: PlatformConfig;
}

const raw = yaml.load(readFileSync(join(repoRoot, 'electron-builder.yml'), 'utf8')) as KeelBuilderConfig;

async function validate(config: Config): Promise<void> {
  await validateConfiguration(config, new DebugLogger(false));
}

function pngSize(file: string): { width: number; height: number } {
  const bytes = readFileSync(file);
  expect(bytes.subarray(1, 4).toString('ascii')).toBe('PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('electron-builder.yml', () => {
  it("passes electron-builder's own schema validation as electron-builder loads it", async () => {
    const loaded = await getConfig(repoRoot, null, null);
    expect(loaded['appId']).toBe('dev.keel.app');
    await expect(validate(loaded)).resolves.toBeUndefined();
  });

  it('fails validation when a key is misspelt, at the top level or inside a platform', async () => {
    await expect(validate({ ...raw, asarUnpak: raw.asarUnpack })).rejects.toThrow(/asarUnpak/);
    await expect(validate({ ...raw, linux: { ...raw.linux, categroy: 'Development' } })).rejects.toThrow(
      /configuration\.linux/,
    );
    await expect(validate({ ...raw, electronFuses: { runAsNod: false } })).rejects.toThrow(
      /configuration\.electronFuses|runAsNod/,
    );
  });

  it('names the app and targets Linux (AppImage, deb), macOS (dmg) and Windows (nsis)', () => {
    expect(raw.appId).toBe('dev.keel.app');
    expect(raw.productName).toBe('Keel');
    expect(raw.directories.output).toBe('release');
    expect(raw.linux.target).toEqual(['AppImage', 'deb']);
    expect(raw.linux.category).toBe('Development');
    expect(raw.mac.target).toEqual(['dmg']);
    expect(raw.mac.category).toBe('public.app-category.developer-tools');
    expect(raw.win.target).toEqual(['nsis']);
  });

  it('uses icons from assets/ at the sizes each platform needs', () => {
    expect(raw.directories.buildResources).toBe('assets');
    for (const platform of [raw.mac, raw.win]) {
      expect(pngSize(join(repoRoot, platform.icon))).toEqual({ width: 1024, height: 1024 });
    }
    expect(raw.linux.icon).toBe('assets/icons');
    for (const size of [16, 32, 48, 64, 128, 256, 512]) {
      expect(pngSize(join(repoRoot, raw.linux.icon, `${size}x${size}.png`))).toEqual({
        width: size,
        height: size,
      });
    }
  });

  it('unpacks every native module from the asar archive', () => {
    const mustUnpack = [
      '.native/electron-41.7.1/better_sqlite3.node',
      'node_modules/node-pty/build/Release/pty.node',
      'node_modules/node-pty/build/Release/spawn-helper',
      'node_modules/node-pty/prebuilds/darwin-arm64/spawn-helper',
      'node_modules/node-pty/prebuilds/win32-x64/conpty/OpenConsole.exe',
      'node_modules/some-addon/build/Release/addon.node',
    ];
    for (const file of mustUnpack) {
      expect(
        raw.asarUnpack.some((pattern) => minimatch(file, pattern, { dot: true })),
        file,
      ).toBe(true);
    }
    expect(raw.asarUnpack.some((pattern) => minimatch('out/main/index.js', pattern, { dot: true }))).toBe(
      false,
    );
  });

  it('ships the built app and the Electron build of better-sqlite3, not sources or maps', () => {
    expect(raw.files).toEqual(
      expect.arrayContaining([
        'out/**',
        'package.json',
        '.native/electron-*/better_sqlite3.node',
        '!**/*.map',
      ]),
    );
    expect(raw.files).toContain('!**/node_modules/better-sqlite3/{build,deps,src}/**');
    // We ship our own Electron build; an electron-builder rebuild would fall into the nodedir trap (STACK.md).
    expect(raw.npmRebuild).toBe(false);
  });

  it('burns the security fuses into the binary', () => {
    expect(raw.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });

  it('keeps renderer-only packages out of dependencies so they never reach the archive', () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const rendererOnly =
      /^(react|react-dom|monaco-editor|@monaco-editor\/.*|@xterm\/.*|electron|vite|@vitejs\/.*)$/;
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => rendererOnly.test(name))).toEqual([]);
  });
});

describe('the beforePack hook', () => {
  type Hook = (context: unknown) => void;
  const load = async (): Promise<Hook> =>
    ((await import(pathToFileURL(join(repoRoot, raw.beforePack)).href)) as { default: Hook }).default;
  const context = (projectDir: string) => ({
    packager: { projectDir, config: { electronVersion: '41.7.1' } },
  });

  it('refuses to package without the Electron build of better-sqlite3, naming the command to run', async () => {
    const hook = await load();
    const projectDir = mkdtempSync(join(tmpdir(), 'keel-hook-'));
    try {
      expect(() => hook(context(projectDir))).toThrow(
        /Electron 41\.7\.1 build of better-sqlite3 is missing.*native-electron/,
      );
      mkdirSync(join(projectDir, '.native', 'electron-41.7.1'), { recursive: true });
      writeFileSync(join(projectDir, '.native', 'electron-41.7.1', 'better_sqlite3.node'), '');
      expect(() => hook(context(projectDir))).not.toThrow();
    } finally {
      rmSync(projectDir, { recursive: true, force: true });
    }
    expect(existsSync(projectDir)).toBe(false);
  });
});
