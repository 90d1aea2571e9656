import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPatchTool, writePlan } from '../../../main/tools/applyPatch.js';
import { executeToolCall } from '../../../main/tools/execute.js';
import { parsePatch } from '../../../main/tools/patchParse.js';
import { planPatch } from '../../../main/tools/patchPlan.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ExpectedImages, ToolContext, ToolOutcome } from '../../../main/tools/types.js';
import {
  TEST_SECRET,
  errorOf,
  makeSessionBox,
  makeWorkspace,
  type TempSessionBox,
  type TempWorkspace,
} from './helpers.js';

let t: TempWorkspace;
const registry = createToolRegistry('write');
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const abs = (rel: string): string => path.join(t.workspace, rel);
const put = (rel: string, data: string): void => {
  mkdirSync(path.dirname(abs(rel)), { recursive: true });
  writeFileSync(abs(rel), data);
};
const read = (rel: string): string => readFileSync(abs(rel), 'utf8');
const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
const run = (input: string, ctx: ToolContext = t.ctx()): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'apply_patch', arguments: JSON.stringify({ input }) }, ctx);

const APP = ['import os', '', 'def greet():', '    print("Hi")', '', 'def main():', '    greet()', ''].join(
  '\n',
);

beforeEach(() => {
  t = makeWorkspace();
  put('src/app.py', APP);
  put('old/name.txt', 'one\ntwo\n');
  put('obsolete.txt', 'bye\n');
});
afterEach(() => t.cleanup());

