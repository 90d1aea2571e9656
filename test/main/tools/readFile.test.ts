import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
beforeEach(() => {
  t = makeWorkspace();
  writeFileSync(path.join(t.outside, 'secret.txt'), 'outside secret\n');
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('read-only');
const read = (args: Record<string, unknown>): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'read_file', arguments: JSON.stringify(args) }, t.ctx());
const put = (rel: string, data: string | Buffer): void => {
  mkdirSync(path.dirname(path.join(t.workspace, rel)), { recursive: true });
  writeFileSync(path.join(t.workspace, rel), data);
};

describe('read_file', () => {
  it('returns numbered lines like cat -n', async () => {
    put('src/a.ts', 'const a = 1;\n\nexport { a };\n');
    const outcome = await read({ path: 'src/a.ts' });
    expect(outcome).toMatchObject({ isError: false, path: 'src/a.ts' });
    expect(outcome.content).toBe('     1\tconst a = 1;\n     2\t\n     3\texport { a };');
  });

  it('pages with offset and limit and says where to continue', async () => {
    put('n.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const outcome = await read({ path: 'n.txt', offset: 3, limit: 2 });
    expect(outcome.content).toBe('     3\tline 3\n     4\tline 4\n[lines 3-4 of 10; continue with offset=5]');
    const tail = await read({ path: 'n.txt', offset: 9 });
    expect(tail.content).toBe('     9\tline 9\n    10\tline 10');
  });

  it('takes offset and limit as the JSON numbers the schema names, and says how to fix what it refuses', async () => {
    put('n.txt', 'a\nb\nc\n');
    // What Claude and GPT models send: numbers. A string, a null, a 0-based offset are refused with the fix.
    expect((await read({ path: 'n.txt', offset: 2, limit: 1 })).content).toBe(
      '     2\tb\n[lines 2-2 of 3; continue with offset=3]',
    );
    const text = await read({ path: 'n.txt', offset: '2', limit: '1' });
    expect(errorOf(text.content)).toBe(
      'invalid arguments: offset: expected number, got string "2" (send the number without quotes: 2); ' +
        'limit: expected number, got string "1" (send the number without quotes: 1)',
    );
    expect(errorOf((await read({ path: 'n.txt', offset: null })).content)).toBe(
      'invalid arguments: offset: expected number, got null (leave the argument out to use its default)',
    );
    expect(errorOf((await read({ path: null })).content)).toBe(
      'invalid arguments: path: expected string, got null',
    );
    expect(errorOf((await read({ path: 'n.txt', offset: 0 })).content)).toBe(
      'invalid arguments: offset: must be at least 1, got 0',
    );
    expect(errorOf((await read({ path: 'n.txt', limit: 20_000 })).content)).toBe(
      `invalid arguments: limit: must be at most ${toolLimits.readMaxLines}, got 20000`,
    );
    expect(errorOf((await read({ path: 'n.txt', limit: 'all' })).content)).toBe(
      'invalid arguments: limit: expected number, got string',
    );
  });

  it('refuses an offset past the end', async () => {
    put('n.txt', 'a\nb\n');
    const outcome = await read({ path: 'n.txt', offset: 5 });
    expect(errorOf(outcome.content)).toBe('offset: 5 is past the end of "n.txt" (2 lines)');
  });

  it('shows CRLF files without carriage returns, and an empty file as empty', async () => {
    put('crlf.txt', 'a\r\nb\r\n');
    expect((await read({ path: 'crlf.txt' })).content).toBe('     1\ta\n     2\tb');
    put('empty.txt', '');
    expect((await read({ path: 'empty.txt' })).content).toBe('(empty.txt is empty)');
  });

  it('cuts very long lines and bounds the whole output', async () => {
    put('long.txt', 'x'.repeat(50_000) + '\nshort\n');
    const long = await read({ path: 'long.txt' });
    expect(long.content).toContain('[line cut]');
    expect(long.content.length).toBeLessThan(toolLimits.readMaxLineChars + 100);
    put('many.txt', Array.from({ length: 9000 }, () => 'y'.repeat(100)).join('\n'));
    const many = await read({ path: 'many.txt', limit: 9000 });
    expect(many.content.length).toBeLessThanOrEqual(toolLimits.readMaxOutputChars + 200);
    expect(many.content).toMatch(/\[lines 1-\d+ of 9000; continue with offset=\d+\]$/);
  });

  it('reads the head of a file larger than the read bound and says so', async () => {
    const line = 'z'.repeat(1023) + '\n';
    put('huge.log', line.repeat(Math.ceil(toolLimits.fileMaxBytes / 1024) + 64));
    const outcome = await read({ path: 'huge.log', limit: 3 });
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toMatch(/^ {5}1\tz+\n {5}2\tz+/);
    expect(outcome.content).toMatch(/\[lines 1-3 of 16384\+; continue with offset=4\]/);
    const end = await read({ path: 'huge.log', offset: 16384 });
    expect(end.content).toMatch(/read_file reads only its first 16777216 bytes/);
  });

  it('refuses binary files with a clear message', async () => {
    put('img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]));
    const outcome = await read({ path: 'img.png' });
    expect(errorOf(outcome.content)).toBe(
      'path: "img.png" is a binary file (7 bytes); read_file shows text files only',
    );
  });

  it('refuses directories, missing files and FIFOs without blocking', async () => {
    mkdirSync(path.join(t.workspace, 'dir'));
    expect(errorOf((await read({ path: 'dir' })).content)).toMatch(/is a directory; use list_dir/);
    expect(errorOf((await read({ path: 'nope.txt' })).content)).toBe('path: "nope.txt" does not exist');
    execFileSync('mkfifo', [path.join(t.workspace, 'pipe')]);
    expect(errorOf((await read({ path: 'pipe' })).content)).toBe('path: "pipe" is not a regular file');
  });

  it.each([
    ['a parent escape', '../outside/secret.txt'],
    ['an absolute path outside', '/etc/passwd'],
    ['a deep escape', 'a/../../outside/secret.txt'],
    ['a home path', '~/.ssh/id_rsa'],
    ['a NUL byte', 'a.txt\u0000.png'],
  ])('refuses %s', async (_name, arg) => {
    const outcome = await read({ path: arg });
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/^Argument "path"/);
    expect(outcome.content).not.toContain('outside secret');
  });

  it('refuses a symlink that points out of the workspace, file or folder', async () => {
    symlinkSync(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'link.txt'));
    symlinkSync(t.outside, path.join(t.workspace, 'linkdir'));
    for (const arg of ['link.txt', 'linkdir/secret.txt']) {
      const outcome = await read({ path: arg });
      expect(errorOf(outcome.content)).toMatch(/escapes the workspace/);
      expect(outcome.content).not.toContain('outside secret');
    }
  });

  it('follows a symlink that stays inside, and accepts an absolute path inside', async () => {
    put('real.txt', 'inside\n');
    symlinkSync('real.txt', path.join(t.workspace, 'alias.txt'));
    expect((await read({ path: 'alias.txt' })).content).toBe('     1\tinside');
    expect((await read({ path: path.join(t.workspace, 'real.txt') })).content).toBe('     1\tinside');
  });
});
