import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../../main/common/clock.js';
import { gitProcessCount } from '../../../../main/core/persistent/git.js';
import {
  describeEnvironment,
  formatEnvironment,
  readGitFacts,
  STATUS_LINES_SHOWN,
  type EnvironmentFacts,
} from '../../../../main/core/prompts/environment.js';
import type { SandboxInfo } from '../../../../main/sandbox/box.js';
import { makeTempDir, removeTempDir } from '../../../support/cli.js';

let dir: string;

beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-environment-'));
});

afterEach(() => removeTempDir(dir));

const bwrap: SandboxInfo = {
  kind: 'bwrap',
  reason: 'ok',
  version: null,
  executable: '/usr/bin/bwrap',
  socat: null,
};

const facts: EnvironmentFacts = {
  date: '2026-12-01',
  timeZone: 'Europe/Berlin',
  os: 'Debian GNU/Linux 12 (bookworm); Linux 6.1.0 x64',
  branch: 'main',
  status: [' M src/server.js', '?? notes.txt'],
  sandbox: 'bwrap',
  network: 'none',
  policy: 'auto-edit',
  toolMode: 'write',
};

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, stdio: 'ignore' });
}

describe('formatEnvironment', () => {
  it('states the date, OS, shell, branch with status, box and policy in a tagged block', () => {
    expect(formatEnvironment(facts)).toBe(
      [
        '<environment>',
        'Date: 2026-12-01 (Europe/Berlin)',
        'OS: Debian GNU/Linux 12 (bookworm); Linux 6.1.0 x64',
        'Shell: bash (run_command runs `bash -c <command>`; no interactive input)',
        'Git: branch main; git status --short:',
        '   M src/server.js',
        '  ?? notes.txt',
        'Box: commands run in a bubblewrap sandbox: only the workspace is writable, no network access',
        'Policy: auto-edit: reads and edits inside the project run; commands ask for approval first',
        '</environment>',
      ].join('\n'),
    );
  });

  it('shortens a long status, names allowed hosts, and says what no sandbox and read-only mean', () => {
    const status = Array.from({ length: STATUS_LINES_SHOWN + 5 }, (_, i) => `?? f${i}.txt`);
    const text = formatEnvironment({
      ...facts,
      status,
      network: { allow: ['registry.npmjs.org', 'api.github.com'] },
    });
    expect(text).toContain(`  ?? f${STATUS_LINES_SHOWN - 1}.txt\n  … and 5 more\n`);
    expect(text).not.toContain(`?? f${STATUS_LINES_SHOWN}.txt`);
    expect(text).toContain('network access only to registry.npmjs.org, api.github.com');
    expect(formatEnvironment({ ...facts, status: [] })).toContain('Git: branch main; git status: clean');
    const { branch: _branch, status: _status, ...noGit } = facts;
    expect(formatEnvironment(noGit)).toContain('Git: not a git repository');
    const unboxed = formatEnvironment({ ...facts, sandbox: 'none', policy: 'full-auto' });
    expect(unboxed).toContain(
      'Box: no OS sandbox on this machine: commands run unconfined, so every command asks',
    );
    expect(unboxed).toContain(
      'Policy: full-auto: reads and edits inside the project run without asking; commands ask',
    );
    expect(formatEnvironment({ ...facts, toolMode: 'read-only', policy: 'ask' })).toContain(
      'Policy: read-only: you can read and search; nothing can be changed and no command runs',
    );
  });
});

