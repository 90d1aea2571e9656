import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, Policy } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { decideApproval, revokeGrant } from '../../../../main/core/harness/approvals.js';
import { approveProjectSetup, projectRules } from '../../../../main/core/setup/index.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

// Permission rules from real settings files, through Keel's own turn host (createTurnHost), the real turn
// engine, the scripted provider and the real box: the issue's example, in both layouts.

const fixture = useTurnHostFixture('keel-rules-turn-', {
  prepare: ({ project }) => {
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'echo tests-ran' } }),
    );
    fs.writeFileSync(path.join(project, 'x'), 'keep\n');
  },
});

let userHome: string;
beforeEach(() => {
  userHome = path.join(fixture.dir, 'user-home');
  fs.mkdirSync(userHome, { recursive: true });
});

function write(base: string, relative: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(base, relative)), { recursive: true });
  fs.writeFileSync(path.join(base, relative), text);
}

const issueSettings = JSON.stringify({
  permissions: { allow: ['Bash(npm test:*)'], deny: ['Bash(git push:*)'] },
});

async function turn(log: SessionLog, prompt: string) {
  const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome } });
  try {
    return await runTurn(host, { prompt });
  } finally {
    await host.dispose?.();
  }
}

const command = (id: string, line: string) => ({
  kind: 'reply' as const,
  text: '',
  toolCalls: [{ id, name: 'run_command', arguments: { command: line } }],
});
const resultOf = (log: SessionLog, id: string) =>
  log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id);
const requestsOf = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
const startedOf = (log: SessionLog, id: string) =>
  log.read().some((e) => e.kind === 'tool_call_started' && e.toolCallId === id);
const session = (policy: Policy) => fixture.createSession({ policy, toolMode: 'write' });

