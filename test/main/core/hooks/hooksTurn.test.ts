import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, Policy } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { decideApproval } from '../../../../main/core/harness/approvals.js';
import { approveProjectSetup } from '../../../../main/core/setup/index.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { useUserHome, writeUnder } from '../../../support/setupFiles.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

// Issue #30: hooks from real settings files (Claude Code's `.claude/settings.json`, Codex's `.codex/hooks.json`,
// the user's home), real hook scripts run in the real box, through Keel's own turn host and the turn engine.

const fixture = useTurnHostFixture('keel-hooks-turn-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'x'), 'keep\n'),
});

const home = useUserHome(fixture);
const write = writeUnder;

type Group = { matcher?: string; hooks: { type: 'command'; command: string; timeout?: number }[] };
const settings = (hooks: Record<string, Group[]>) => JSON.stringify({ hooks }, null, 2);
const one = (command: string, matcher?: string, timeout?: number): Group[] => [
  {
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }],
  },
];

const notices: string[] = [];
async function turn(log: SessionLog, prompt?: string) {
  const host = await fixture.keelHost(log, {
    env: { PATH: process.env.PATH, KEEL_USER_HOME: home.path },
    hooks: { onNotice: (text) => notices.push(text) },
  });
  try {
    return await runTurn(host, prompt === undefined ? {} : { prompt });
  } finally {
    await host.dispose?.();
  }
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  kind: 'reply' as const,
  text: '',
  toolCalls: [{ id, name, arguments: args }],
});
const command = (id: string, line: string) => call(id, 'run_command', { command: line });
const resultOf = (log: SessionLog, id: string) =>
  log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id);
const hookRuns = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'hook_ran'> => e.kind === 'hook_ran');
const session = (policy: Policy) => fixture.createSession({ policy, toolMode: 'write' });
const sent = () => JSON.stringify(fixture.server.requests.at(-1)?.body ?? {});

