import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { Checkout, type CheckoutLocation } from '../../main/core/persistent/checkout.js';
import { runGit } from '../../main/core/persistent/git.js';
import { stopAllViews } from '../../main/core/persistent/viewHolder.js';
import { generateHarness } from '../../main/core/harness/stream.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ProviderServer } from '../support/providerServer.js';
import { git, makeRepo, makeTemp, overlayHere, unforced } from '../main/core/persistent/support.js';
import { callTool, eventsOf, harnessFor } from '../main/core/harness/support.js';

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
  await stopAllViews();
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

/** Where a checkout of the project lives when the Checkout API is driven directly (no session). */
function checkoutLocation(): CheckoutLocation {
  return {
    workspaceRoot: path.join(dir, 'keel', 'workspace'),
    checkout: path.join(dir, 'keel', 'workspace', 'persistent', 'project'),
    stateDir: path.join(dir, 'keel', 'checkouts', 'project'),
    locksRoot: path.join(dir, 'keel', 'locks'),
  };
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

describe("attacks: Keel's own git runs nothing a repository's config names", () => {
  // On both kinds of checkout: a copy-on-write view's git (run in its holder's namespace) gets the same settings.
  it.each(['copy', 'view'] as const)(
    'checkout, reset, commit and git status run no hook, hooksPath, fsmonitor or submodule config, and ignore GIT_DIR (%s)',
    async (kind) => {
      if (kind === 'view' && !(await overlayHere()).available) return;
      // A nested repository registered as a submodule, with its own fsmonitor.
      const sub = makeRepo(path.join(project, 'sub'), { 'x.txt': 'x\n' });
      git(
        project,
        '-c',
        'core.hooksPath=/dev/null',
        'update-index',
        '--add',
        '--cacheinfo',
        `160000,${git(sub, 'rev-parse', 'HEAD').trim()},sub`,
      );
      fs.writeFileSync(path.join(project, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
      fs.writeFileSync(path.join(sub, 'x.txt'), 'changed\n');
      // Planted by anything before this session (an old box, a tool): every way git runs a program on its own.
      const planted = `#!/bin/sh\ntouch ${marker}\n`;
      for (const folder of [path.join(project, '.git', 'hooks'), path.join(project, '.githooks')]) {
        fs.mkdirSync(folder, { recursive: true });
        for (const hook of [
          'post-checkout',
          'reference-transaction',
          'pre-commit',
          'post-commit',
          'post-index-change',
          'pre-auto-gc',
        ])
          fs.writeFileSync(path.join(folder, hook), planted, { mode: 0o755 });
      }
      const fsmonitor = path.join(dir, 'fsmonitor.sh');
      fs.writeFileSync(fsmonitor, planted, { mode: 0o755 });
      git(sub, 'config', 'core.fsmonitor', fsmonitor);
      git(project, 'config', 'core.fsmonitor', fsmonitor);
      git(project, 'config', 'core.hooksPath', '.githooks');
      git(project, 'config', 'core.sshCommand', fsmonitor);
      // GIT_DIR / GIT_WORK_TREE in Keel's own environment (a shell that exported them) redirect nothing.
      const evil = path.join(dir, 'evil.git');
      git(dir, 'init', '-q', '--bare', evil);
      git(evil, 'config', 'core.fsmonitor', fsmonitor);
      const saved = { dir: process.env['GIT_DIR'], tree: process.env['GIT_WORK_TREE'] };
      process.env['GIT_DIR'] = evil;
      process.env['GIT_WORK_TREE'] = project;
      try {
        const location = checkoutLocation();
        const checkout = await unforced(() =>
          Checkout.open({ name: 'project', path: project, commit: 'auto' }, location, { kind }),
        );
        expect(checkout.kind).toBe(kind === 'copy' ? 'worktree' : 'view');
        fs.writeFileSync(path.join(await checkout.mount(), 'src', 'app.ts'), 'export const z = 3;\n');
        Checkout.markDirty(location);
        const report = await checkout.commit({
          artifactsDir: path.join(dir, 'artifacts'),
          artifactStem: 'c',
        });
        expect(report.status).toBe('committed');
        await checkout.reset();
        // Keel's git in a view runs in its holder (the commit and reset above); on the host its folder is a mount point.
        for (const cwd of [project, sub, ...(kind === 'copy' ? [location.checkout] : [])])
          await runGit({ cwd, env: {} }, ['status', '--porcelain']);
        expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toBe('export const z = 3;\n');
      } finally {
        for (const [name, value] of [
          ['GIT_DIR', saved.dir],
          ['GIT_WORK_TREE', saved.tree],
        ] as const)
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
      }
      expect(fs.existsSync(marker)).toBe(false);
      // The control: the user's own git in the same folder does run it (the plant is real).
      usersGit(project, 'status');
      expect(fs.existsSync(marker)).toBe(true);
    },
  );

  it('git is started in one place only (main/core/persistent/git.ts), so every call gets those settings', () => {
    const offenders: string[] = [];
    const walk = (folder: string): void => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (/\.(ts|tsx|mts|js)$/.test(entry.name)) {
          const text = fs.readFileSync(full, 'utf8');
          if (
            /(spawn|execFile|execFileSync|spawnSync|exec|execSync)\(\s*['"`](git|\/usr\/bin\/git)\b/.test(
              text,
            )
          )
            offenders.push(path.relative(process.cwd(), full));
        }
      }
    };
    walk(path.join(process.cwd(), 'main'));
    expect(offenders).toEqual(['main/core/persistent/git.ts']);
  });
});

describe('attacks: git metadata changed during a turn', () => {
  const location = checkoutLocation;
  const commitOptions = () => ({ artifactsDir: path.join(dir, 'artifacts'), artifactStem: 'c' });

  it('a commit holds every change back, naming each change, when hooks, config or HEAD changed since the reset', async () => {
    const checkout = await Checkout.open({ name: 'project', path: project, commit: 'auto' }, location());
    await checkout.reset();
    fs.writeFileSync(path.join(await checkout.mount(), 'src', 'app.ts'), 'export const w = 4;\n');
    Checkout.markDirty(location());
    // During the turn, something outside Keel switches the branch and plants a hook and an fsmonitor.
    git(project, 'checkout', '-q', '-b', 'elsewhere');
    fs.mkdirSync(path.join(project, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(project, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${marker}\n`, {
      mode: 0o755,
    });
    git(project, 'config', 'core.fsmonitor', `touch ${marker}`);
    const report = await checkout.commit(commitOptions());
    expect(report.status).toBe('unchanged');
    expect(report.held?.gitMetadataChanges).toEqual([
      '.git/HEAD changed',
      '.git/config changed',
      '.git/hooks/pre-commit added',
    ]);
    expect(report.held?.files.map((file) => file.path)).toEqual(['src/app.ts']);
    expect(report.held?.diff).toContain('export const w = 4;');
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toBe('export {};\n');
    // Said once: the next commit has nothing new to hold; once approved, the held change is written.
    expect((await checkout.commit(commitOptions())).held).toBeUndefined();
    const approved = await checkout.commit({ ...commitOptions(), approvedHeld: report.held?.files ?? [] });
    expect(approved.applied?.files.map((file) => file.path)).toEqual(['src/app.ts']);
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toBe('export const w = 4;\n');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('the user committing on the branch meanwhile is not a change of metadata', async () => {
    const checkout = await Checkout.open({ name: 'project', path: project, commit: 'auto' }, location());
    await checkout.reset();
    fs.writeFileSync(path.join(await checkout.mount(), 'session.txt'), 'session\n');
    Checkout.markDirty(location());
    fs.writeFileSync(path.join(project, 'user.txt'), 'user\n');
    git(project, 'add', 'user.txt');
    git(project, 'commit', '-qm', 'user');
    expect((await checkout.commit(commitOptions())).status).toBe('committed');
    expect(fs.readFileSync(path.join(project, 'session.txt'), 'utf8')).toBe('session\n');
  });
});
