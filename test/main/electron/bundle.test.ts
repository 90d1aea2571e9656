import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { resolveConfig } from 'electron-vite';
import { build, type InlineConfig } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir, REPO_ROOT, removeTempDir } from '../../support/cli.js';

/*
 * electron-vite leaves dependencies external in the main bundle, so the packaged app loads them from the
 * archive's node_modules, which holds only package.json "dependencies". This builds main/electron with the
 * project's own electron.vite.config.ts and checks every package the bundle imports is one of those.
 */

const outDir = makeTempDir('keel-main-bundle-');

afterAll(() => removeTempDir(outDir));

describe('the Electron main bundle', () => {
  it('builds, and imports only Node built-ins, electron and production dependencies', async () => {
    const resolved = await resolveConfig(
      { configFile: path.join(REPO_ROOT, 'electron.vite.config.ts'), root: REPO_ROOT },
      'build',
      'production',
    );
    const main: InlineConfig | undefined = resolved.config?.main;
    if (!main) throw new Error('electron.vite.config.ts has no main section');
    await build({
      ...main,
      configFile: false,
      logLevel: 'silent',
      build: { ...main.build, outDir, emptyOutDir: true },
    });
    const code = fs
      .readdirSync(outDir, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.[cm]?js$/.test(file))
      .map((file) => fs.readFileSync(path.join(outDir, file), 'utf8'))
      .join('\n');
    expect(code).toContain('keel://');
    const specifiers = new Set(
      // A specifier is a package name or path (no spaces or commas): the text `"import",\n` in a bundled
      // string table (the command flags of node -e/--import) is not an import.
      [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"'./\s,][^"'\s,]*)["']/g)].map(
        (m) => m[1] as string,
      ),
    );
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const packageOf = (specifier: string) =>
      specifier.startsWith('@')
        ? specifier.split('/').slice(0, 2).join('/')
        : (specifier.split('/')[0] as string);
    const builtins = new Set(builtinModules);
    const strays = [...specifiers].filter(
      (specifier) =>
        !specifier.startsWith('node:') &&
        !builtins.has(specifier) &&
        packageOf(specifier) !== 'electron' &&
        manifest.dependencies[packageOf(specifier)] === undefined,
    );
    expect(strays).toEqual([]);
    expect([...specifiers].map(packageOf)).toEqual(
      expect.arrayContaining(['electron', 'zod', 'better-sqlite3', 'node-pty']),
    );
  }, 120_000);
});
