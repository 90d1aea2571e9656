import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { grepToOutcome, searchWorkspace, type GrepOptions } from '../../../main/tools/grep.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import { errorOf, makeWorkspace, TEST_SECRET, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
const put = (rel: string, data: string | Buffer): void => {
  mkdirSync(path.dirname(path.join(t.workspace, rel)), { recursive: true });
  writeFileSync(path.join(t.workspace, rel), data);
};
beforeEach(() => {
  t = makeWorkspace();
  put('src/b.ts', 'const needle = 2;\nnothing here\n');
  put('src/a.ts', 'let x;\n// needle one\n');
  put('src/sub/c.go', 'needle in go\n');
  put('docs/readme.md', 'a needle in the docs\n');
  put('.env.example', 'needle=hidden file\n');
  put('.git/config', 'needle in git\n');
  put('node_modules/m/index.js', 'needle in deps\n');
  put('bin.dat', Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2, 0])]));
  writeFileSync(path.join(t.outside, 'secret.txt'), 'needle outside\n');
  symlinkSync(t.outside, path.join(t.workspace, 'outdir'));
  symlinkSync(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'outfile.txt'));
});
afterEach(() => t.cleanup());

const expectedAll = [
  '.env.example:1: needle=hidden file',
  'docs/readme.md:1: a needle in the docs',
  'src/a.ts:2: // needle one',
  'src/b.ts:1: const needle = 2;',
  'src/sub/c.go:1: needle in go',
].join('\n');

describe.each<[string, GrepOptions]>([
  ['ripgrep', { engine: 'ripgrep' }],
  ['the built-in fallback', { engine: 'builtin' }],
])('grep with %s', (_name, options) => {
  const grep = (args: { pattern: string; path?: string; glob?: string }, extra: GrepOptions = {}) =>
    grepToOutcome(args, t.ctx(), { ...options, ...extra });

  it('finds matching lines sorted by path, skipping .git, node_modules, binaries and links out', async () => {
    const outcome = await grep({ pattern: 'needle' });
    expect(outcome).toEqual({ content: expectedAll, isError: false });
  });

  it('reports which engine ran', async () => {
    const result = await searchWorkspace({ pattern: 'needle' }, t.ctx(), options);
    expect(result.engine).toBe(options.engine);
  });

  it('narrows by path and by glob', async () => {
    expect((await grep({ pattern: 'needle', path: 'src' })).content).toBe(
      ['src/a.ts:2: // needle one', 'src/b.ts:1: const needle = 2;', 'src/sub/c.go:1: needle in go'].join(
        '\n',
      ),
    );
    expect((await grep({ pattern: 'needle', glob: '*.go' })).content).toBe('src/sub/c.go:1: needle in go');
    expect((await grep({ pattern: 'needle', path: 'src/a.ts' })).content).toBe('src/a.ts:2: // needle one');
  });

  it('refuses a FIFO named as the path at once, and a folder holding one is searched without blocking', async () => {
    mkdirSync(path.join(t.workspace, 'pipes'));
    execFileSync('mkfifo', [path.join(t.workspace, 'pipes', 'p')]);
    writeFileSync(path.join(t.workspace, 'pipes', 'real.txt'), 'needle beside a fifo\n');
    // A read of the FIFO would wait for a writer until the search's timeout: an answer now, from no open.
    await expect(grep({ pattern: 'needle', path: 'pipes/p' }, { timeoutMs: 60_000 })).rejects.toThrow(
      'path: "pipes/p" is not a regular file or a folder',
    );
    expect((await grep({ pattern: 'needle', path: 'pipes' }, { timeoutMs: 60_000 })).content).toBe(
      'pipes/real.txt:1: needle beside a fifo',
    );
  });

  it('supports regular expressions and says when nothing matches', async () => {
    expect((await grep({ pattern: '^const \\w+ = \\d;$' })).content).toBe('src/b.ts:1: const needle = 2;');
    expect((await grep({ pattern: 'zebra' })).content).toBe('No matches.');
  });

  it('refuses a path outside the workspace, also through a link', async () => {
    await expect(grep({ pattern: 'needle', path: '../outside' })).rejects.toThrow(/escapes the workspace/);
    await expect(grep({ pattern: 'needle', path: 'outdir' })).rejects.toThrow(/escapes the workspace/);
  });

  it('reports an invalid regular expression clearly', async () => {
    await expect(grep({ pattern: 'needle(' })).rejects.toThrow(
      /^(grep: regex parse error|pattern: invalid regular expression)/,
    );
  });

  it('stops at the match bound and says so', async () => {
    put('many/lots.txt', Array.from({ length: 40 }, (_, i) => `hit ${i}`).join('\n'));
    const outcome = await grep({ pattern: 'hit', path: 'many' }, { maxMatches: 25 });
    const lines = outcome.content.split('\n');
    expect(lines).toHaveLength(26);
    expect(lines[24]).toBe('many/lots.txt:25: hit 24');
    expect(lines[25]).toBe('[stopped after 25 matches; narrow the search with path or glob]');
  });

  it('cuts very long matching lines', async () => {
    put('long.txt', 'needle' + 'q'.repeat(5000) + '\n');
    const outcome = await grep({ pattern: 'needle', path: 'long.txt' });
    expect(outcome.content.length).toBeLessThan(700);
    expect(outcome.content).toMatch(/\[line cut\]$/);
  });
});

describe('grep engine choice', () => {
  it('the grep tool uses ripgrep when it is installed', async () => {
    const result = await searchWorkspace({ pattern: 'needle' }, t.ctx());
    expect(result.engine).toBe('ripgrep');
  });

  it('falls back to the built-in search when ripgrep is missing', async () => {
    const result = await searchWorkspace({ pattern: 'needle' }, t.ctx(), {
      rgPath: path.join(t.root, 'no-rg'),
    });
    expect(result.engine).toBe('builtin');
    expect(result.matches).toHaveLength(5);
  });

  it('says so when ripgrep is demanded but missing', async () => {
    await expect(
      searchWorkspace({ pattern: 'x' }, t.ctx(), { engine: 'ripgrep', rgPath: path.join(t.root, 'no-rg') }),
    ).rejects.toThrow('ripgrep is not installed');
  });

  it('stops a catastrophic pattern in the fallback without freezing the process', async () => {
    put('redos.txt', 'a'.repeat(40) + '!\n');
    const started = Date.now();
    await expect(
      searchWorkspace({ pattern: '^(a+)+$', path: 'redos.txt' }, t.ctx(), {
        engine: 'builtin',
        timeoutMs: 300,
      }),
    ).rejects.toThrow(/timed out after 300 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('grep output is redacted on its way to the model', async () => {
    put('conf.ts', `const token = "${TEST_SECRET}";\n`);
    const outcome = await executeToolCall(
      createToolRegistry('read-only'),
      { id: 'c', name: 'grep', arguments: JSON.stringify({ pattern: 'token' }) },
      t.ctx(),
    );
    expect(outcome.content).toBe('conf.ts:1: const token = "[REDACTED]";');
  });

  it('a bad path argument is a tool error through the registry', async () => {
    const outcome = await executeToolCall(
      createToolRegistry('read-only'),
      { id: 'c', name: 'grep', arguments: JSON.stringify({ pattern: 'x', path: '/etc' }) },
      t.ctx(),
    );
    expect(errorOf(outcome.content)).toMatch(/^Argument "path".*escapes the workspace/);
  });
});
