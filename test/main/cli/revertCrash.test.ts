import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/*
 * A revert killed (SIGKILL, the built CLI) at each of its steps, then resumed by the session's next turn: the
 * folder ends either wholly as before the revert or wholly as after it, never a mix, with exactly as many
 * changes_reverted events as reverts that took effect; a revert asked for again then finishes the job.
 */

const BEFORE = { 'a.txt': 'one\ntwo\nthree\n', 'b.bin': Buffer.from([0, 1, 2, 255]), 'c.txt': null };
const AFTER = { 'a.txt': 'one\nTWO\nthree\n', 'b.bin': Buffer.from([9, 0, 9]), 'c.txt': 'made\n' };
type State = Record<string, string | Buffer | null>;

const cli = useCliFixture('keel-revert-crash-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), BEFORE['a.txt']);
    fs.writeFileSync(path.join(project, 'b.bin'), BEFORE['b.bin']);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], { cwd: project });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  },
});

/** What the folder holds of the three files the turn changes. */
function folder(): State {
  const state: State = {};
  for (const name of Object.keys(BEFORE)) {
    const file = path.join(cli.project, name);
    state[name] = !fs.existsSync(file)
      ? null
      : name.endsWith('.bin')
        ? fs.readFileSync(file)
        : fs.readFileSync(file, 'utf8');
  }
  return state;
}

const reverts = (id: string) => eventsOf(cli.home, id).filter((e) => e.kind === 'changes_reverted').length;

describe('a revert killed at each step', () => {
  it.each([
    ['revert_after_snapshot', 'before'],
    ['revert_after_journal', 'after'],
    ['during_revert', 'after'],
    ['revert_after_files', 'after'],
    ['revert_after_events', 'after'],
  ] as const)(
    'killed at %s: the next turn finds the folder wholly %s',
    async (point, expected) => {
      cli.server.enqueue(
        {
          kind: 'reply',
          toolCalls: [
            {
              name: 'run_command',
              arguments: {
                command:
                  "sed -i 's/^two$/TWO/' a.txt && printf '\\011\\000\\011' > b.bin && printf 'made\\n' > c.txt",
              },
            },
          ],
        },
        { kind: 'reply', text: 'done' },
      );
      const ran = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'edit' }));
      expect(ran.code, ran.stderr).toBe(0);
      expect(folder()).toEqual(AFTER);
      const id = onlySessionId(cli.home);

      const killed = await keel(cli.home, ['revert', id, '--turn', '1'], { KEEL_CRASH_AT: point });
      expect(killed.code).not.toBe(0);
      expect(killed.signal ?? 'SIGKILL').toBe('SIGKILL');

      // The session's next turn completes (or never started) the revert before it reads anything.
      cli.server.enqueue({ kind: 'reply', text: 'carry on' });
      const next = await keel(cli.home, ['run', '--session', id, 'carry on']);
      expect(next.code, next.stderr).toBe(0);
      expect(folder()).toEqual(expected === 'before' ? AFTER : BEFORE);
      expect(reverts(id)).toBe(expected === 'before' ? 0 : 1);
      expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'history', 'revert-pending.json'))).toBe(
        false,
      );
      // The user's snapshot was taken before any file was written, whatever the kill point.
      expect(eventsOf(cli.home, id).some((e) => e.kind === 'user_snapshot')).toBe(true);

      // Asked again, the revert ends the same way for all: wholly reverted, one event.
      const again = await keel(cli.home, ['revert', id, '--turn', '1']);
      expect(again.code, again.stderr).toBe(0);
      expect(folder()).toEqual(BEFORE);
      expect(reverts(id)).toBe(1);
    },
    90_000,
  );
});
