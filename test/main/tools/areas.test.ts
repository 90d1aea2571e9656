import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { locate, showPath, wholeResultAt } from '../../../main/tools/areas.js';
import { executeToolCall } from '../../../main/tools/execute.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolContext, ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeSessionBox, type TempSessionBox } from './helpers.js';

// The project is the model's root: what a model sends (project-relative, ./, the absolute path `pwd` prints,
// /session/..., /persistent/<name>/...) reaches the file it meant, and everything else is refused as before.

let sandbox: SandboxInfo;
let t: TempSessionBox;
beforeAll(async () => {
  sandbox = await detectSandbox();
});
beforeEach(() => {
  t = makeSessionBox(sandbox);
  t.put('persistent/project/src/server.js', 'const port = 8080;\n');
  t.put('session/uploads/x.csv', 'a,b\n1,2\n');
  t.put('persistent/docs/guide.md', '# guide\n');
  t.put('secret.txt', 'box root, in no area\n');
  writeFileSync(path.join(t.outside, 'secret.txt'), 'outside secret\n');
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('write');
const run = (name: string, args: Record<string, unknown>, ctx: ToolContext = t.ctx()): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name, arguments: JSON.stringify(args) }, ctx);

describe('paths as a model sends them', () => {
  it('reads the project file from a project-relative, ./, absolute or /persistent/project path, and shows it project-relative', async () => {
    for (const sent of [
      'src/server.js',
      './src/server.js',
      path.join(t.project, 'src/server.js'),
      '/persistent/project/src/server.js',
    ]) {
      const outcome = await run('read_file', { path: sent });
      expect(outcome, sent).toMatchObject({ isError: false, path: 'src/server.js' });
      expect(outcome.content).toBe('     1\tconst port = 8080;');
    }
  });

  it('reads the session area as /session/... and another Persistent Dir as /persistent/<name>/...', async () => {
    const upload = await run('read_file', { path: '/session/uploads/x.csv' });
    expect(upload).toMatchObject({ isError: false, path: '/session/uploads/x.csv' });
    expect(upload.content).toBe('     1\ta,b\n     2\t1,2');
    // Its real path on disk (a command's `pwd` shows it) is the same file, shown the same way.
    const onDisk = await run('read_file', { path: path.join(t.sessionArea, 'uploads/x.csv') });
    expect(onDisk).toMatchObject({ isError: false, path: '/session/uploads/x.csv' });
    const guide = await run('read_file', { path: '/persistent/docs/guide.md' });
    expect(guide).toMatchObject({ isError: false, path: '/persistent/docs/guide.md' });
    expect(guide.content).toBe('     1\t# guide');
  });

  it('lists, globs and greps the root and the areas with the paths shown as they are addressed', async () => {
    expect((await run('list_dir', { path: '/session' })).content).toBe(
      ['/session/ (depth 2):', 'uploads/', 'uploads/x.csv'].join('\n'),
    );
    expect((await run('list_dir', { path: '.' })).content).toBe(
      ['workspace root (depth 2):', 'src/', 'src/server.js'].join('\n'),
    );
    expect((await run('glob', { pattern: 'src/*.js' })).content).toBe('src/server.js');
    expect((await run('glob', { pattern: path.join(t.project, 'src/*.js') })).content).toBe('src/server.js');
    expect((await run('glob', { pattern: '/session/**/*.csv' })).content).toBe('/session/uploads/x.csv');
    expect((await run('glob', { pattern: '**/*' })).content).toBe('src/server.js');
    expect((await run('grep', { pattern: 'port' })).content).toBe('src/server.js:1: const port = 8080;');
    expect((await run('grep', { pattern: '1,2', path: '/session' })).content).toBe(
      '/session/uploads/x.csv:2: 1,2',
    );
    expect((await run('grep', { pattern: 'guide', path: '/persistent/docs', glob: '*.md' })).content).toBe(
      '/persistent/docs/guide.md:1: # guide',
    );
  });

  it('writes the project and the session area where the model meant, with project-relative diffs', async () => {
    const made = await run('write_file', { path: 'src/limit.js', content: 'export const limit = 10;\n' });
    expect(made).toMatchObject({ isError: false, path: 'src/limit.js' });
    expect(made.diff).toContain('+++ b/src/limit.js');
    expect(readFileSync(path.join(t.project, 'src/limit.js'), 'utf8')).toBe('export const limit = 10;\n');
    const edited = await run('edit_file', {
      path: path.join(t.project, 'src/server.js'),
      old_string: '8080',
      new_string: '9090',
    });
    expect(edited).toMatchObject({ isError: false, path: 'src/server.js' });
    expect(edited.diff).toContain('--- a/src/server.js');
    const scratch = await run('write_file', { path: '/session/scratch/notes.txt', content: 'n\n' });
    expect(scratch).toMatchObject({ isError: false, path: '/session/scratch/notes.txt' });
    expect(readFileSync(path.join(t.sessionArea, 'scratch/notes.txt'), 'utf8')).toBe('n\n');
  });

  it('asks before writing a read-only Persistent Dir', async () => {
    const outcome = await run('write_file', { path: '/persistent/docs/guide.md', content: 'changed\n' });
    expect(outcome.isError).toBe(true);
    expect(outcome.approvalRequired).toBe('it is in /persistent/docs/, which is read-only for this session');
    expect(readFileSync(path.join(t.docs, 'guide.md'), 'utf8')).toBe('# guide\n');
    const approved = await run(
      'write_file',
      { path: '/persistent/docs/guide.md', content: 'changed\n' },
      t.ctx({ approved: true }),
    );
    expect(approved.isError).toBe(false);
  });

  it('reads and greps /artifacts, and refuses every write there, approved or not', async () => {
    const artifacts = path.join(t.root, 'artifacts');
    mkdirSync(artifacts);
    writeFileSync(path.join(artifacts, 'ev3-run_command.log'), 'line one\nnot ok 2 - sum\nline three\n');
    const areas = [...(t.ctx().areas ?? []), { prefix: '/artifacts', root: artifacts, sealed: true }];
    const ctx = (approved = false) => t.ctx({ areas, approved });
    const read = await run('read_file', { path: '/artifacts/ev3-run_command.log', offset: 2 }, ctx());
    expect(read.content).toBe('     2\tnot ok 2 - sum\n     3\tline three');
    const grep = await run('grep', { pattern: 'not ok', path: '/artifacts' }, ctx());
    expect(grep.content).toContain('/artifacts/ev3-run_command.log:2: not ok 2 - sum');
    for (const approved of [false, true]) {
      const written = await run(
        'write_file',
        { path: '/artifacts/ev3-run_command.log', content: 'forged\n' },
        ctx(approved),
      );
      expect(errorOf(written.content)).toContain(
        "the session's record of command output, which no tool can change",
      );
      const edited = await run(
        'edit_file',
        { path: '/artifacts/ev3-run_command.log', old_string: 'not ok', new_string: 'ok' },
        ctx(approved),
      );
      expect(edited.isError).toBe(true);
      const patched = await run(
        'apply_patch',
        { input: '*** Begin Patch\n*** Delete File: /artifacts/ev3-run_command.log\n*** End Patch' },
        ctx(approved),
      );
      expect(patched.isError).toBe(true);
    }
    expect(readFileSync(path.join(artifacts, 'ev3-run_command.log'), 'utf8')).toContain('not ok 2 - sum');
  });

  it('gives grants and approvals the path as shown', async () => {
    const tool = registry.get('read_file');
    expect(await tool?.preview({ path: './src/server.js' }, t.ctx())).toMatchObject({
      ok: true,
      subject: { path: 'src/server.js' },
    });
    expect(await tool?.preview({ path: '/session/uploads/x.csv' }, t.ctx())).toMatchObject({
      ok: true,
      subject: { path: '/session/uploads/x.csv' },
    });
  });
});