describe.runIf(process.platform === 'linux')('permission rules at the gate (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('the issue: npm test runs without asking, npm test && rm -rf x asks, git push is refused even in full-auto', async () => {
    write(fixture.project, '.claude/settings.json', issueSettings);
    approveProjectSetup(fixture.home, fixture.project, 'test');

    const ask = session('ask');
    fixture.server.enqueue(command('t1', 'npm test'), command('t2', 'npm test && rm -rf x'));
    expect((await turn(ask, 'test')).status).toBe('awaiting_approval');
    expect(resultOf(ask, 't1')?.content).toContain('tests-ran');
    const [request] = requestsOf(ask);
    expect(JSON.parse(request?.arguments ?? '{}')).toEqual({ command: 'npm test && rm -rf x' });
    expect(startedOf(ask, 't2')).toBe(false);
    const applied = ask.read().filter((e) => e.kind === 'permission_rules_applied');
    expect(applied).toEqual([
      expect.objectContaining({
        project: fs.realpathSync(fixture.project),
        rules: [
          { action: 'deny', rule: 'Bash(git push:*)', source: 'project .claude/settings.json' },
          { action: 'allow', rule: 'Bash(npm test:*)', source: 'project .claude/settings.json' },
        ],
      }),
    ]);

    const auto = session('full-auto');
    fixture.server.enqueue(
      command('p1', 'git push origin main'),
      command('p2', 'true; sh -c "git push --force"'),
      { kind: 'reply', text: 'done' },
    );
    expect(await turn(auto, 'push')).toEqual({ status: 'completed', text: 'done' });
    for (const id of ['p1', 'p2']) {
      expect(startedOf(auto, id)).toBe(false);
      expect(resultOf(auto, id)).toMatchObject({ isError: true });
      expect(resultOf(auto, id)?.content).toContain(
        'refused by the rule deny Bash(git push:*) (project .claude/settings.json)',
      );
    }
  });

  it('reads the user home in the .keel layout (trusted without approval); an ask rule asks even in full-auto', async () => {
    write(userHome, '.keel/settings.json', JSON.stringify({ permissions: { ask: ['Bash(cat:*)'] } }));
    write(userHome, '.claude/settings.json', JSON.stringify({ permissions: { deny: ['Read(secret/**)'] } }));
    write(fixture.project, 'secret/key', 'k\n');
    const log = session('full-auto');
    fixture.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'secret/key' } }],
      },
      command('c1', 'cat x'),
    );
    expect((await turn(log, 'read')).status).toBe('awaiting_approval');
    expect(resultOf(log, 'r1')?.content).toContain(
      'refused by the rule deny Read(secret/**) (user ~/.claude/settings.json)',
    );
    const [request] = requestsOf(log);
    expect(request?.reason).toBe('the rule ask Bash(cat:*) (user ~/.keel/settings.json) asks first');
  });

  it('a project file not approved, or changed after approval, has no effect', async () => {
    write(
      fixture.project,
      '.claude/settings.json',
      JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'] } }),
    );
    const before = session('ask');
    fixture.server.enqueue(command('a1', 'npm test'));
    expect((await turn(before, 'test')).status).toBe('awaiting_approval');
    expect(before.read().some((e) => e.kind === 'permission_rules_applied')).toBe(false);

    approveProjectSetup(fixture.home, fixture.project, 'test');
    write(fixture.project, '.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash'] } }));
    const after = session('ask');
    fixture.server.enqueue(command('a2', 'npm test'));
    expect((await turn(after, 'test')).status).toBe('awaiting_approval');
    expect(startedOf(after, 'a2')).toBe(false);
  });

  it("an approval's always keeps a rule later sessions run under; revoking the grant removes it", async () => {
    const first = session('ask');
    fixture.server.enqueue(command('g1', 'npm test'));
    expect((await turn(first, 'test')).status).toBe('awaiting_approval');
    const decided = decideApproval(
      fixture.home,
      first,
      { decision: 'grant', scope: 'prefix:npm test' },
      'test',
      { always: true },
    );
    expect(decided.always).toMatchObject({ action: 'allow', rule: 'Bash(npm test:*)', sessionId: first.id });
    const listed = projectRules({ home: fixture.home, userHome, project: fixture.project }).rules;
    expect(listed).toEqual([
      { action: 'allow', rule: 'Bash(npm test:*)', source: `keel (always, from session ${first.id})` },
    ]);

    const second = session('ask');
    fixture.server.enqueue(command('g2', 'npm test'), { kind: 'reply', text: 'ran' });
    expect(await turn(second, 'test')).toEqual({ status: 'completed', text: 'ran' });
    expect(resultOf(second, 'g2')?.content).toContain('tests-ran');

    revokeGrant(fixture.home, first, decided.recorded.seq, undefined, 'test');
    expect(projectRules({ home: fixture.home, userHome, project: fixture.project }).rules).toEqual([]);
    const third = session('ask');
    fixture.server.enqueue(command('g3', 'npm test'));
    expect((await turn(third, 'test')).status).toBe('awaiting_approval');
  });

  it("a subagent runs under its parent's rules: a deny refuses in the child too", async () => {
    write(fixture.project, '.claude/settings.json', issueSettings);
    approveProjectSetup(fixture.home, fixture.project, 'test');
    const parent = session('full-auto');
    fixture.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [
          { id: 's1', name: 'spawn_subagent', arguments: { task: 'Push it.', tools: ['run_command'] } },
        ],
      },
      command('c1', 'git push origin main'),
      { kind: 'reply', text: 'could not push' },
      { kind: 'reply', text: 'parent done' },
    );
    expect(await turn(parent, 'delegate')).toEqual({ status: 'completed', text: 'parent done' });
    const started = parent
      .read()
      .find((e): e is EventOf<'subagent_started'> => e.kind === 'subagent_started');
    const child = fixture.track(SessionLog.open(fixture.home, started?.childId ?? ''));
    expect(startedOf(child, 'c1')).toBe(false);
    expect(resultOf(child, 'c1')?.content).toContain('refused by the rule deny Bash(git push:*)');
    expect(child.read().filter((e) => e.kind === 'permission_rules_applied')).toHaveLength(1);
  });
});
