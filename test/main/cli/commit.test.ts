import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-commit-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'main.go'), 'package main\n');
  },
});

const run = (prompt: string, extra: string[]) => newSessionArgs(cli, { policy: 'full-auto', prompt, extra });

const write = (file: string, content: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'write_file', arguments: { path: file, content } }],
});

const commitsOf = (id: string) => eventsOf(cli.home, id).filter((e) => e.kind === 'persistent_commit');

const systemPromptOf = (index: number) =>
  (cli.server.requests[index]?.body as { messages: { role: string; content: string }[] }).messages[0]
    ?.content;

/** Runs git in the project folder with a fixed identity and no system config; returns stdout. */
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
    cwd: cli.project,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

describe('keel run: the project checkout (--commit auto by default)', () => {
  it('by default the model works on a checkout, its root, and the folder gets the changes when the turn ends, not as a git commit', async () => {
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
    cli.server.enqueue(
      write('src/new.go', 'package main // new\n'),
      write('src/main.go', 'package main // edited\n'),
      { kind: 'reply', text: 'done' },
    );
    const result = await keel(cli.home, run('add a file', []));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/committed 2 files to project \(diff: artifact commits\//);
    expect(fs.readFileSync(path.join(cli.project, 'src', 'new.go'), 'utf8')).toBe('package main // new\n');
    expect(fs.readFileSync(path.join(cli.project, 'src', 'main.go'), 'utf8')).toBe(
      'package main // edited\n',
    );
    expect(systemPromptOf(0)).toContain(
      'You work in a checkout of the project; your changes are applied to the real folder when your turn ends.',
    );
    expect(systemPromptOf(0)).not.toContain('persistent/project/');
    const id = onlySessionId(cli.home);
    const [commit] = commitsOf(id);
    expect(commit?.kind === 'persistent_commit' && commit.files.map((f) => f.path).sort()).toEqual([
      'src/main.go',
      'src/new.go',
    ]);
    // Keel writes the files into the folder; the repository's history and index are the user's.
    expect(git('rev-list', '--count', 'HEAD').trim()).toBe('1');
    expect(git('status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([
      ' M src/main.go',
      '?? src/new.go',
    ]);
    expect(git('diff', 'src/main.go')).toContain('+package main // edited');
  });

  it('--commit direct: the model works in the folder itself, with nothing to commit (its change is recorded)', async () => {
    cli.server.enqueue(write('src/direct.go', 'package main // direct\n'), { kind: 'reply', text: 'done' });
    const result = await keel(cli.home, run('add a file', ['--commit', 'direct']));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/committed/);
    expect(fs.readFileSync(path.join(cli.project, 'src', 'direct.go'), 'utf8')).toBe(
      'package main // direct\n',
    );
    const id = onlySessionId(cli.home);
    // What the turn changed in the folder is recorded (for keel revert), though nothing was committed.
    expect(
      commitsOf(id).map((e) => e.kind === 'persistent_commit' && [e.dir, e.files.map((f) => f.path)]),
    ).toEqual([['project', ['src/direct.go']]]);
    expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'persistent.json'))).toBe(false);
    expect(systemPromptOf(0)).not.toContain('persistent/project/');
    const commit = await keel(cli.home, ['commit', id]);
    expect(commit.code).toBe(2);
    expect(commit.stderr).toMatch(/works on its project folder directly \(keel run --commit direct\)/);
  });

  it('--json: the stream has the commit line and its event before the outcome', async () => {
    cli.server.enqueue(write('src/json.go', 'package main // json\n'), {
      kind: 'reply',
      text: 'done',
    });
    const result = await keel(cli.home, run('add a file', ['--json']));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const commit = lines.find((line) => line.type === 'commit') as
      { report: { status: string; dir: string; files: { path: string }[] } } | undefined;
    expect(commit?.report).toMatchObject({ status: 'committed', dir: 'project' });
    expect(commit?.report.files.map((f) => f.path)).toEqual(['src/json.go']);
    const kindsSeen = lines
      .filter((line) => line.type === 'event')
      .map((line) => (line.event as { kind: string }).kind);
    expect(kindsSeen).toEqual(
      expect.arrayContaining(['user_message', 'tool_result', 'assistant_message', 'persistent_commit']),
    );
    expect(lines.some((line) => line.type === 'delta')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'outcome', status: 'completed', text: 'done' });
    expect(lines.findIndex((line) => line.type === 'commit')).toBeLessThan(lines.length - 1);
  });

  it('manual: nothing reaches the folder until keel commit; a new turn is refused while changes wait', async () => {
    cli.server.enqueue(write('notes.md', 'draft\n'), { kind: 'reply', text: 'drafted' });
    expect((await keel(cli.home, run('draft notes', ['--commit', 'manual']))).code).toBe(0);
    const id = onlySessionId(cli.home);
    expect(fs.existsSync(path.join(cli.project, 'notes.md'))).toBe(false);
    const refused = await keel(cli.home, ['run', '--session', id, 'more']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `keel: session ${id} has uncommitted changes in project (1 file) that a new turn would discard: ` +
        `keel commit ${id} applies them, keel discard ${id} drops them\n`,
    );
    const committed = await keel(cli.home, ['commit', id]);
    expect(committed.code).toBe(0);
    expect(committed.stderr).toMatch(/committed 1 file to project/);
    expect(fs.readFileSync(path.join(cli.project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect(commitsOf(id)).toHaveLength(1);
    cli.server.enqueue(write('notes.md', 'second draft\n'), { kind: 'reply', text: 'again' });
    expect((await keel(cli.home, ['run', '--session', id, 'redo'])).code).toBe(0);
    const discarded = await keel(cli.home, ['discard', id]);
    expect(discarded.stderr).toMatch(/discarded the uncommitted changes of project/);
    expect(fs.readFileSync(path.join(cli.project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect((await keel(cli.home, ['commit', id])).stderr).toMatch(/nothing to commit in project/);
  });

  it('--commit on --session switches a checkout between auto and manual; direct stays direct', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hello' });
    expect((await keel(cli.home, run('hi', []))).code).toBe(0);
    const id = onlySessionId(cli.home);
    cli.server.enqueue(write('later.md', 'later\n'), { kind: 'reply', text: 'held' });
    expect((await keel(cli.home, ['run', '--session', id, '--commit', 'manual', 'write later'])).code).toBe(
      0,
    );
    expect(fs.existsSync(path.join(cli.project, 'later.md'))).toBe(false);
    expect((await keel(cli.home, ['commit', id])).code).toBe(0);
    expect(fs.readFileSync(path.join(cli.project, 'later.md'), 'utf8')).toBe('later\n');
    cli.server.enqueue(write('back.md', 'back\n'), { kind: 'reply', text: 'auto again' });
    expect((await keel(cli.home, ['run', '--session', id, '--commit', 'auto', 'write back'])).code).toBe(0);
    expect(fs.readFileSync(path.join(cli.project, 'back.md'), 'utf8')).toBe('back\n');
    const toDirect = await keel(cli.home, ['run', '--session', id, '--commit', 'direct', 'x']);
    expect(toDirect.code).toBe(2);
    expect(toDirect.stderr).toMatch(
      /works on a checkout of its project folder; --commit direct applies to new sessions/,
    );

    fs.rmSync(path.join(cli.home, 'sessions'), { recursive: true });
    fs.rmSync(path.join(cli.home, 'index.sqlite'), { force: true });
    cli.server.enqueue({ kind: 'reply', text: 'direct' });
    expect((await keel(cli.home, run('plain', ['--commit', 'direct']))).code).toBe(0);
    const direct = onlySessionId(cli.home);
    const toAuto = await keel(cli.home, ['run', '--session', direct, '--commit', 'auto', 'x']);
    expect(toAuto.code).toBe(2);
    expect(toAuto.stderr).toMatch(
      /works on its project folder directly; --commit auto applies to new sessions/,
    );
  });

  it('refuses a bad mode before creating anything', async () => {
    const bad = await keel(cli.home, run('x', ['--commit', 'sometimes']));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: --commit must be auto, manual or direct (got "sometimes")\n');
    expect(fs.existsSync(cli.home)).toBe(false);
  });

  it("refuses a model the provider does not serve before creating anything, in the provider's words", async () => {
    cli.server.servedModels = [{ id: 'claude-test-current', maxInputTokens: 200_000 }];
    const refused = await keel(
      cli.home,
      [
        'run',
        '--project',
        cli.project,
        '--provider',
        'anthropic',
        '--base-url',
        cli.server.anthropicBaseUrl,
        '--model',
        'claude-test-gone',
        'hello',
      ],
      { ANTHROPIC_API_KEY: 'test-key' },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'keel: Anthropic does not serve claude-test-gone (model: claude-test-gone (404)): choose a model it lists\n',
    );
    expect(fs.existsSync(cli.home)).toBe(false);
  });

  it('an edit approved with keel approve --resume reaches the folder when that turn ends', async () => {
    cli.server.enqueue(write('src/approved.go', 'package main // approved\n'));
    const args = run('add a file', []);
    args[args.indexOf('full-auto')] = 'ask';
    const asked = await keel(cli.home, args);
    expect(asked.code).toBe(3);
    // The approval shows the change as the project's, with project-relative paths.
    expect(asked.stderr).toMatch(
      /^keel: approval needed \(request \d+\): write_file \{"path":"src\/approved\.go",/m,
    );
    expect(asked.stderr).toContain('\n  +++ b/src/approved.go\n');
    expect(asked.stderr).not.toContain('persistent/');
    const id = onlySessionId(cli.home);
    expect(fs.existsSync(path.join(cli.project, 'src', 'approved.go'))).toBe(false);
    cli.server.enqueue({ kind: 'reply', text: 'done' });
    const approved = await keel(cli.home, ['approve', id, '--scope', 'once', '--resume']);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toMatch(/committed 1 file to project/);
    expect(fs.readFileSync(path.join(cli.project, 'src', 'approved.go'), 'utf8')).toBe(
      'package main // approved\n',
    );
    expect(commitsOf(id)).toHaveLength(1);
  });
});
