import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
const put = (rel: string, data = 'x'): void => {
  mkdirSync(path.dirname(path.join(t.workspace, rel)), { recursive: true });
  writeFileSync(path.join(t.workspace, rel), data);
};
beforeEach(() => {
  t = makeWorkspace();
  put('b.txt');
  put('a/z.ts');
  put('a/deep/er/file.ts');
  put('.git/config');
  put('node_modules/pkg/index.js');
  writeFileSync(path.join(t.outside, 'secret.txt'), 'x');
  symlinkSync(t.outside, path.join(t.workspace, 'out'));
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('read-only');
const list = (args: Record<string, unknown>): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'list_dir', arguments: JSON.stringify(args) }, t.ctx());

describe('list_dir', () => {
  it('lists a sorted tree two levels deep, marking folders, links and unexpanded folders', async () => {
    const outcome = await list({ path: '.' });
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toBe(
      [
        'workspace root (depth 2):',
        '.git/ (not expanded)',
        'a/',
        'a/deep/',
        'a/z.ts',
        'b.txt',
        'node_modules/ (not expanded)',
        'out@',
      ].join('\n'),
    );
  });

  it('honours depth, and lists a subfolder relative to itself', async () => {
    expect((await list({ path: '.', depth: 1 })).content).not.toContain('a/z.ts');
    const sub = await list({ path: 'a', depth: 3 });
    expect(sub.content).toBe(['a/ (depth 3):', 'deep/', 'deep/er/', 'deep/er/file.ts', 'z.ts'].join('\n'));
  });

  it('never follows a symlink out of the workspace', async () => {
    const outcome = await list({ path: '.', depth: 5 });
    expect(outcome.content).not.toContain('secret.txt');
    const through = await list({ path: 'out' });
    expect(errorOf(through.content)).toMatch(/escapes the workspace/);
  });

  it('refuses escapes, files and missing folders', async () => {
    expect(errorOf((await list({ path: '..' })).content)).toMatch(/^Argument "path".*escapes the workspace/);
    expect(errorOf((await list({ path: 'b.txt' })).content)).toBe(
      'path: "b.txt" is not a directory; use read_file for files',
    );
    expect(errorOf((await list({ path: 'missing' })).content)).toBe('path: "missing" does not exist');
    expect(errorOf((await list({ path: '.', depth: 9 })).content)).toMatch(/^invalid arguments: depth:/);
  });

  it('stops after the entry bound and says how to narrow', async () => {
    mkdirSync(path.join(t.workspace, 'many'));
    for (let i = 0; i < toolLimits.listMaxEntries + 50; i++) {
      writeFileSync(path.join(t.workspace, 'many', `f${String(i).padStart(5, '0')}`), '');
    }
    const outcome = await list({ path: 'many' });
    const lines = outcome.content.split('\n');
    expect(lines).toHaveLength(toolLimits.listMaxEntries + 2);
    expect(lines.at(-1)).toBe(
      `[stopped after ${toolLimits.listMaxEntries} entries; list a subdirectory or lower depth]`,
    );
  });

  it('says when a folder is empty', async () => {
    mkdirSync(path.join(t.workspace, 'empty'));
    expect((await list({ path: 'empty' })).content).toBe('empty/ (depth 2):\n(empty directory)');
  });
});
