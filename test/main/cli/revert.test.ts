import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const LINES = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'];
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff]);

const cli = useCliFixture('keel-revert-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'a.txt'), `${LINES.join('\n')}\n`);
    fs.writeFileSync(path.join(project, 'src', 'image.bin'), BINARY);
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  },
});

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
    cwd: cli.project,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

const read = (file: string) => fs.readFileSync(path.join(cli.project, file), 'utf8');
const exists = (file: string) => fs.existsSync(path.join(cli.project, file));
const reverts = (id: string) =>
  eventsOf(cli.home, id).filter((e): e is EventOf<'changes_reverted'> => e.kind === 'changes_reverted');

/** One turn: a command edits line two with sed, another overwrites the binary file, a tool adds a file. */
async function runTurn(): Promise<string> {
  const step = (name: string, args: Record<string, string>): ScriptStep => ({
    kind: 'reply',
    toolCalls: [{ name, arguments: args }],
  });
  cli.server.enqueue(
    step('run_command', {
      command: "sed -i 's/^two$/TWO/' src/a.txt && printf 'GIF\\000\\003' > src/image.bin",
    }),
    step('write_file', { path: 'src/new.txt', content: 'made by the turn\n' }),
    { kind: 'reply', text: 'done' },
  );
  const result = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'edit' }));
  expect(result.code, result.stderr).toBe(0);
  expect(read('src/a.txt')).toContain('\nTWO\n');
  expect(exists('src/new.txt')).toBe(true);
  return onlySessionId(cli.home);
}

describe('keel revert', () => {
  it("undoes a turn's changes, command-made ones included (binary too), and reverting the revert restores them", async () => {
    const id = await runTurn();
    const [commit] = eventsOf(cli.home, id).filter((e) => e.kind === 'persistent_commit');
    expect(
      commit?.kind === 'persistent_commit' && commit.files.map((f) => [f.path, f.preMode, f.postMode]),
    ).toEqual([
      ['src/a.txt', '100644', '100644'],
      ['src/image.bin', '100644', '100644'],
      ['src/new.txt', undefined, '100644'],
    ]);
    const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(reverted.code, reverted.stderr).toBe(0);
    expect(reverted.stderr).toMatch(/reverted turn 1: 3 files/);
    expect(read('src/a.txt')).toBe(`${LINES.join('\n')}\n`);
    expect(fs.readFileSync(path.join(cli.project, 'src', 'image.bin'))).toEqual(BINARY);
    expect(exists('src/new.txt')).toBe(false);
    expect(git('status', '--porcelain')).toBe('');
    const [event] = reverts(id);
    expect(event?.reverts).toEqual([commit?.seq]);
    expect(event?.turn).toBe(1);

    const again = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/nothing to revert/);

    // The export carries the revert; an import checks that what it reverts is an earlier change.
    const file = path.join(cli.dir, 'export.jsonl');
    expect((await keel(cli.home, ['export', id, '-o', file])).code).toBe(0);
    const imported = await keel(cli.home, ['import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(
      eventsOf(cli.home, imported.stdout.trim()).filter((e) => e.kind === 'changes_reverted'),
    ).toHaveLength(1);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"reverts":\[\d+\]/, '"reverts":[1]'));
    const refused = await keel(cli.home, ['import', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/changes_reverted reverts 1, which is not an earlier persistent_commit/);

    const restored = await keel(cli.home, ['revert', id, '--change', String(event?.seq)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(read('src/a.txt')).toContain('\nTWO\n');
    expect(read('src/new.txt')).toBe('made by the turn\n');
    expect(fs.readFileSync(path.join(cli.project, 'src', 'image.bin'))).toEqual(
      Buffer.from('GIF\x00\x03', 'latin1'),
    );
  });

  it("keeps the user's own edit of the same file made between turns (merged)", async () => {
    const id = await runTurn();
    fs.writeFileSync(
      path.join(cli.project, 'src', 'a.txt'),
      read('src/a.txt').replace('seven', 'SEVEN by me'),
    );
    const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(reverted.code, reverted.stderr).toBe(0);
    expect(read('src/a.txt')).toBe(`${LINES.join('\n').replace('seven', 'SEVEN by me')}\n`);
    // Reverting the revert gives back exactly what the folder held before it, the user's edit included.
    const [event] = reverts(id);
    expect((await keel(cli.home, ['revert', id, '--change', String(event?.seq)])).code).toBe(0);
    expect(read('src/a.txt')).toContain('\nTWO\n');
    expect(read('src/a.txt')).toContain('SEVEN by me');
  });

  it('writes nothing and names the file when the user changed the same lines', async () => {
    const id = await runTurn();
    const mine = read('src/a.txt').replace('TWO', 'two, as I want it');
    fs.writeFileSync(path.join(cli.project, 'src', 'a.txt'), mine);
    const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(reverted.code).toBe(1);
    expect(reverted.stderr).toMatch(/nothing was reverted: 1 file/);
    expect(reverted.stderr).toMatch(
      /project\/src\/a\.txt: it was changed since on the lines the change touched/,
    );
    expect(read('src/a.txt')).toBe(mine);
    expect(read('src/new.txt')).toBe('made by the turn\n');
    expect(fs.readFileSync(path.join(cli.project, 'src', 'image.bin'))).toEqual(
      Buffer.from('GIF\x00\x03', 'latin1'),
    );
    expect(reverts(id)).toEqual([]);
  });

  it('a revert killed after its first file is finished by the next command: the folder ends fully reverted, one event', async () => {
    const id = await runTurn();
    const killed = await keel(cli.home, ['revert', id, '--turn', '1'], { KEEL_CRASH_AT: 'during_revert' });
    expect(killed.code).not.toBe(0);
    expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'history', 'revert-pending.json'))).toBe(true);
    expect(reverts(id)).toEqual([]);
    const resumed = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(read('src/a.txt')).toBe(`${LINES.join('\n')}\n`);
    expect(fs.readFileSync(path.join(cli.project, 'src', 'image.bin'))).toEqual(BINARY);
    expect(exists('src/new.txt')).toBe(false);
    expect(reverts(id)).toHaveLength(1);
    expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'history', 'revert-pending.json'))).toBe(false);
  });

  it('refuses a turn that does not exist or a seq that is not a change, with exit 2', async () => {
    const id = await runTurn();
    const noTurn = await keel(cli.home, ['revert', id, '--turn', '7']);
    expect(noTurn.code).toBe(2);
    expect(noTurn.stderr).toMatch(/there is no turn 7: this session has 1 turns/);
    const notChange = await keel(cli.home, ['revert', id, '--change', '1']);
    expect(notChange.code).toBe(2);
    expect(notChange.stderr).toMatch(/event 1 is a session_created, not a change/);
    const neither = await keel(cli.home, ['revert', id]);
    expect(neither.code).toBe(2);
  });
});
