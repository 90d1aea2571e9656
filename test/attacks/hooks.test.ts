import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { sessionEnd } from '../../main/core/harness/hookHost.js';
import { approveProjectSetup } from '../../main/core/setup/index.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { useTurnHostFixture } from '../support/turnHost.js';

// Issue 30, hooks: a cloned repository's hook does nothing before the user approved its settings file's exact
// bytes (nor after the file changed), and a hook, trusted or not, runs in the box: it cannot write outside
// the project (the folder around it, the user's real home).

const fixture = useTurnHostFixture('keel-attack-hooks-');
let userHome: string;
let outside: string;
beforeEach(() => {
  userHome = path.join(fixture.dir, 'user-home');
  outside = path.join(fixture.dir, 'outside');
  fs.mkdirSync(userHome, { recursive: true });
  fs.mkdirSync(outside, { recursive: true });
});

const hooksFile = (command: string) =>
  JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command }] }] } });

async function turn(log: SessionLog) {
  fixture.server.enqueue({ kind: 'reply', text: 'done' });
  const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome } });
  try {
    return await runTurn(host, { prompt: 'hi' });
  } finally {
    await host.dispose?.();
  }
}
const hookRuns = (log: SessionLog) => log.read().filter((e) => e.kind === 'hook_ran');

describe.runIf(process.platform === 'linux')('hooks: trust and the box (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it("a cloned repository's hooks never run before approval, nor once the file changed after it", async () => {
    const marker = path.join(fixture.project, 'pwned');
    fs.mkdirSync(path.join(fixture.project, '.claude'), { recursive: true });
    fs.mkdirSync(path.join(fixture.project, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(fixture.project, '.claude/settings.json'), hooksFile('touch pwned'));
    fs.writeFileSync(path.join(fixture.project, '.codex/hooks.json'), hooksFile('touch pwned'));
    const before = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    expect(await turn(before)).toEqual({ status: 'completed', text: 'done' });
    expect(fs.existsSync(marker)).toBe(false);
    expect(hookRuns(before)).toEqual([]);

    approveProjectSetup(fixture.home, fixture.project, 'test');
    fs.writeFileSync(
      path.join(fixture.project, '.claude/settings.json'),
      hooksFile('touch pwned; echo changed'),
    );
    fs.writeFileSync(path.join(fixture.project, '.codex/hooks.json'), hooksFile('touch pwned '));
    const changed = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    expect(await turn(changed)).toEqual({ status: 'completed', text: 'done' });
    expect(fs.existsSync(marker)).toBe(false);
    expect(hookRuns(changed)).toEqual([]);
  });

  it("a cloned repository's SessionEnd hook does not run when its session ends or is deleted, before approval", async () => {
    const marker = path.join(fixture.project, 'pwned');
    fs.mkdirSync(path.join(fixture.project, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(fixture.project, '.claude/settings.json'),
      JSON.stringify({ hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: 'touch pwned' }] }] } }),
    );
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    expect(await turn(log)).toEqual({ status: 'completed', text: 'done' });
    const env = { PATH: process.env.PATH, KEEL_USER_HOME: userHome };
    expect(await sessionEnd(log, 'other', { env })).toBeUndefined();
    expect(await sessionEnd(log, 'clear', { env })).toBeUndefined();
    expect(fs.existsSync(marker)).toBe(false);
    expect(hookRuns(log)).toEqual([]);
    // Approved, the same file's hook runs at the end (in the box, in the project).
    approveProjectSetup(fixture.home, fixture.project, 'test');
    expect(await sessionEnd(log, 'other', { env })).toMatchObject({ decision: 'none' });
    expect(fs.existsSync(marker)).toBe(true);
  });

  it("a hook script changed after approval does not run: the settings file's hook folder is approved with it", async () => {
    const marker = path.join(fixture.project, 'pwned');
    const hooks = path.join(fixture.project, '.claude/hooks');
    fs.mkdirSync(hooks, { recursive: true });
    fs.writeFileSync(path.join(hooks, 'guard.sh'), 'echo guarded > guarded\n');
    fs.writeFileSync(
      path.join(fixture.project, '.claude/settings.json'),
      hooksFile('sh "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"'),
    );
    approveProjectSetup(fixture.home, fixture.project, 'test');
    const approved = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    expect(await turn(approved)).toEqual({ status: 'completed', text: 'done' });
    expect(hookRuns(approved)).toHaveLength(1);

    // A pull (or a command in the box) rewrites the script the approved settings file runs.
    fs.writeFileSync(path.join(hooks, 'guard.sh'), 'touch pwned\n');
    const changed = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    expect(await turn(changed)).toEqual({ status: 'completed', text: 'done' });
    expect(fs.existsSync(marker)).toBe(false);
    expect(hookRuns(changed)).toEqual([]);
  });

  it('a hook cannot write outside the box: not beside the project, not in the real home', async () => {
    const inHome = path.join(os.homedir(), `keel-hook-escape-${randomUUID()}`);
    const beside = path.join(outside, 'pwned');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      hooksFile(
        `echo x > '${beside}'; echo x > '${inHome}'; echo x > "$HOME/pwned"; echo inside > in-project`,
      ),
    );
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
    try {
      expect(await turn(log)).toEqual({ status: 'completed', text: 'done' });
      expect(fs.existsSync(beside)).toBe(false);
      expect(fs.existsSync(inHome)).toBe(false);
      expect(fs.existsSync(path.join(userHome, 'pwned'))).toBe(false);
      // It did run, in the project.
      expect(fs.readFileSync(path.join(fixture.project, 'in-project'), 'utf8')).toBe('inside\n');
      expect(hookRuns(log)).toHaveLength(1);
    } finally {
      fs.rmSync(inHome, { force: true });
    }
  });
});