describe('describeEnvironment', () => {
  const source = (projectFolder: string, projectRoot = projectFolder) => ({
    clock: fixedClock('2026-12-01T12:00:00Z'),
    projectFolder,
    projectRoot,
    sandbox: bwrap,
    network: 'none' as const,
    policy: 'ask' as const,
    toolMode: 'write' as const,
  });

  it('reads the branch and the status of a git project, paths relative to the project folder', async () => {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(repo, 'app', 'src'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'feature/limits');
    fs.writeFileSync(path.join(repo, 'app', 'src', 'server.js'), 'v1\n');
    fs.writeFileSync(path.join(repo, 'outside.txt'), 'v1\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    fs.writeFileSync(path.join(repo, 'app', 'src', 'server.js'), 'v2\n');
    fs.writeFileSync(path.join(repo, 'app', 'notes.txt'), 'new\n');
    fs.writeFileSync(path.join(repo, 'outside.txt'), 'v2\n');
    // The project is a subfolder of the repository: its branch, and only its own changes.
    const text = await describeEnvironment(source(path.join(repo, 'app')));
    expect(text).toContain(
      'Git: branch feature/limits; git status --short:\n   M src/server.js\n  ?? notes.txt\n',
    );
    expect(text).not.toContain('outside.txt');
    const expectedDay = new Intl.DateTimeFormat('en-CA', {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date('2026-12-01T12:00:00Z'));
    expect(text).toContain(`Date: ${expectedDay} (`);
    expect(text).toContain(`OS: `);
    expect(text).toContain(`${os.type()} ${os.release()} ${os.arch()}`);
    expect(text).toContain('Policy: ask: ');
  });

  it('names a detached HEAD by its commit, and says so outside any repository without running git', async () => {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    git(repo, 'checkout', '-q', '--detach');
    expect(await describeEnvironment(source(repo))).toContain(
      `Git: branch detached at ${sha.slice(0, 7)}; git status: clean`,
    );
    const plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    expect(await describeEnvironment(source(plain))).toContain('Git: not a git repository');
  });

  it('reports a checkout by the project folder’s branch and the checkout’s own status, never an enclosing repository', async () => {
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    git(project, 'init', '-q', '-b', 'release');
    // Keel's home sits inside some other repository; the checkout in it has no .git of its own.
    const home = path.join(dir, 'home');
    const checkout = path.join(home, 'sessions', 's', 'workspace', 'persistent', 'project');
    fs.mkdirSync(checkout, { recursive: true });
    git(home, 'init', '-q', '-b', 'dotfiles');
    fs.writeFileSync(path.join(checkout, 'x.txt'), 'x\n');
    const text = await describeEnvironment(source(project, checkout));
    expect(text).toContain('Git: branch release\n');
    expect(text).not.toContain('x.txt');
    expect(text).not.toContain('dotfiles');
  });

  it('starts git when asked, before its first await: a read-ahead runs while the turn works, not after it', async () => {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'new.txt'), 'n\n');
    const before = gitProcessCount();
    const facts = readGitFacts({ projectFolder: repo, projectRoot: repo });
    // Started synchronously: as promises its checks each waited for a gap in the caller's synchronous work.
    expect(gitProcessCount()).toBe(before + 1);
    expect(await facts).toEqual({ branch: 'main', status: ['?? new.txt'] });
    // An unreadable or missing folder is left out, never a rejection.
    expect(
      await readGitFacts({ projectFolder: path.join(dir, 'gone'), projectRoot: path.join(dir, 'gone') }),
    ).toEqual({});
  });

  it("takes a status the folder's view knows (no git), and asks git when it knows none or fails", async () => {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'new.txt'), 'n\n');
    const source = { projectFolder: repo, projectRoot: repo };
    const asked: string[] = [];
    const before = gitProcessCount();
    const known = await readGitFacts(source, (folder) => {
      asked.push(folder);
      return Promise.resolve([' M known.ts']);
    });
    expect(known).toEqual({ branch: 'main', status: [' M known.ts'] });
    expect(asked).toEqual([repo]);
    expect(gitProcessCount()).toBe(before);
    expect(await readGitFacts(source, () => Promise.resolve(undefined))).toEqual({
      branch: 'main',
      status: ['?? new.txt'],
    });
    expect(await readGitFacts(source, () => Promise.reject(new Error('the view went away')))).toEqual({
      branch: 'main',
      status: ['?? new.txt'],
    });
  });
});