describe.runIf(process.platform === 'linux')('hooks in the box (bubblewrap)', () => {
  beforeEach((context) => {
    notices.length = 0;
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('a PostToolUse formatter (approved project script) rewrites the file write_file wrote', async () => {
    write(
      fixture.project,
      '.claude/hooks/format.sh',
      '#!/bin/sh\nfile=$(jq -r .tool_input.file_path)\ntr a-z A-Z < "$file" > "$file.tmp" && mv "$file.tmp" "$file"\necho formatted "$file"\n',
    );
    write(
      fixture.project,
      '.claude/settings.json',
      settings({ PostToolUse: one('sh "$CLAUDE_PROJECT_DIR/.claude/hooks/format.sh"', 'Write|Edit') }),
    );
    approveProjectSetup(fixture.home, fixture.project, 'test');
    const log = session('full-auto');
    fixture.server.enqueue(call('w1', 'write_file', { path: 'a.txt', content: 'hello\n' }), {
      kind: 'reply',
      text: 'done',
    });
    expect(await turn(log, 'write')).toEqual({ status: 'completed', text: 'done' });
    expect(fs.readFileSync(path.join(fixture.project, 'a.txt'), 'utf8')).toBe('HELLO\n');
    const [ran] = hookRuns(log);
    expect(ran).toMatchObject({
      event: 'PostToolUse',
      source: '.claude/settings.json',
      subject: 'call:w1',
      decision: 'none',
      exitCode: 0,
    });
    expect(ran?.output).toContain('formatted');
    expect(ran?.inputDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('PreToolUse refuses rm -rf (exit 2 with stderr, and JSON deny), even in full-auto; other calls run', async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({
        PreToolUse: one(
          `jq -r .tool_input.command | grep -q 'rm -rf' && { echo 'no rm -rf here' >&2; exit 2; }; exit 0`,
          'Bash',
        ),
      }),
    );
    write(
      home.path,
      '.codex/hooks.json',
      settings({
        PreToolUse: one(
          `jq -r .tool_input.command | grep -q 'git push' && printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"pushing is for humans"}}'; exit 0`,
          'Bash',
        ),
      }),
    );
    const log = session('full-auto');
    fixture.server.enqueue(
      command('c1', 'rm -rf x'),
      command('c2', 'git push origin main'),
      command('c3', 'echo fine'),
      {
        kind: 'reply',
        text: 'ok',
      },
    );
    expect(await turn(log, 'clean')).toEqual({ status: 'completed', text: 'ok' });
    expect(fs.existsSync(path.join(fixture.project, 'x'))).toBe(true);
    expect(resultOf(log, 'c1')).toMatchObject({ isError: true });
    expect(resultOf(log, 'c1')?.content).toContain('no rm -rf here');
    expect(resultOf(log, 'c2')?.content).toContain('pushing is for humans');
    expect(resultOf(log, 'c3')?.content).toContain('fine');
    const decisions = hookRuns(log).map((run) => [run.subject, run.source, run.decision]);
    expect(decisions).toEqual(
      expect.arrayContaining([
        ['call:c1', '~/.claude/settings.json', 'deny'],
        ['call:c2', '~/.codex/hooks.json', 'deny'],
        ['call:c3', '~/.claude/settings.json', 'none'],
      ]),
    );
    expect(log.read().some((e) => e.kind === 'tool_call_started' && e.toolCallId !== 'c3')).toBe(false);
  });

  it("a rewritten input is what the approval shows and what runs; the hook's ask asks in full-auto", async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({
        PreToolUse: one(
          `printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check the rewrite","updatedInput":{"command":"echo after-rewrite"}}}'`,
          'Bash',
        ),
      }),
    );
    const log = session('full-auto');
    fixture.server.enqueue(command('r1', 'echo before'), { kind: 'reply', text: 'ran' });
    expect((await turn(log, 'go')).status).toBe('awaiting_approval');
    const request = log.read().find((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
    expect(JSON.parse(request?.arguments ?? '{}')).toEqual({ command: 'echo after-rewrite' });
    expect(request?.reason).toContain('check the rewrite');
    decideApproval(fixture.home, log, { decision: 'grant', scope: 'once' }, 'test');
    expect(await turn(log)).toEqual({ status: 'completed', text: 'ran' });
    expect(resultOf(log, 'r1')?.content).toContain('after-rewrite');
    // Read back on the second turn, never run again.
    expect(hookRuns(log)).toHaveLength(1);
  });

  it('a hook that hangs times out, a hook printing 50 MB is cut; both fail only their step', async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({
        PreToolUse: one('sleep 30', 'Bash', 0.5),
        PostToolUse: one(`head -c 50000000 /dev/zero | tr '\\0' a; exit 3`, 'run_command'),
      }),
    );
    const log = session('full-auto');
    fixture.server.enqueue(command('h1', 'echo still-ran'), { kind: 'reply', text: 'ok' });
    const started = Date.now();
    expect(await turn(log, 'go')).toEqual({ status: 'completed', text: 'ok' });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(resultOf(log, 'h1')?.content).toContain('still-ran');
    const [hung, loud] = hookRuns(log);
    expect(hung).toMatchObject({ event: 'PreToolUse', decision: 'error', timedOut: true, exitCode: null });
    expect(hung?.reason).toContain('did not finish within 0.5 s');
    expect(loud).toMatchObject({ event: 'PostToolUse', decision: 'error', exitCode: 3, bytes: 50_000_000 });
    expect(loud?.output.length).toBeLessThanOrEqual(4096);
    expect(notices.filter((text) => text.includes('failed'))).toHaveLength(2);
  });

  it('UserPromptSubmit adds context or refuses the prompt; SessionStart adds context once', async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({
        SessionStart: one('echo the project codename is heron'),
        UserPromptSubmit: one(
          `jq -r .prompt | grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; echo the secret word is kiwi`,
        ),
      }),
    );
    const log = session('ask');
    fixture.server.enqueue({ kind: 'reply', text: 'hi' }, { kind: 'reply', text: 'again' });
    expect(await turn(log, 'hello')).toEqual({ status: 'completed', text: 'hi' });
    expect(sent()).toContain('the secret word is kiwi');
    expect(sent()).toContain('the project codename is heron');
    const refused = await turn(log, 'my password is hunter2');
    expect(refused).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(refused)).toContain('no secrets in prompts');
    expect(log.read().some((e) => e.kind === 'user_message' && e.content.includes('hunter2'))).toBe(false);
    expect(await turn(log, 'once more')).toEqual({ status: 'completed', text: 'again' });
    expect(hookRuns(log).filter((run) => run.event === 'SessionStart')).toHaveLength(1);
  });

  it('a Stop hook blocks once: the model goes on with its reason, then may stop', async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({
        Stop: one(
          `jq -e .stop_hook_active >/dev/null && exit 0; printf '%s' '{"decision":"block","reason":"run the tests first"}'`,
        ),
      }),
    );
    const log = session('ask');
    fixture.server.enqueue({ kind: 'reply', text: 'done' }, { kind: 'reply', text: 'tests ran, done' });
    expect(await turn(log, 'work')).toEqual({ status: 'completed', text: 'tests ran, done' });
    expect(sent()).toContain('run the tests first');
    expect(hookRuns(log).map((run) => run.decision)).toEqual(['block', 'none']);
  });

  it('PreCompact hooks run (trigger auto) once a compaction is decided, before it starts', async () => {
    write(
      home.path,
      '.claude/settings.json',
      settings({ PreCompact: one(`jq -r .trigger > "$CLAUDE_PROJECT_DIR/compact-trigger"`, 'auto') }),
    );
    const log = fixture.createSession({ policy: 'ask', toolMode: 'write', contextWindow: 2_000 });
    fixture.server.enqueue({ kind: 'reply', text: 'read it' });
    const host = await fixture.keelHost(log, {
      env: { PATH: process.env.PATH, KEEL_USER_HOME: home.path },
      compaction: { threshold: 0.5 },
    });
    await runTurn(host, { prompt: 'word '.repeat(3_000) });
    expect(hookRuns(log).map((run) => [run.event, run.decision])).toEqual([['PreCompact', 'none']]);
    expect(fs.readFileSync(path.join(fixture.project, 'compact-trigger'), 'utf8')).toBe('auto\n');
  });
});
