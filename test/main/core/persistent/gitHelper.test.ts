import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitError, gitProcessCount, gitText, runGit } from '../../../../main/core/persistent/git.js';
import { whenHelperReady } from '../../../../main/core/persistent/gitHelper.js';
import { plain } from '../../../../main/core/persistent/state.js';
import { REPO_ROOT, ensureCliBuilt } from '../../../support/cli.js';
import { makeRepo, makeTemp } from './support.js';

// runGit's gits are started by a small helper process (gitHelper.ts), not by forking this (large) one, once it
// listens (before, git is started here): the same settings, environment, folder, input and exit handling as a git
// started here, real git every time.

let dir: string;
let repo: string;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(() => {
  dir = makeTemp('keel-git-helper-');
  repo = makeRepo(path.join(dir, 'repo'), { 'a.txt': 'a\n' });
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The parent pid of the git runGit starts (an alias's shell reads its parent's /proc entry: the git). */
async function gitParent(): Promise<number> {
  const status = await gitText(plain(repo), ['-c', 'alias.parent=!cat /proc/$PPID/status', 'parent']);
  return Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1]);
}

describe('runGit through the helper process', () => {
  it('runs git in the folder with its input, exit codes and errors as before, counted', async () => {
    expect(await whenHelperReady()).toBe(true);
    const before = gitProcessCount();
    expect(await gitText(plain(repo), ['rev-parse', '--show-toplevel'])).toBe(fs.realpathSync(repo));
    const oid = await gitText(plain(repo), ['hash-object', '--stdin'], { input: 'hello\n' });
    expect(oid).toBe(execFileSync('git', ['hash-object', '--stdin'], { input: 'hello\n' }).toString().trim());
    // An answer code is an answer; any other exit is a GitError with git's own words.
    const quiet = await runGit(plain(repo), ['diff', '--quiet', '--no-index', 'a.txt', 'a.txt'], {
      okCodes: [1],
    });
    expect(quiet.code).toBe(0);
    await expect(runGit(plain(repo), ['cat-file', '-e', 'no-such-object'])).rejects.toThrow(GitError);
    await expect(runGit(plain(repo), ['rev-parse', 'no-such-ref'])).rejects.toThrow(/exit 128/);
    // Keel's fixed settings reach it (-c core.hooksPath=/dev/null among them).
    expect(await gitText(plain(repo), ['config', 'core.hooksPath'])).toBe('/dev/null');
    expect(gitProcessCount() - before).toBe(6);
  });

  it.runIf(process.platform === 'linux')(
    'is not a child of this process, and a helper that died is replaced',
    async () => {
      expect(await whenHelperReady()).toBe(true);
      const helper = await gitParent();
      expect(helper).not.toBe(process.pid);
      expect(Number.isInteger(helper) && helper > 0).toBe(true);
      expect(await gitParent()).toBe(helper);
      process.kill(helper, 'SIGKILL');
      for (let i = 0; i < 50 && fs.existsSync(`/proc/${helper}`); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      // Until a new helper listens, git is started here (no call waits for the helper's boot).
      expect(await gitParent()).toBe(process.pid);
      expect(await whenHelperReady()).toBe(true);
      const next = await gitParent();
      expect(next).not.toBe(helper);
      expect(next).not.toBe(process.pid);
    },
  );

  it('lets an idle process exit: the helper holds it open only while a git runs', () => {
    const script = `
      const { gitText } = await import(${JSON.stringify(path.join(REPO_ROOT, 'dist/main/core/persistent/git.js'))});
      const { plain } = await import(${JSON.stringify(path.join(REPO_ROOT, 'dist/main/core/persistent/state.js'))});
      console.log(await gitText(plain(${JSON.stringify(repo)}), ['rev-parse', '--is-inside-work-tree']));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    expect(out.toString().trim()).toBe('true');
  });
});
