import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { checkGlobPattern } from '../../../main/tools/glob.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
const put = (rel: string): void => {
  mkdirSync(path.dirname(path.join(t.workspace, rel)), { recursive: true });
  writeFileSync(path.join(t.workspace, rel), 'x');
};
beforeEach(() => {
  t = makeWorkspace();
  for (const rel of [
    'src/b.ts',
    'src/a.ts',
    'src/lib/c.ts',
    'README.md',
    '.hidden.ts',
    '.git/x.ts',
    'node_modules/m/i.ts',
  ]) {
    put(rel);
  }
  writeFileSync(path.join(t.outside, 'secret.ts'), 'x');
  symlinkSync(t.outside, path.join(t.workspace, 'out'));
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('read-only');
const glob = (pattern: unknown): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'glob', arguments: JSON.stringify({ pattern }) }, t.ctx());

describe('glob', () => {
  it('finds files sorted, dotfiles included, .git and node_modules skipped', async () => {
    const outcome = await glob('**/*.ts');
    expect(outcome.content).toBe(['.hidden.ts', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts'].join('\n'));
  });

  it('looks into node_modules when the pattern names it', async () => {
    expect((await glob('node_modules/**/*.ts')).content).toBe('node_modules/m/i.ts');
  });

  it('does not traverse a symlink that leads out of the workspace', async () => {
    expect((await glob('out/**')).content).not.toContain('secret');
    expect((await glob('**/secret.ts')).content).toBe('No files match "**/secret.ts".');
    // Named in the pattern's fixed part, a link to a folder outside (or to /) is still not walked into.
    expect((await glob('out/*')).content).toBe('No files match "out/*".');
    expect((await glob('out/secret.ts')).content).toBe('No files match "out/secret.ts".');
    symlinkSync('/', path.join(t.workspace, 'r'));
    expect((await glob('r/etc/*')).content).toBe('No files match "r/etc/*".');
  });

  it.each([
    ['/etc/*', /absolute/],
    ['../outside/*', /"\.\." segments/],
    ['src/../../outside/*', /"\.\." segments/],
    ['{..,src}/*', /"\.\." segments/],
    ['@(..)/*', /"\.\." segments/],
    ['~/.ssh/*', /"~" is not expanded/],
    ['C:/Windows/*', /absolute/],
  ])('refuses the escaping pattern %s', async (pattern, why) => {
    const outcome = await glob(pattern);
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(why);
  });

  it('allows names that merely contain two dots', () => {
    expect(checkGlobPattern('src/**/*..bak')).toBeNull();
    expect(checkGlobPattern('a..b/*.ts')).toBeNull();
  });

  it('bounds the number of results and says how many there were', async () => {
    mkdirSync(path.join(t.workspace, 'many'));
    for (let i = 0; i < toolLimits.globMaxResults + 20; i++)
      writeFileSync(path.join(t.workspace, 'many', `f${i}.txt`), '');
    const outcome = await glob('many/*.txt');
    const lines = outcome.content.split('\n');
    expect(lines).toHaveLength(toolLimits.globMaxResults + 1);
    expect(lines.at(-1)).toBe(
      `[showing ${toolLimits.globMaxResults} of ${toolLimits.globMaxResults + 20} matches; use a narrower pattern]`,
    );
  });

  it('rejects a non-string pattern as invalid arguments', async () => {
    expect(errorOf((await glob(7)).content)).toBe('invalid arguments: pattern: expected string, got number');
  });
});
