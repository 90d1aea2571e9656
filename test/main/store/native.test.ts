import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { electronBindingRelativePath, resolveNativeBinding } from '../../../main/store/native.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const nodeBuild = join(
  dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')),
  'build/Release/better_sqlite3.node',
);

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-native-'));
  temps.push(dir);
  return dir;
}
/** Puts a real .node file where the layout says the Electron build of `version` lives under `root`. */
function placeBinding(root: string, version: string): string {
  const target = join(root, electronBindingRelativePath(version));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(nodeBuild, target);
  return target;
}

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('resolveNativeBinding under plain Node', () => {
  it('returns undefined so better-sqlite3 loads its own Node build', () => {
    expect(resolveNativeBinding()).toBeUndefined();
    const db = new Database(':memory:');
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    expect(row.v).toMatch(/^3\./);
    db.close();
  });

  it('ignores an Electron build even when one is present', () => {
    const appRoot = tempDir();
    placeBinding(appRoot, '41.7.1');
    expect(resolveNativeBinding({ versions: { node: '20.20.2' }, appRoot })).toBeUndefined();
  });
});

describe('resolveNativeBinding under Electron', () => {
  it('returns the development build in <appRoot>/.native/electron-<version>', () => {
    const appRoot = tempDir();
    const placed = placeBinding(appRoot, '41.7.1');
    const resourcesPath = join(tempDir(), 'electron-dist', 'resources');
    expect(resolveNativeBinding({ versions: { electron: '41.7.1' }, appRoot, resourcesPath })).toBe(placed);
    expect(placed).toBe(join(appRoot, '.native', 'electron-41.7.1', 'better_sqlite3.node'));
  });

  it('prefers the packaged build inside app.asar.unpacked', () => {
    const resourcesPath = tempDir();
    const packaged = placeBinding(join(resourcesPath, 'app.asar.unpacked'), '41.7.1');
    const appRoot = tempDir();
    placeBinding(appRoot, '41.7.1');
    expect(resolveNativeBinding({ versions: { electron: '41.7.1' }, appRoot, resourcesPath })).toBe(packaged);
  });

  it('picks the build of the running Electron version, not another one', () => {
    const appRoot = tempDir();
    placeBinding(appRoot, '40.0.0');
    const current = placeBinding(appRoot, '41.7.1');
    expect(resolveNativeBinding({ versions: { electron: '41.7.1' }, appRoot })).toBe(current);
    expect(() => resolveNativeBinding({ versions: { electron: '42.0.0' }, appRoot })).toThrow(
      /Electron 42\.0\.0/,
    );
  });

  it('returns a path better-sqlite3 accepts as its nativeBinding', () => {
    const appRoot = tempDir();
    // The Node build stands in for the Electron one: this test runs under Node and checks the path, not the ABI.
    placeBinding(appRoot, '41.7.1');
    const binding = resolveNativeBinding({ versions: { electron: '41.7.1' }, appRoot });
    expect(binding).toBeDefined();
    const db = new Database(':memory:', { nativeBinding: binding });
    expect(db.pragma('journal_mode', { simple: true })).toBe('memory');
    db.close();
  });

  it('throws naming the build command when no Electron build exists', () => {
    const appRoot = tempDir();
    expect(() =>
      resolveNativeBinding({ versions: { electron: '41.7.1' }, appRoot, resourcesPath: tempDir() }),
    ).toThrow(/no build for Electron 41\.7\.1.*node scripts\/native-electron\.mjs/);
  });

  it('finds the repo as the app root by default', () => {
    const version = '0.0.0-never-built';
    const expected = join(repoRoot, '.native', `electron-${version}`, 'better_sqlite3.node');
    expect(() => resolveNativeBinding({ versions: { electron: version }, resourcesPath: tempDir() })).toThrow(
      expected,
    );
    const seen: string[] = [];
    const exists = (path: string): boolean => {
      seen.push(path);
      return path === expected || path === join(repoRoot, 'package.json');
    };
    expect(resolveNativeBinding({ versions: { electron: version }, exists })).toBe(expected);
    expect(seen).toContain(join(repoRoot, 'package.json'));
  });
});
