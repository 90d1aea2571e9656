import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

// Issue #30: `keel run` exiting is its session's end: the SessionEnd hooks run once (reason `other`), in the
// box, after the turn; a failing one is a notice and leaves the exit code alone. `keel run --session` on the
// next day is a SessionStart `resume`, then another end.

const cli = useCliFixture('keel-cli-hooks-end-');

describe.runIf(process.platform === 'linux')('SessionEnd when keel exits', () => {
  it('runs once per keel run, after the turn, and never fails the command', async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
    const userHome = path.join(cli.dir, 'user-home');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      JSON.stringify({
        hooks: {
          SessionEnd: [
            {
              hooks: [
                {
                  type: 'command',
                  command: 'jq -r .reason >> "$CLAUDE_PROJECT_DIR/ended"',
                  timeout: 10,
                },
                { type: 'command', command: 'echo cannot flush >&2; exit 1' },
              ],
            },
          ],
          SessionStart: [{ matcher: 'resume', hooks: [{ type: 'command', command: 'echo resumed' }] }],
        },
      }),
    );
    const env = { KEEL_USER_HOME: userHome };
    const ended = () => fs.readFileSync(path.join(cli.project, 'ended'), 'utf8');
    cli.server.enqueue({ kind: 'reply', text: 'first answer' }, { kind: 'reply', text: 'second answer' });
    const first = await keel(
      cli.home,
      newSessionArgs(cli, { policy: 'ask', prompt: 'hello', extra: ['--commit', 'direct'] }),
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('first answer');
    expect(first.stderr).toContain('SessionEnd hook (~/.claude/settings.json) failed');
    expect(ended()).toBe('other\n');
    const id = onlySessionId(cli.home);
    const kinds = () =>
      eventsOf(cli.home, id).flatMap((e) =>
        e.kind === 'hook_ran'
          ? [`${e.event}:${e.decision}`]
          : e.kind === 'assistant_message'
            ? ['reply']
            : [],
      );
    expect(kinds()).toEqual(['reply', 'SessionEnd:none', 'SessionEnd:error']);

    const second = await keel(cli.home, ['run', '--session', id, 'again'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(ended()).toBe('other\nother\n');
    expect(kinds().slice(3)).toEqual(['SessionStart:none', 'reply', 'SessionEnd:none', 'SessionEnd:error']);
  });
});
