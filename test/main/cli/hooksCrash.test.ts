import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

// Issue #30: `keel run` killed (SIGKILL) after a call's PreToolUse hook decided and was recorded, before the
// call started: `keel resume` reads the decision back from the log, never runs the hook again, and the call
// runs on it (the hook's allow: no approval asked in the ask policy). The same after a Stop hook's block: the
// model goes back to work with its reason, and the count of continuations (stop_hook_active) survives the crash.

const cli = useCliFixture('keel-cli-hooks-crash-');

describe.runIf(process.platform === 'linux')('a crash between a hook decision and its tool', () => {
  it('resume replays the recorded decision and does not run the hook again', async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
    const userHome = path.join(cli.dir, 'user-home');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    const hook = `echo ran >> "$CLAUDE_PROJECT_DIR/hook-runs"; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`;
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] },
      }),
    );
    const env = { KEEL_USER_HOME: userHome };
    cli.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'c1', name: 'run_command', arguments: { command: 'echo hi > out.txt' } }],
      },
      { kind: 'reply', text: 'written' },
    );
    await cli.killedAt(
      newSessionArgs(cli, { policy: 'ask', prompt: 'write it', extra: ['--commit', 'direct'] }),
      {
        ...env,
        KEEL_CRASH_AT: 'after_hook_decision',
      },
    );
    const id = onlySessionId(cli.home);
    const runs = () =>
      fs.readFileSync(path.join(cli.project, 'hook-runs'), 'utf8').split('\n').filter(Boolean);
    expect(runs()).toHaveLength(1);
    expect(eventsOf(cli.home, id).filter((e) => e.kind === 'hook_ran')).toEqual([
      expect.objectContaining({ event: 'PreToolUse', decision: 'allow', subject: 'call:c1' }),
    ]);
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'tool_call_started')).toBe(false);

    const resumed = await keel(cli.home, ['resume', id], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('written');
    expect(runs()).toHaveLength(1);
    expect(fs.readFileSync(path.join(cli.project, 'out.txt'), 'utf8')).toBe('hi\n');
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'approval_request')).toBe(false);
    expect(eventsOf(cli.home, id).filter((e) => e.kind === 'hook_ran')).toHaveLength(1);
  });

  it('resume after a crash right after a Stop hook blocked: the model goes back with its reason, the hook is not asked again', async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
    const userHome = path.join(cli.dir, 'user-home');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    const hook =
      'echo ran >> "$CLAUDE_PROJECT_DIR/stop-runs"; jq -e .stop_hook_active >/dev/null && exit 0; ' +
      `printf '%s' '{"decision":"block","reason":"run the tests first"}'`;
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: hook }] }] } }),
    );
    const env = { KEEL_USER_HOME: userHome };
    cli.server.enqueue({ kind: 'reply', text: 'done' }, { kind: 'reply', text: 'tests ran, done' });
    await cli.killedAt(
      newSessionArgs(cli, { policy: 'ask', prompt: 'work', extra: ['--commit', 'direct'] }),
      { ...env, KEEL_CRASH_AT: 'after_stop_hook_decision' },
    );
    const id = onlySessionId(cli.home);
    const runs = () =>
      fs.readFileSync(path.join(cli.project, 'stop-runs'), 'utf8').split('\n').filter(Boolean);
    expect(runs()).toHaveLength(1);
    const stops = () => eventsOf(cli.home, id).filter((e) => e.kind === 'hook_ran');
    expect(stops()).toEqual([expect.objectContaining({ event: 'Stop', decision: 'block' })]);

    const resumed = await keel(cli.home, ['resume', id], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('tests ran, done');
    expect(JSON.stringify(cli.server.requests.at(-1)?.body)).toContain('run the tests first');
    // The block was read back; only the new answer's stop asked the hook, with stop_hook_active (it let it end).
    expect(runs()).toHaveLength(2);
    const [blocked, ended] = stops();
    expect(blocked).toMatchObject({ decision: 'block' });
    expect(ended).toMatchObject({ event: 'Stop', decision: 'none' });
    expect(ended?.kind === 'hook_ran' && ended.subject).not.toBe(
      blocked?.kind === 'hook_ran' && blocked.subject,
    );
  });
});
