import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { generateHarness } from '../../main/core/sessions/stream.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ProviderServer } from '../support/providerServer.js';
import { makeRepo, makeTemp } from '../main/core/persistent/support.js';
import { callTool, eventsOf, harnessFor } from '../main/core/sessions/support.js';

/**
 * Attack corpus, git family: a command in the box prepares something that a later git outside the box
 * would execute (Keel's own checkout commit, or the user's next `git status` / `git commit` in their
 * folder). Each case runs the attack through a scripted model, the real bubblewrap box and a real
 * repository, then runs the host-side git and asserts the planted code never ran: the marker file it would
 * create, outside the box, never appears.
 */

let dir: string;
let home: string;
let project: string;
let marker: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-attack-git-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export {};\n' });
  marker = path.join(dir, 'PLANTED-CODE-RAN');
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What the user does next in their folder, with their own plain git (their config, hooks on). */
function usersGit(cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', ['-c', 'user.name=U', '-c', 'user.email=u@u', ...args], {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    });
  } catch {
    // Whether git succeeds is not the point; whether the planted code ran is.
  }
}

/** Runs one turn in which the model runs each command, in order; returns the tool results' text. */
async function runCommands(
  session: { id: string; direct?: boolean },
  commands: readonly string[],
): Promise<string[]> {
  const harness = harnessFor(home, server, session.direct === true ? {} : { project });
  if (session.direct === true) {
    await harness.sessions.getOrCreate({
      id: session.id,
      create: { projectFolder: project, persistentDirs: {} },
    });
  }
  server.enqueue(...commands.map((command) => callTool('run_command', { command })), {
    kind: 'reply',
    text: 'done',
  });
  await generateHarness({ harness, session: session.id, messages: [{ role: 'user', content: 'go' }] });
  return eventsOf(home, session.id)
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')
    .map((e) => e.content);
}

/** A hook script that leaves the marker on the host when git runs it. */
const hookScript = () => `#!/bin/sh\\ntouch ${marker}\\n`;

async function needsBwrap(): Promise<boolean> {
  const sandbox = await detectSandbox();
  if (sandbox.kind === 'bwrap') return true;
  console.warn(`skipped: needs bwrap (${sandbox.reason})`);
  return false;
}

describe('attacks: host code execution through git', () => {
  it('a command cannot create .git/hooks where the project had none; the user commit runs no hook', async () => {
    if (!(await needsBwrap())) return;
    fs.rmSync(path.join(project, '.git', 'hooks'), { recursive: true, force: true });
    const [result] = await runCommands({ id: 'hooks', direct: true }, [
      `mkdir -p .git/hooks && printf '${hookScript()}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo PLANTED`,
    ]);
    expect(result).not.toContain('PLANTED');
    expect(fs.existsSync(path.join(project, '.git', 'hooks'))).toBe(false);
    fs.writeFileSync(path.join(project, 'user.txt'), 'user\n');
    usersGit(project, 'add', 'user.txt');
    usersGit(project, 'commit', '-qm', 'user commit');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('moving .git away and back (then setting core.fsmonitor and core.hooksPath) fails; git status runs nothing', async () => {
    if (!(await needsBwrap())) return;
    const before = fs.readFileSync(path.join(project, '.git', 'config'), 'utf8');
    const [moved, configured] = await runCommands({ id: 'move', direct: true }, [
      'mv .git .git_old && mkdir .git && cp -a .git_old/. .git/ && echo MOVED',
      `git config core.fsmonitor 'touch ${marker}' && git config core.hooksPath .githooks && echo CONFIGURED`,
    ]);
    expect(moved).not.toContain('MOVED');
    expect(configured).not.toContain('CONFIGURED');
    expect(fs.existsSync(path.join(project, '.git_old'))).toBe(false);
    expect(fs.readFileSync(path.join(project, '.git', 'config'), 'utf8')).toBe(before);
    fs.writeFileSync(path.join(project, 'src', 'app.ts'), 'export const x = 1;\n');
    usersGit(project, 'status');
    usersGit(project, 'commit', '-qam', 'user commit');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('a commondir pointing at a writable copy of .git cannot be created', async () => {
    if (!(await needsBwrap())) return;
    const [result] = await runCommands({ id: 'commondir', direct: true }, [
      `cp -a .git evilgit && git --git-dir=evilgit config core.fsmonitor 'touch ${marker}' && echo ../evilgit > .git/commondir && echo PLANTED`,
    ]);
    expect(result).not.toContain('PLANTED');
    expect(fs.existsSync(path.join(project, '.git', 'commondir'))).toBe(false);
    usersGit(project, 'status');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a checkout's .git file and its repository's .git cannot be rewritten or moved from the box", async () => {
    if (!(await needsBwrap())) return;
    const results = await runCommands({ id: 'checkout' }, [
      `d=$(git rev-parse --git-common-dir) && mkdir -p "$d/hooks" && printf '${hookScript()}' > "$d/hooks/post-commit" && echo HOOKED`,
      `d=$(git rev-parse --git-common-dir) && mv "$d" "$d.old" && echo MOVEDREPO`,
      `git config core.fsmonitor 'touch ${marker}' && echo CONFIGURED`,
      `printf 'gitdir: /tmp/evil\\n' > .git && echo REWROTE`,
      'mv .git .git_old && echo MOVED',
    ]);
    for (const word of ['REWROTE', 'MOVED', 'HOOKED', 'MOVEDREPO', 'CONFIGURED'])
      expect(results.join('\n')).not.toMatch(new RegExp(`^${word}$`, 'm'));
    expect(fs.readFileSync(path.join(project, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    fs.writeFileSync(path.join(project, 'src', 'app.ts'), 'export const y = 2;\n');
    usersGit(project, 'commit', '-qam', 'user commit');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('a nested repository made by a command is held back from the commit, even in full-auto', async () => {
    if (!(await needsBwrap())) return;
    await runCommands({ id: 'nested' }, [
      `mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch ${marker}' && echo a > a.txt && echo NESTED`,
      'echo kept > kept.txt',
    ]);
    // The ordinary change is committed; the nested repository is not.
    expect(fs.readFileSync(path.join(project, 'kept.txt'), 'utf8')).toBe('kept\n');
    expect(fs.existsSync(path.join(project, 'sub', '.git'))).toBe(false);
    usersGit(path.join(project, 'sub'), 'status');
    usersGit(project, 'status');
    expect(fs.existsSync(marker)).toBe(false);
  });
});