describe('paths refused as before', () => {
  it.each([
    ['../x', /escapes the workspace/],
    ['../../secret.txt', /escapes the workspace/],
    ['/etc/passwd', /^Argument "path" \("\/etc\/passwd"\): path escapes the workspace/],
    [
      '/session/../secret.txt',
      /^Argument "path" \("\/session\/\.\.\/secret\.txt"\): path escapes the workspace/,
    ],
    ['/session/../persistent/project/src/server.js', /escapes the workspace/],
    ['/persistent/project/../docs/guide.md', /escapes the workspace/],
    [
      '/persistent/nope/x',
      /^path: "\/persistent\/nope\/x": this session has no Persistent Dir "nope" \(it has: project, docs\)$/,
    ],
    ['~/.ssh/id_rsa', /"~" is not expanded/],
    ['src/\u0000x', /NUL byte/],
  ])('%s', async (sent, message) => {
    for (const [tool, args] of [
      ['read_file', { path: sent }],
      ['write_file', { path: sent, content: 'pwned\n' }],
    ] as const) {
      const outcome = await run(tool, args);
      expect(outcome.isError, tool).toBe(true);
      expect(errorOf(outcome.content), tool).toMatch(message);
    }
    expect(readFileSync(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    expect(readFileSync(path.join(t.box, 'secret.txt'), 'utf8')).toBe('box root, in no area\n');
  });

  it('refuses the box root on disk, which is in no area', async () => {
    const outcome = await run('read_file', { path: path.join(t.box, 'secret.txt') });
    expect(errorOf(outcome.content)).toMatch(/escapes the workspace/);
  });

  it('follows no link out of the project, not even into another area', async () => {
    symlinkSync(t.outside, path.join(t.project, 'out'));
    symlinkSync(t.sessionArea, path.join(t.project, 'to-session'));
    expect(errorOf((await run('read_file', { path: 'out/secret.txt' })).content)).toMatch(/escapes/);
    expect(errorOf((await run('read_file', { path: 'to-session/uploads/x.csv' })).content)).toMatch(
      /escapes/,
    );
    const written = await run('write_file', { path: 'to-session/uploads/x.csv', content: 'pwned\n' });
    expect(written.isError).toBe(true);
    expect(readFileSync(path.join(t.sessionArea, 'uploads/x.csv'), 'utf8')).toBe('a,b\n1,2\n');
  });

  it('refuses globs and greps that leave their folder', async () => {
    expect(errorOf((await run('glob', { pattern: '/session/../**' })).content)).toMatch(/".." segments/);
    expect(errorOf((await run('glob', { pattern: '/etc/*' })).content)).toMatch(/not absolute/);
    expect(errorOf((await run('grep', { pattern: 'x', path: '/etc' })).content)).toMatch(/escapes/);
  });

  it('keeps an old-style context (no areas) exactly as it was: /session is outside', async () => {
    const old = t.ctx({ workspace: t.box, areas: [], boxRoot: undefined });
    const outcome = await run('read_file', { path: '/session/uploads/x.csv' }, old);
    expect(errorOf(outcome.content)).toMatch(/escapes the workspace/);
    expect((await run('read_file', { path: 'session/uploads/x.csv' }, old)).path).toBe(
      'session/uploads/x.csv',
    );
  });
});

describe('commands run in the project root', () => {
  beforeEach((context) => {
    if (sandbox.kind === 'none') context.skip(`no OS sandbox on this machine: ${sandbox.reason}`);
  });

  it('starts in the root, so pwd prints the absolute path the file tools accept', async () => {
    const pwd = await run('run_command', { command: 'pwd; cat src/server.js' });
    const [printed, content] = pwd.content.split(/\r?\n/);
    expect(printed).toBe(t.project);
    expect(content).toBe('const port = 8080;');
    const back = await run('read_file', { path: `${printed ?? ''}/src/server.js` });
    expect(back).toMatchObject({ isError: false, path: 'src/server.js' });
  });

  it('runs in a project-relative or /session cwd, and can write the session area as before', async () => {
    expect((await run('run_command', { command: 'ls', cwd: 'src' })).content).toMatch(/^server\.js\r?\n/);
    expect((await run('run_command', { command: 'cat x.csv', cwd: '/session/uploads' })).content).toMatch(
      /^a,b\r?\n1,2\r?\n/,
    );
    await run('run_command', { command: 'echo made > ../../session/scratch-made.txt' });
    expect(readFileSync(path.join(t.sessionArea, 'scratch-made.txt'), 'utf8')).toBe('made\n');
  });

  it('tells the model where the rest of a cut output is and how to read it, and reading it there works (#37)', async () => {
    const base = t.ctx();
    const areas = [...(base.areas ?? []), { prefix: '/artifacts', root: base.artifactsDir, sealed: true }];
    const long = await run('run_command', { command: 'seq 1 40000' }, t.ctx({ areas }));
    const note =
      /\[the output above is cut to its head and tail \((\d+) bytes in all\); the whole output is (\/artifacts\/\S+\.log): read it with read_file \(offset, limit\) or search it with grep\]$/.exec(
        long.content,
      );
    expect(note, long.content.slice(-300)).not.toBeNull();
    // The left-out middle names the same path; nothing says "artifact" (Keel's word, not the model's).
    expect(long.content).toContain(`bytes left out here; the whole output is in ${note?.[2] ?? ''}]`);
    expect(long.content).not.toMatch(/\bartifact\b/);
    const middle = await run('grep', { pattern: '^20000\\b', path: note?.[2] ?? '' }, t.ctx({ areas }));
    expect(middle.content).toMatch(/:20000: 20000/);
    // A cut web page or MCP result names the same place the same way (#37).
    expect(wholeResultAt({ areas }, 'web/ev4-web_fetch.md')).toBe(
      'the whole is /artifacts/web/ev4-web_fetch.md: read it with read_file (offset, limit) or search it with grep',
    );
    expect(wholeResultAt({}, 'web/ev4-web_fetch.md')).toBe(
      'the whole is kept for the user; tools cannot read it in this session',
    );
    // A session without the area (an older one) is told how to see a part instead.
    expect((await run('run_command', { command: 'seq 1 40000' })).content).toMatch(
      /tools cannot read the rest in this session: run the command again narrowed \(grep, head, tail, sed -n\) to see a part\]$/,
    );
    // A whole output is not pointed at: there is no rest to read.
    expect((await run('run_command', { command: 'echo short' })).content).toMatch(
      /^short\r?\n\[exit code 0, \d+ ms\]$/,
    );
  });

  it('refuses a cwd outside every root, and writes nothing outside the box', async () => {
    const escaped = await run('run_command', { command: 'touch ran', cwd: '../..' });
    expect(errorOf(escaped.content)).toMatch(/cwd.*escapes the workspace/);
    await run('run_command', { command: `echo x > ${path.join(t.outside, 'pwned')}` });
    expect(existsSync(path.join(t.outside, 'pwned'))).toBe(false);
  });
});

describe('locate and showPath', () => {
  it('places each argument in its folder and shows real paths as they are addressed', () => {
    const ctx = t.ctx();
    expect(locate(ctx, 'src/x')).toMatchObject({ root: t.project, arg: 'src/x', prefix: null });
    expect(locate(ctx, '/session')).toMatchObject({ root: t.sessionArea, arg: '.', prefix: '/session' });
    expect(locate(ctx, '/persistent/docs/a/b')).toMatchObject({ root: t.docs, arg: 'a/b' });
    expect(locate(ctx, path.join(t.project, 'src'))).toMatchObject({ root: t.project, prefix: null });
    expect(locate(ctx, '/etc/passwd')).toMatchObject({ root: t.project, arg: '/etc/passwd' });
    expect(showPath(ctx, t.project)).toBe('.');
    expect(showPath(ctx, path.join(t.project, 'src/server.js'))).toBe('src/server.js');
    expect(showPath(ctx, path.join(t.sessionArea, 'uploads'))).toBe('/session/uploads');
    expect(showPath(ctx, t.docs)).toBe('/persistent/docs');
  });
});
