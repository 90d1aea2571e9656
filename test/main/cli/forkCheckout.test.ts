import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { checkoutPath, eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-fork-checkout-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), 'a\nb\nc\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: project });
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', 'add', '-A'], { cwd: project });
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', 'commit', '-qm', 'initial'], {
      cwd: project,
    });
  },
});

const read = (file: string) => fs.readFileSync(path.join(cli.project, file), 'utf8');
const command = (text: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'run_command', arguments: { command: text } }],
});
const lastOutput = (id: string) =>
  eventsOf(cli.home, id)
    .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')
    .at(-1)?.content ?? '';

describe('keel fork: the fork works on the project as it was at its point', () => {
  it("its checkout lacks the parent's later changes; the project and the parent keep them; both continue", async () => {
    cli.server.enqueue(command("printf 'one\\n' > one.txt"), { kind: 'reply', text: 'one' });
    const first = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'first' }));
    expect(first.code, first.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    // The second turn's change (a command's sed and a new file) is the one the fork must not see.
    cli.server.enqueue(command("sed -i 's/^b$/B/' a.txt && printf 'later\\n' > later.txt"), {
      kind: 'reply',
      text: 'two',
    });
    expect((await keel(cli.home, ['run', '--session', id, 'second'])).code).toBe(0);
    expect(read('a.txt')).toBe('a\nB\nc\n');
    const second = eventsOf(cli.home, id).filter((e) => e.kind === 'user_message')[1]?.seq as number;

    const forked = await keel(cli.home, ['fork', id, '--at', String(second - 1)]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = forked.stdout.trim();
    const parentBefore = eventsOf(cli.home, id);

    cli.server.enqueue(command("cat a.txt; ls; printf 'fork\\n' > fork.txt"), {
      kind: 'reply',
      text: 'in the fork',
    });
    const inFork = await keel(cli.home, ['run', '--session', forkId, 'other way']);
    expect(inFork.code, inFork.stderr).toBe(0);
    // The model saw the project as at the fork point: turn one's file, not turn two's change.
    expect(lastOutput(forkId)).toMatch(/^a\nb\nc\n/);
    expect(lastOutput(forkId)).toContain('one.txt');
    expect(lastOutput(forkId)).not.toContain('later.txt');
    // The fork's commit carried only its own work: the project keeps the parent's change and gains fork.txt.
    expect(read('a.txt')).toBe('a\nB\nc\n');
    expect(read('later.txt')).toBe('later\n');
    expect(read('fork.txt')).toBe('fork\n');
    const forkCommits = eventsOf(cli.home, forkId).filter(
      (e): e is EventOf<'persistent_commit'> => e.kind === 'persistent_commit',
    );
    expect(forkCommits.at(-1)?.files.map((f) => f.path)).toEqual(['fork.txt']);
    // The parent's log is untouched by the fork.
    expect(eventsOf(cli.home, id)).toEqual(parentBefore);

    // The fork's next turn starts from its point again (plus its own work and the user's), after the reset.
    cli.server.enqueue(command('cat a.txt; ls'), { kind: 'reply', text: 'again' });
    expect((await keel(cli.home, ['run', '--session', forkId, 'look again'])).code).toBe(0);
    expect(lastOutput(forkId)).toMatch(/^a\nb\nc\n/);
    expect(lastOutput(forkId)).toContain('fork.txt');
    expect(lastOutput(forkId)).not.toContain('later.txt');
    expect(fs.existsSync(checkoutPath(cli.home, forkId, 'later.txt'))).toBe(false);

    // The parent continues on the project as it is: its change and the fork's file.
    cli.server.enqueue(command('cat a.txt; ls'), { kind: 'reply', text: 'three' });
    expect((await keel(cli.home, ['run', '--session', id, 'third'])).code).toBe(0);
    expect(lastOutput(id)).toMatch(/^a\nB\nc\n/);
    expect(lastOutput(id)).toContain('later.txt');
    expect(lastOutput(id)).toContain('fork.txt');
    // Every request the provider got was valid (it answered each with the scripted step).
    expect(cli.server.requests.length).toBeGreaterThanOrEqual(10);
  }, 120_000);
});
