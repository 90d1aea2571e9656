import { createHash } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { applyEditOnce, previewFileChange, replaceInText } from '../../../main/tools/fileChange.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolContext, ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
const registry = createToolRegistry('write');
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const abs = (rel: string): string => path.join(t.workspace, rel);
const put = (rel: string, data: string | Buffer): void => {
  mkdirSync(path.dirname(abs(rel)), { recursive: true });
  writeFileSync(abs(rel), data);
};
const run = (name: string, args: Record<string, unknown>, ctx: ToolContext = t.ctx()): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name, arguments: JSON.stringify(args) }, ctx);
const outsideListing = (): string[] => readdirSync(t.outside).sort();

beforeEach(() => {
  t = makeWorkspace();
  put('src/app.ts', 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  writeFileSync(path.join(t.outside, 'target.txt'), 'outside\n');
});
afterEach(() => t.cleanup());

describe('write_file', () => {
  it('creates a file (and its folders) with a null pre-image, the post-image hash and a diff', async () => {
    const outcome = await run('write_file', { path: 'new/dir/hello.txt', content: 'hello\nworld\n' });
    expect(outcome).toMatchObject({
      isError: false,
      path: 'new/dir/hello.txt',
      preImageHash: null,
      postImageHash: sha('hello\nworld\n'),
      content: 'Created new/dir/hello.txt (3 lines, 12 bytes)',
    });
    expect(outcome.diff).toContain('--- /dev/null\n+++ b/new/dir/hello.txt');
    expect(outcome.diff).toContain('@@ -0,0 +1,2 @@\n+hello\n+world\n');
    expect(readFileSync(abs('new/dir/hello.txt'), 'utf8')).toBe('hello\nworld\n');
  });

  it('replaces a file, recording both hashes and a unified diff', async () => {
    const before = readFileSync(abs('src/app.ts'), 'utf8');
    const outcome = await run('write_file', {
      path: 'src/app.ts',
      content: 'const a = 1;\nconst b = 3;\nconst a2 = 1;\n',
    });
    expect(outcome).toMatchObject({
      isError: false,
      preImageHash: sha(before),
      postImageHash: sha('const a = 1;\nconst b = 3;\nconst a2 = 1;\n'),
      content: 'Updated src/app.ts (+1 -1 lines)',
    });
    expect(outcome.diff).toContain(
      '--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n',
    );
  });

  it('writing identical content writes nothing and says so', async () => {
    const outcome = await run('write_file', {
      path: 'src/app.ts',
      content: readFileSync(abs('src/app.ts'), 'utf8'),
    });
    expect(outcome.content).toBe('src/app.ts already has this content; nothing was written');
    expect(outcome.preImageHash).toBe(outcome.postImageHash);
  });

  it.each([
    ['a parent escape', '../outside/new.txt'],
    ['an absolute path outside', '/tmp/keel-tools-escape.txt'],
    ['the workspace root itself', '.'],
  ])('refuses %s', async (_name, arg) => {
    const outcome = await run('write_file', { path: arg, content: 'x' });
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/^Argument "path"/);
    expect(outsideListing()).toEqual(['target.txt']);
    expect(existsSync('/tmp/keel-tools-escape.txt')).toBe(false);
  });

  it('refuses writing through links that lead out: a folder link, a file link and a dangling link', async () => {
    symlinkSync(t.outside, abs('outdir'));
    symlinkSync(path.join(t.outside, 'target.txt'), abs('outfile.txt'));
    symlinkSync(path.join(t.outside, 'not-yet.txt'), abs('dangling.txt'));
    for (const arg of ['outdir/new.txt', 'outfile.txt', 'dangling.txt']) {
      const outcome = await run('write_file', { path: arg, content: 'pwned' });
      expect(outcome.isError, arg).toBe(true);
      expect(errorOf(outcome.content)).toMatch(/escapes the workspace/);
    }
    expect(outsideListing()).toEqual(['target.txt']);
    expect(readFileSync(path.join(t.outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  it('refuses a file with a second hard link (it could be the same inode as a file outside)', async () => {
    linkSync(path.join(t.outside, 'target.txt'), abs('hard.txt'));
    const outcome = await run('write_file', { path: 'hard.txt', content: 'pwned' });
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/hard link/i);
    expect(readFileSync(path.join(t.outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  it('refuses to replace a folder, and rejects non-string content', async () => {
    expect((await run('write_file', { path: 'src', content: 'x' })).isError).toBe(true);
    expect(errorOf((await run('write_file', { path: 'x.txt', content: 42 })).content)).toBe(
      'invalid arguments: content: expected string, got number',
    );
  });

  it('refuses content over the write bound and files too large to change', async () => {
    const big = 'w'.repeat(toolLimits.writeMaxBytes + 1);
    const outcome = await run('write_file', { path: 'big.txt', content: big });
    expect(errorOf(outcome.content)).toBe(
      `content: ${toolLimits.writeMaxBytes + 1} bytes is more than write_file accepts (${toolLimits.writeMaxBytes})`,
    );
    expect(existsSync(abs('big.txt'))).toBe(false);
    put('huge.txt', Buffer.alloc(toolLimits.fileMaxBytes + 1, 0x61));
    const edit = await run('edit_file', { path: 'huge.txt', old_string: 'aaa', new_string: 'b' });
    expect(errorOf(edit.content)).toMatch(/^path: "huge.txt" is too large to change with a tool/);
  });

  it('describes a change to a binary file without a text diff', async () => {
    put('img.bin', Buffer.from([1, 0, 2]));
    const outcome = await run('write_file', { path: 'img.bin', content: 'text now' });
    expect(outcome.diff).toBe('Binary file img.bin changed\n');
  });
});

describe('edit_file', () => {
  it('replaces one unique occurrence and records hashes and a diff', async () => {
    const before = readFileSync(abs('src/app.ts'), 'utf8');
    const outcome = await run('edit_file', {
      path: 'src/app.ts',
      old_string: 'const b = 2;',
      new_string: 'const b = 42;',
    });
    const after = 'const a = 1;\nconst b = 42;\nconst a2 = 1;\n';
    expect(outcome).toMatchObject({ isError: false, preImageHash: sha(before), postImageHash: sha(after) });
    expect(outcome.diff).toContain('-const b = 2;\n+const b = 42;');
    expect(readFileSync(abs('src/app.ts'), 'utf8')).toBe(after);
  });

  it('fails clearly when old_string is missing, and changes nothing', async () => {
    const outcome = await run('edit_file', {
      path: 'src/app.ts',
      old_string: 'const c = 3;',
      new_string: 'x',
    });
    expect(errorOf(outcome.content)).toBe(
      'old_string was not found in "src/app.ts"; read the file and copy the exact text, including whitespace',
    );
    expect(readFileSync(abs('src/app.ts'), 'utf8')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  it('fails clearly when old_string is not unique, unless replace_all is set', async () => {
    const ambiguous = await run('edit_file', {
      path: 'src/app.ts',
      old_string: ' = 1;',
      new_string: ' = 9;',
    });
    expect(errorOf(ambiguous.content)).toBe(
      'old_string occurs 2 times in "src/app.ts"; include more surrounding lines to make it unique, or set replace_all to true',
    );
    const all = await run('edit_file', {
      path: 'src/app.ts',
      old_string: ' = 1;',
      new_string: ' = 9;',
      replace_all: true,
    });
    expect(all.content).toBe('Updated src/app.ts (+2 -2 lines)');
    expect(readFileSync(abs('src/app.ts'), 'utf8')).toBe('const a = 9;\nconst b = 2;\nconst a2 = 9;\n');
  });

  it('keeps $ patterns in new_string literal', () => {
    expect(replaceInText('x = 1', { path: 'p', old_string: '1', new_string: "$&$1$'" }, 'p')).toBe(
      "x = $&$1$'",
    );
  });

  it('edits a CRLF file given LF text, keeping CRLF', async () => {
    put('win.txt', 'one\r\ntwo\r\nthree\r\n');
    const outcome = await run('edit_file', { path: 'win.txt', old_string: 'one\ntwo', new_string: 'one\n2' });
    expect(outcome.isError).toBe(false);
    expect(readFileSync(abs('win.txt'), 'utf8')).toBe('one\r\n2\r\nthree\r\n');
  });

  it.each([
    [
      { path: 'src/app.ts', old_string: '', new_string: 'x' },
      /^invalid arguments: old_string: must not be empty/,
    ],
    [{ path: 'src/app.ts', old_string: 'a', new_string: 'a' }, /identical/],
    [{ path: 'missing.ts', old_string: 'a', new_string: 'b' }, /does not exist; use write_file/],
    [{ path: 'src/app.ts', old_string: 'a' }, /^invalid arguments: new_string: required/],
    [
      { path: 'src/app.ts', old_string: 'a', new_string: 'b', replace_all: 'yes' },
      /replace_all: expected boolean/,
    ],
  ])('rejects bad input %#', async (args, why) => {
    const outcome = await run('edit_file', args);
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(why);
  });

  it('refuses binary files', async () => {
    put('b.bin', Buffer.from([97, 0, 98]));
    const outcome = await run('edit_file', { path: 'b.bin', old_string: 'a', new_string: 'c' });
    expect(errorOf(outcome.content)).toBe(
      'path: "b.bin" is a binary file; edit_file changes text files only',
    );
  });
});

describe('protected paths', () => {
  it.each([
    ['.git/hooks/pre-commit', /\.git/],
    ['.keel/settings.json', /\.keel/],
    ['.vscode/tasks.json', /\.vscode/],
  ])('%s is not written without approval; the outcome carries the reason and the diff', async (rel, why) => {
    const outcome = await run('write_file', { path: rel, content: '#!/bin/sh\necho hi\n' });
    expect(outcome.isError).toBe(true);
    expect(outcome.approvalRequired).toMatch(why);
    expect(errorOf(outcome.content)).toMatch(/^approval required: .*; the change was not made$/);
    expect(outcome.diff).toContain('+echo hi');
    expect(existsSync(abs(rel))).toBe(false);
  });

  it('an approved call writes the protected path', async () => {
    const outcome = await run(
      'write_file',
      { path: '.git/hooks/pre-commit', content: 'ok\n' },
      t.ctx({ approved: true }),
    );
    expect(outcome.isError).toBe(false);
    expect(readFileSync(abs('.git/hooks/pre-commit'), 'utf8')).toBe('ok\n');
  });

  it('user globs protect too, also for edits', async () => {
    put('secrets/prod.env', 'A=1\n');
    const ctx = t.ctx({ protectedGlobs: ['secrets/'] });
    const outcome = await run(
      'edit_file',
      { path: 'secrets/prod.env', old_string: 'A=1', new_string: 'A=2' },
      ctx,
    );
    expect(outcome.approvalRequired).toMatch(/protected pattern "secrets\/"/);
    expect(readFileSync(abs('secrets/prod.env'), 'utf8')).toBe('A=1\n');
  });

  it('a link inside the workspace pointing into .git is protected too', async () => {
    mkdirSync(abs('.git/hooks'), { recursive: true });
    symlinkSync(abs('.git/hooks'), abs('hooks'));
    const outcome = await run('write_file', { path: 'hooks/post-checkout', content: 'x' });
    expect(outcome.approvalRequired).toMatch(/\.git/);
    expect(existsSync(abs('.git/hooks/post-checkout'))).toBe(false);
  });
});

describe('previewFileChange', () => {
  it('returns the diff, hashes and plan it would apply, without writing', async () => {
    const before = readFileSync(abs('src/app.ts'), 'utf8');
    const preview = await previewFileChange(
      { path: 'src/app.ts', old_string: 'const b = 2;', new_string: 'const b = 5;' },
      t.ctx(),
    );
    if (!preview.ok) throw new Error('expected a preview');
    expect(preview.subject).toEqual({ path: 'src/app.ts' });
    expect(preview.images?.preImageHash).toBe(sha(before));
    expect(preview.images?.postImageHash).toBe(sha(before.replace('const b = 2;', 'const b = 5;')));
    expect(preview.diff).toContain('+const b = 5;');
    expect(preview.protectedReason).toBeNull();
    expect(preview.plan).toMatchObject({ path: 'src/app.ts', added: 1, removed: 1 });
    expect(readFileSync(abs('src/app.ts'), 'utf8')).toBe(before);
  });

  it('names why a protected target needs approval, and reports an edit that cannot apply as an error', async () => {
    const hook = await previewFileChange({ path: '.git/hooks/pre-push', content: 'x' }, t.ctx());
    expect(hook.ok && hook.protectedReason).toMatch(/\.git/);
    expect(existsSync(abs('.git/hooks/pre-push'))).toBe(false);
    const vscode = await previewFileChange({ path: '.vscode/x', content: 'x' }, t.ctx());
    expect(vscode.ok && vscode.protectedReason).toMatch(/\.vscode/);
    const bad = await previewFileChange({ path: 'src/app.ts', old_string: 'nope', new_string: 'x' }, t.ctx());
    expect(bad.ok).toBe(false);
    expect(errorOf(bad.ok ? '' : bad.outcome.content)).toMatch(/not found/);
    const escape = await previewFileChange({ path: '../escape', content: '' }, t.ctx());
    expect(escape.ok).toBe(false);
  });

  it('produces the same diff twice for the same state (the gate compares them)', async () => {
    const args = { path: 'src/app.ts', old_string: 'const b = 2;', new_string: 'const b = 6;' };
    const diffOf = async () => {
      const preview = await previewFileChange(args, t.ctx());
      return preview.ok ? preview.diff : undefined;
    };
    expect(await diffOf()).toBe(await diffOf());
  });
});

describe('applyEditOnce (crash-resume)', () => {
  const args = { path: 'src/app.ts', old_string: 'const b = 2;', new_string: 'const b = 7;' };
  const pre = (): string => sha('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  const post = (): string => sha('const a = 1;\nconst b = 7;\nconst a2 = 1;\n');

  it('applies the edit when the file still has the pre-image', async () => {
    const outcome = await applyEditOnce(args, t.ctx(), { preImageHash: pre(), postImageHash: post() });
    expect(outcome).toMatchObject({ isError: false, preImageHash: pre(), postImageHash: post() });
    expect(outcome.alreadyApplied).toBeUndefined();
    expect(sha(readFileSync(abs('src/app.ts'), 'utf8'))).toBe(post());
  });

  it('skips and says "already applied" when the file has the post-image', async () => {
    await run('edit_file', args);
    const outcome = await applyEditOnce(args, t.ctx(), { preImageHash: pre(), postImageHash: post() });
    expect(outcome).toMatchObject({ isError: false, alreadyApplied: true });
    expect(outcome.content).toBe('already applied: src/app.ts already has the expected content');
    expect(sha(readFileSync(abs('src/app.ts'), 'utf8'))).toBe(post());
  });

  it('reports a conflict and writes nothing when the file has neither image', async () => {
    put('src/app.ts', 'const b = 2;\nsomeone else changed this\n');
    const outcome = await applyEditOnce(args, t.ctx(), { preImageHash: pre(), postImageHash: post() });
    expect(outcome).toMatchObject({ isError: true, conflict: true });
    expect(errorOf(outcome.content)).toMatch(/^conflict: src\/app.ts changed since this edit was planned/);
    expect(readFileSync(abs('src/app.ts'), 'utf8')).toBe('const b = 2;\nsomeone else changed this\n');
  });

  it('handles a new file: absent = pre-image null', async () => {
    const create = { path: 'made.txt', content: 'made\n' };
    const images = { preImageHash: null, postImageHash: sha('made\n') };
    expect((await applyEditOnce(create, t.ctx(), images)).isError).toBe(false);
    expect((await applyEditOnce(create, t.ctx(), images)).alreadyApplied).toBe(true);
    put('made.txt', 'other\n');
    expect((await applyEditOnce(create, t.ctx(), images)).conflict).toBe(true);
  });

  it('re-checks protection on resume unless the call was approved', async () => {
    const create = { path: '.keel/x.json', content: '{}' };
    const images = { preImageHash: null, postImageHash: sha('{}') };
    expect((await applyEditOnce(create, t.ctx(), images)).approvalRequired).toMatch(/\.keel/);
    expect((await applyEditOnce(create, t.ctx({ approved: true }), images)).isError).toBe(false);
  });
});