describe('apply_patch: the Codex format', () => {
  it('adds, updates, moves and deletes several files in one call, with a combined diff', async () => {
    const outcome = await run(
      patch(
        '*** Add File: docs/hello.md',
        '+# Hello',
        '+world',
        '*** Update File: src/app.py',
        '@@ def greet():',
        '-    print("Hi")',
        '+    print("Hello, world!")',
        '*** Update File: old/name.txt',
        '*** Move to: renamed/dir/name.txt',
        '@@',
        ' one',
        '-two',
        '+three',
        '*** Delete File: obsolete.txt',
      ),
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toBe(
      [
        'Applied the patch to 5 files:',
        'A docs/hello.md (+2 -0)',
        'M src/app.py (+1 -1)',
        'R old/name.txt -> renamed/dir/name.txt (+1 -1)',
        'D obsolete.txt',
      ].join('\n'),
    );
    expect(read('docs/hello.md')).toBe('# Hello\nworld\n');
    expect(read('src/app.py')).toBe(APP.replace('print("Hi")', 'print("Hello, world!")'));
    expect(read('renamed/dir/name.txt')).toBe('one\nthree\n');
    expect(existsSync(abs('old/name.txt'))).toBe(false);
    expect(existsSync(abs('obsolete.txt'))).toBe(false);
    const diff = outcome.diff ?? '';
    expect(diff).toContain('--- /dev/null\n+++ b/docs/hello.md');
    expect(diff).toContain('--- a/src/app.py\n+++ b/src/app.py');
    expect(diff).toContain('--- a/old/name.txt\n+++ b/renamed/dir/name.txt');
    expect(diff).toContain('--- a/obsolete.txt\n+++ /dev/null');
  });

  it('applies several hunks of one file in order, each after the previous one', async () => {
    put('list.txt', ['a', 'x', 'b', 'c', 'd', 'e', 'f', 'x', 'g', ''].join('\n'));
    const outcome = await run(
      patch('*** Update File: list.txt', '@@', ' a', '-x', '+first', ' b', '@@', ' f', '-x', '+second', ' g'),
    );
    expect(outcome.isError).toBe(false);
    expect(read('list.txt')).toBe(['a', 'first', 'b', 'c', 'd', 'e', 'f', 'second', 'g', ''].join('\n'));
  });

  it('uses @@ headers to find the right one of repeated lines, and inserts after a header with no old lines', async () => {
    put('two.py', ['class A:', '    x = 1', 'class B:', '    x = 1', ''].join('\n'));
    await run(patch('*** Update File: two.py', '@@ class B:', '-    x = 1', '+    x = 2'));
    expect(read('two.py')).toBe(['class A:', '    x = 1', 'class B:', '    x = 2', ''].join('\n'));
    await run(patch('*** Update File: two.py', '@@ class A:', '+    y = 0'));
    expect(read('two.py')).toBe(
      ['class A:', '    y = 0', '    x = 1', 'class B:', '    x = 2', ''].join('\n'),
    );
  });

  it('matches context leniently: trailing whitespace, indentation, typographic quotes', async () => {
    put('ws.txt', 'alpha   \n\tbeta\nsay “hi” — ok\nend\n');
    const outcome = await run(
      patch('*** Update File: ws.txt', '@@', ' alpha', ' beta', '-say "hi" - ok', '+say hello', ' end'),
    );
    expect(outcome.isError).toBe(false);
    // Context lines keep the model's spelling, as in Codex; the removed line is gone.
    expect(read('ws.txt')).toBe('alpha\nbeta\nsay hello\nend\n');
  });

  it('honours *** End of File, keeps CRLF line endings and tolerates padded markers', async () => {
    put('tail.txt', 'x\r\ny\r\nx\r\n');
    const outcome = await run(
      [
        '*** Begin Patch ',
        '  *** Update File: tail.txt',
        '@@',
        ' y',
        '-x',
        '+z',
        '*** End of File',
        ' *** End Patch',
      ].join('\n'),
    );
    expect(outcome.isError).toBe(false);
    expect(read('tail.txt')).toBe('x\r\ny\r\nz\r\n');
  });

  it('accepts the heredoc form models trained on the shell send', async () => {
    const body = patch('*** Add File: h.txt', '+from a heredoc');
    expect((await run(`apply_patch <<'EOF'\n${body}\nEOF\n`)).isError).toBe(false);
    expect(read('h.txt')).toBe('from a heredoc\n');
    expect((await run(`<<"PATCH"\n${patch('*** Delete File: h.txt')}\nPATCH`)).isError).toBe(false);
    expect(existsSync(abs('h.txt'))).toBe(false);
  });

  it('refuses bad grammar with a clear error naming the line, writing nothing', async () => {
    const cases: [string, RegExp][] = [
      ['hello', /invalid patch at line 1: the first line must be '\*\*\* Begin Patch'/],
      [
        `cd src && apply_patch <<'EOF'\n${patch('*** Add File: a.txt', '+x')}\nEOF`,
        /at line 1: send the patch alone, without "cd … &&"/,
      ],
      ['*** Begin Patch\n*** Add File: a.txt\n+x', /at line 3: the last line must be '\*\*\* End Patch'/],
      [
        patch('*** Frobnicate File: a.txt'),
        /at line 2: "\*\*\* Frobnicate File: a.txt" is not a file header/,
      ],
      [
        patch('*** Update File: src/app.py'),
        /at line 2: the '\*\*\* Update File: src\/app.py' section has no hunk/,
      ],
      [
        patch('*** Update File: src/app.py', '@@', '-import os', 'oops'),
        /at line 5: expected a hunk starting with '@@', got "oops"/,
      ],
      [patch(), /the patch has no file section/],
      [patch('*** Add File: '), /at line 2: '\*\*\* Add File:' needs a path/],
    ];
    for (const [input, message] of cases) {
      const outcome = await run(input);
      expect(outcome.isError, input).toBe(true);
      expect(errorOf(outcome.content)).toMatch(message);
    }
    expect(existsSync(abs('a.txt'))).toBe(false);
    expect(read('src/app.py')).toBe(APP);
  });

  it('context not found: a tool error naming the file and the hunk lines; no file of the patch is written', async () => {
    const outcome = await run(
      patch(
        '*** Add File: new.txt',
        '+new',
        '*** Delete File: obsolete.txt',
        '*** Update File: src/app.py',
        '@@',
        ' def main():',
        '-    shout()',
        '+    greet()',
      ),
    );
    expect(outcome.isError).toBe(true);
    const message = errorOf(outcome.content);
    expect(message).toMatch(/^src\/app\.py: hunk 1 \(patch line 6\): these lines were not found/);
    expect(message).toContain('  def main():\n      shout()');
    expect(existsSync(abs('new.txt'))).toBe(false);
    expect(read('obsolete.txt')).toBe('bye\n');
    const header = errorOf(
      (await run(patch('*** Update File: src/app.py', '@@ def nope():', '-x', '+y'))).content,
    );
    expect(header).toMatch(/hunk 1 \(patch line 3\): the '@@ def nope\(\):' line was not found/);
  });

  it('answers a missing file with near matches, and refuses to update a deleted file or a binary one', async () => {
    const missing = errorOf(
      (await run(patch('*** Update File: app.py', '@@', '-import os', '+import sys'))).content,
    );
    expect(missing).toMatch(/Update File: "app\.py" \(patch line 2\) does not exist.*src\/app\.py/);
    const twice = errorOf(
      (
        await run(
          patch('*** Delete File: obsolete.txt', '*** Update File: obsolete.txt', '@@', '-bye', '+hi'),
        )
      ).content,
    );
    expect(twice).toMatch(/Update File: "obsolete\.txt" \(patch line 3\) does not exist/);
    expect(read('obsolete.txt')).toBe('bye\n');
    writeFileSync(abs('bin.dat'), Buffer.from([0, 1, 2, 10]));
    expect(errorOf((await run(patch('*** Update File: bin.dat', '@@', '-x', '+y'))).content)).toMatch(
      /binary file/,
    );
  });

  it('a write failing midway restores the files already written: no partial change remains', async () => {
    // A hard-linked file is refused by the confined writer, after the patch was planned.
    put('b.txt', 'b\n');
    linkSync(abs('b.txt'), path.join(t.root, 'b-link'));
    const outcome = await run(
      patch(
        '*** Update File: src/app.py',
        '@@',
        '-import os',
        '+import sys',
        '*** Add File: c.txt',
        '+c',
        '*** Update File: b.txt',
        '@@',
        '-b',
        '+B',
        '*** Delete File: obsolete.txt',
      ),
    );
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(
      /^b\.txt: .*hard links.*the 2 files already written were restored; nothing was changed/,
    );
    expect(read('src/app.py')).toBe(APP);
    expect(existsSync(abs('c.txt'))).toBe(false);
    expect(read('b.txt')).toBe('b\n');
    expect(read('obsolete.txt')).toBe('bye\n');
  });

  it('rolls back removals too when a later step fails', async () => {
    put('d.txt', 'd\n');
    const plan = await planPatch(
      patch('*** Add File: n.txt', '+n', '*** Delete File: d.txt', '*** Delete File: obsolete.txt'),
      t.ctx(),
    );
    let step = 0;
    const error = await writePlan(plan, t.ctx(), (file) => {
      step++;
      // The last removal finds a folder where the file was.
      if (file.path === 'obsolete.txt') {
        rmSync(abs('obsolete.txt'));
        mkdirSync(abs('obsolete.txt'));
      }
    }).catch((e: unknown) => e);
    expect(step).toBe(3);
    expect(String(error)).toMatch(/obsolete\.txt: .*folder.*the 2 files already written were restored/);
    expect(existsSync(abs('n.txt'))).toBe(false);
    expect(read('d.txt')).toBe('d\n');
  });
});

describe('apply_patch: approval and protection', () => {
  it('a patch touching a protected path needs approval and writes nothing without it', async () => {
    const input = patch('*** Add File: ok.txt', '+fine', '*** Add File: .git/hooks/pre-commit', '+evil');
    const outcome = await run(input);
    expect(outcome.isError).toBe(true);
    expect(outcome.approvalRequired).toMatch(/^\.git\/hooks\/pre-commit: /);
    expect(existsSync(abs('ok.txt'))).toBe(false);
    expect(existsSync(abs('.git/hooks/pre-commit'))).toBe(false);
    const preview = await applyPatchTool.preview({ input }, t.ctx());
    expect(preview.ok && preview.protectedReason).toMatch(/\.git\/hooks\/pre-commit/);
    expect(preview.ok && preview.subject).toEqual({ paths: ['ok.txt', '.git/hooks/pre-commit'] });
    expect((await run(input, t.ctx({ approved: true }))).isError).toBe(false);
    expect(read('.git/hooks/pre-commit')).toBe('evil\n');
  });

  it('the preview names the protected paths of a patch, move targets included', async () => {
    const input = patch(
      '*** Add File: ok.txt',
      '+x',
      '*** Update File: src/app.py',
      '*** Move to: .vscode/app.py',
      '@@',
      '-import os',
      '+import sys',
    );
    const moved = await applyPatchTool.preview({ input }, t.ctx());
    expect(moved.ok && moved.protectedReason).toMatch(/^\.vscode\/app\.py: /);
    const plain = await applyPatchTool.preview({ input: patch('*** Add File: ok.txt', '+x') }, t.ctx());
    expect(plain.ok && plain.protectedReason).toBeNull();
    expect((await applyPatchTool.preview({ input: 'not a patch' }, t.ctx())).ok).toBe(false);
  });

  it('a read-only Persistent Dir and user globs protect like write_file; /session paths work', async () => {
    const box: TempSessionBox = makeSessionBox();
    try {
      box.put('persistent/docs/guide.md', 'guide\n');
      const ctx = box.ctx();
      const outcome = await executeToolCall(
        registry,
        {
          id: 'c',
          name: 'apply_patch',
          arguments: JSON.stringify({
            input: patch(
              '*** Add File: /session/scratch/n.txt',
              '+n',
              '*** Update File: /persistent/docs/guide.md',
              '@@',
              '-guide',
              '+Guide',
            ),
          }),
        },
        ctx,
      );
      expect(outcome.approvalRequired).toMatch(
        /\/persistent\/docs\/guide\.md: it is in \/persistent\/docs\/, which is read-only/,
      );
      expect(existsSync(path.join(box.sessionArea, 'scratch/n.txt'))).toBe(false);
      const ok = await executeToolCall(
        registry,
        {
          id: 'c',
          name: 'apply_patch',
          arguments: JSON.stringify({ input: patch('*** Add File: /session/scratch/n.txt', '+n') }),
        },
        ctx,
      );
      expect(ok.content).toBe('Applied the patch to 1 file:\nA /session/scratch/n.txt (+1 -0)');
      expect(readFileSync(path.join(box.sessionArea, 'scratch/n.txt'), 'utf8')).toBe('n\n');
    } finally {
      box.cleanup();
    }
  });

  it('redacts secrets in the diff, the preview and the tool error', async () => {
    put('cfg.env', `KEY=${TEST_SECRET}\nMODE=dev\n`);
    const input = patch('*** Update File: cfg.env', '@@', ` KEY=${TEST_SECRET}`, '-MODE=dev', '+MODE=prod');
    const preview = await applyPatchTool.preview({ input }, t.ctx());
    expect(preview.ok && preview.diff).toContain('KEY=[REDACTED]');
    expect(JSON.stringify(preview)).not.toContain(TEST_SECRET);
    const outcome = await run(input);
    expect(outcome.diff).toContain('KEY=[REDACTED]');
    expect(JSON.stringify(outcome)).not.toContain(TEST_SECRET);
    expect(read('cfg.env')).toBe(`KEY=${TEST_SECRET}\nMODE=prod\n`);
    const failed = await run(patch('*** Update File: cfg.env', '@@', `-${TEST_SECRET}-missing`, '+x'));
    expect(failed.content).not.toContain(TEST_SECRET);
  });
});

describe('apply_patch: at most once by recorded images', () => {
  const input = (): string =>
    patch(
      '*** Update File: src/app.py',
      '@@',
      '-import os',
      '+import sys',
      '*** Delete File: obsolete.txt',
      '*** Add File: n.txt',
      '+n',
    );
  const imagesOf = async (): Promise<ExpectedImages> => {
    const preview = await applyPatchTool.preview({ input: input() }, t.ctx());
    if (!preview.ok || !preview.images) throw new Error('no images');
    return preview.images;
  };
  const applyOnce = (images: ExpectedImages) => {
    if (applyPatchTool.resume.rule !== 'recorded_images') throw new Error('wrong rule');
    return applyPatchTool.resume.applyOnce({ input: input() }, t.ctx({ approved: true }), images);
  };

  it('records one image pair per file (null for absent) and the set as the two hashes', async () => {
    const images = await imagesOf();
    expect(images.files).toEqual([
      {
        path: 'src/app.py',
        preImageHash: sha(APP),
        postImageHash: sha(APP.replace('import os', 'import sys')),
      },
      { path: 'obsolete.txt', preImageHash: sha('bye\n'), postImageHash: null },
      { path: 'n.txt', preImageHash: null, postImageHash: sha('n\n') },
    ]);
    expect(images.preImageHash).toMatch(/^[0-9a-f]{64}$/);
    expect(images.postImageHash).not.toBe(images.preImageHash);
  });

  it('all at the pre-image: applies; then all at the post-image: already applied, nothing written', async () => {
    const images = await imagesOf();
    const first = await applyOnce(images);
    expect(first.isError).toBe(false);
    expect(read('n.txt')).toBe('n\n');
    writeFileSync(abs('n.txt'), 'n\n');
    const second = await applyOnce(images);
    expect(second).toMatchObject({ isError: false, alreadyApplied: true });
    expect(second.content).toMatch(/already applied: src\/app\.py, obsolete\.txt, n\.txt/);
  });

  it('a mix of pre- and post-images, or a file changed meanwhile: conflict naming the files, nothing written', async () => {
    const images = await imagesOf();
    writeFileSync(abs('n.txt'), 'n\n');
    const mixed = await applyOnce(images);
    expect(mixed).toMatchObject({ isError: true, conflict: true });
    expect(errorOf(mixed.content)).toMatch(/already patched: n\.txt.*nothing was written/);
    expect(read('src/app.py')).toBe(APP);
    expect(read('obsolete.txt')).toBe('bye\n');
    writeFileSync(abs('n.txt'), 'other\n');
    expect(errorOf((await applyOnce(images)).content)).toMatch(/changed since the patch was planned: n\.txt/);
    expect(read('src/app.py')).toBe(APP);
  });

  it('without recorded files it refuses instead of guessing', async () => {
    const outcome = await applyOnce({ preImageHash: null, postImageHash: 'x' });
    expect(outcome).toMatchObject({ isError: true, conflict: true });
    expect(read('src/app.py')).toBe(APP);
  });
});

describe('parsePatch', () => {
  it('reads the sections Codex defines, with line numbers', () => {
    expect(
      parsePatch(
        patch(
          '*** Add File: a',
          '+x',
          '*** Update File: b',
          '*** Move to: c',
          '@@ def f():',
          ' k',
          '-o',
          '+n',
          '*** Delete File: d',
        ),
      ),
    ).toEqual([
      { kind: 'add', path: 'a', contents: 'x\n', line: 2 },
      {
        kind: 'update',
        path: 'b',
        moveTo: 'c',
        line: 4,
        chunks: [
          { context: 'def f():', oldLines: ['k', 'o'], newLines: ['k', 'n'], endOfFile: false, line: 6 },
        ],
      },
      { kind: 'delete', path: 'd', line: 10 },
    ]);
  });

  it('ignores a unified-diff range in a @@ line, keeping the header after it', () => {
    const [bare] = parsePatch(patch('*** Update File: f', '@@ -1,2 +1,2 @@', '-a', '+b'));
    expect(bare).toMatchObject({ chunks: [{ context: null, oldLines: ['a'], newLines: ['b'] }] });
    const [named] = parsePatch(patch('*** Update File: f', '@@ -10 +10 @@ def f():', '-a', '+b'));
    expect(named).toMatchObject({ chunks: [{ context: 'def f():' }] });
  });

  it('takes a first hunk without @@ and an empty line inside a hunk as empty context', () => {
    const [op] = parsePatch(patch('*** Update File: f', ' import foo', '', '+bar'));
    expect(op).toMatchObject({
      chunks: [{ context: null, oldLines: ['import foo', ''], newLines: ['import foo', '', 'bar'] }],
    });
  });
});
