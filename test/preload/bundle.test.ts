import fs from 'node:fs';
import path from 'node:path';
import { resolveConfig } from 'electron-vite';
import { build, type InlineConfig } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir, REPO_ROOT, removeTempDir } from '../support/cli.js';

/*
 * A sandboxed preload can require only `electron` (and a few Node built-ins Electron provides): anything else
 * must be bundled in. This builds the preload with the project's own electron.vite.config.ts into a temp
 * folder and reads what the bundle requires.
 */

const outDir = makeTempDir('keel-preload-');

afterAll(() => removeTempDir(outDir));

describe('the preload bundle', () => {
  it('requires nothing but electron, so it loads in a sandboxed renderer', async () => {
    const resolved = await resolveConfig(
      { configFile: path.join(REPO_ROOT, 'electron.vite.config.ts'), root: REPO_ROOT },
      'build',
      'production',
    );
    const preload: InlineConfig | undefined = resolved.config?.preload;
    if (!preload) throw new Error('electron.vite.config.ts has no preload section');
    await build({
      ...preload,
      configFile: false,
      logLevel: 'silent',
      build: { ...preload.build, outDir, emptyOutDir: true },
    });
    const files = fs.readdirSync(outDir).filter((file) => file.endsWith('.cjs') || file.endsWith('.js'));
    expect(files).toEqual(['index.cjs']);
    const code = fs.readFileSync(path.join(outDir, 'index.cjs'), 'utf8');
    const required = [
      ...new Set([...code.matchAll(/require\(["']([^"']+)["']\)/g)].map((match) => match[1])),
    ];
    // Failing here with "zod" means electron.vite.config.ts must bundle the preload's dependencies:
    // preload.build.externalizeDeps = false.
    expect(required).toEqual(['electron']);
    expect(code).not.toMatch(/\bipcRenderer\.send\b|\bipcRenderer\.sendSync\b/);
  }, 60_000);
});
