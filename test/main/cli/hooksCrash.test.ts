import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

// Issue #30: `keel run` killed (SIGKILL) after a call's PreToolUse hook decided and was recorded, before the
// call started: `keel resume` reads the decision back from the log, never runs the hook again, and the call
// runs on it (the hook's allow: no approval asked in the ask policy).

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
});
