import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { useCliFixture } from '../support/cliFixture.js';
import { keel } from '../support/keelProcess.js';
import type { ScriptStep } from '../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../support/sessionFixture.js';

// Issue 15, "Smaller": a prefix grant (`prefix:find`) also ran the program's own ways to run a command or
// write (`find -delete`, `find -exec`). Through the built CLI, policy ask, the scripted model and the real
// box: the user grants the prefix for a harmless call, the model's next call uses the flag, and that call
// must ask instead of running (before the fix it ran: the victim file was gone).

const cli = useCliFixture('keel-attack-prefix-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'victim.txt'), 'keep me\n');
  },
});

const command = (line: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'run_command', arguments: { command: line } }],
});

const victim = () =>
  fs.existsSync(path.join(cli.project, 'victim.txt'))
    ? fs.readFileSync(path.join(cli.project, 'victim.txt'), 'utf8')
    : undefined;

// [granted prefix, the harmless first command, the command stepping outside, a word of the reason].
const cases: [string, string, string, string][] = [
  ['find', "find . -name '*.txt'", "find . -name '*.txt' -delete", '-delete'],
  ['find', "find . -name '*.txt'", 'find . -name victim.txt -exec rm {} +', '-exec'],
  ['sed', 'sed -n 1p victim.txt', "sed -i 's/keep/lost/' victim.txt", 'in place'],
  ['sed', 'sed -n 1p victim.txt', "sed -n '1e rm victim.txt' victim.txt", 'e command'],
  ['xargs', 'xargs --version', 'xargs -a victim.txt rm victim.txt', 'does not name'],
  ['git', 'git --version', 'git -c alias.x=!rm x victim.txt', '-c'],
  ['env', 'env', 'env rm victim.txt', 'does not name'],
  ['bash', 'bash --version', "bash -c 'rm victim.txt'", '-c'],
];

describe('attack: a prefix grant does not cover the program running a command or writing', () => {
  it.each(cases)(
    'prefix:%s granted for %j; %j asks',
    async (prefix, harmless, attack, why) => {
      const sandbox = await detectSandbox();
      if (sandbox.kind !== 'bwrap') {
        console.warn(`skipped: needs bwrap (${sandbox.reason})`);
        return;
      }
      cli.server.enqueue(command(harmless));
      const first = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'go' }));
      expect(first.code, first.stderr).toBe(3);
      const id = onlySessionId(cli.home);
      cli.server.enqueue(command(attack), { kind: 'reply', text: 'done' });
      const approved = await keel(cli.home, ['approve', id, '--scope', `prefix:${prefix}`, '--resume']);
      // The granted call ran; the next one stopped at its own approval request.
      expect(approved.code, approved.stderr).toBe(3);
      const events = eventsOf(cli.home, id);
      const requests = events.filter((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
      expect(requests).toHaveLength(2);
      const last = requests[1] as EventOf<'approval_request'>;
      expect(JSON.parse(last.arguments)).toMatchObject({ command: attack });
      expect(last.reason).toContain(`the grant for "${prefix}" does not cover this`);
      expect(last.reason).toContain(why);
      expect(events.filter((e) => e.kind === 'tool_call_started')).toHaveLength(1);
      expect(victim()).toBe('keep me\n');
    },
    60_000,
  );
});
