import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-user-snapshot-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\nsix\n');
    fs.writeFileSync(path.join(project, 'b.txt'), 'b\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], { cwd: project });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  },
});

const read = (file: string) => fs.readFileSync(path.join(cli.project, file), 'utf8');
const write = (file: string, text: string) => fs.writeFileSync(path.join(cli.project, file), text);
const snapshots = (id: string) =>
  eventsOf(cli.home, id).filter((e): e is EventOf<'user_snapshot'> => e.kind === 'user_snapshot');

describe("a snapshot of the user's work before Keel writes", () => {
  it('is taken before a revert (uncommitted files and those the revert writes), listed, and restorable', async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'run_command', arguments: { command: "sed -i 's/^two$/TWO/' a.txt" } }],
      },
      { kind: 'reply', text: 'done' },
    );
    const ran = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'edit' }));
    expect(ran.code, ran.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    // The user's own uncommitted work: an edit of the turn's file, another file changed, one made.
    write('a.txt', read('a.txt').replace('six', 'SIX mine'));
    write('b.txt', 'b, mine\n');
    write('notes.txt', 'my notes\n');
    const mine = { a: read('a.txt'), b: read('b.txt'), notes: read('notes.txt') };

    const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(reverted.code, reverted.stderr).toBe(0);
    expect(reverted.stderr).toMatch(/your work there was kept first as snapshot \d+/);
    const [snapshot] = snapshots(id);
    expect(snapshot?.reason).toBe('before reverting turn 1');
    expect(snapshot?.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt', 'notes.txt']);
    const revertEvent = eventsOf(cli.home, id).find((e) => e.kind === 'changes_reverted');
    expect(snapshot && revertEvent && snapshot.seq < revertEvent.seq).toBe(true);
    // Bytes are kept in the history store.
    for (const file of snapshot?.files ?? [])
      expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'history', 'blobs', file.sha256 ?? ''))).toBe(
        true,
      );
    expect(read('a.txt')).toBe('one\ntwo\nthree\nfour\nfive\nSIX mine\n');

    const listed = await keel(cli.home, ['snapshots', id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^${snapshot?.seq}\\t.*\\tproject\\tbefore reverting turn 1\\t3 files`),
    );

    // The user loses their notes and mangles a.txt: the snapshot brings the three files back.
    fs.rmSync(path.join(cli.project, 'notes.txt'));
    write('a.txt', 'oops\n');
    const restored = await keel(cli.home, ['snapshots', id, '--restore', String(snapshot?.seq)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(read('a.txt')).toBe(mine.a);
    expect(read('b.txt')).toBe(mine.b);
    expect(read('notes.txt')).toBe(mine.notes);
    // What the folder held before the restore was kept too, so the restore itself can be undone.
    const newer = snapshots(id)[1];
    expect(newer?.reason).toBe(`before restoring snapshot ${snapshot?.seq}`);
    expect(eventsOf(cli.home, id).at(-1)).toMatchObject({
      kind: 'user_snapshot_restored',
      snapshotSeq: snapshot?.seq,
    });
    expect((await keel(cli.home, ['snapshots', id, '--restore', String(newer?.seq)])).code).toBe(0);
    expect(read('a.txt')).toBe('oops\n');
    expect(fs.existsSync(path.join(cli.project, 'notes.txt'))).toBe(false);

    const json = JSON.parse((await keel(cli.home, ['snapshots', id, '--json'])).stdout) as {
      event: { seq: number };
      restoredAt?: number;
    }[];
    expect(json[0]?.restoredAt).toBeGreaterThan(snapshot?.seq ?? 0);

    // Not a snapshot: exit 2 with what to do.
    const wrong = await keel(cli.home, ['snapshots', id, '--restore', '1']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/event 1 is not a snapshot of your work/);

    // Export and import carry the snapshots; an import refuses a restore of something that is not one.
    const file = path.join(cli.dir, 'export.jsonl');
    expect((await keel(cli.home, ['export', id, '-o', file])).code).toBe(0);
    const imported = await keel(cli.home, ['import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(eventsOf(cli.home, imported.stdout.trim()).filter((e) => e.kind === 'user_snapshot').length).toBe(
      snapshots(id).length,
    );
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"snapshotSeq":\d+/, '"snapshotSeq":1'));
    const refused = await keel(cli.home, ['import', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /user_snapshot_restored restores 1, which is not an earlier user_snapshot/,
    );
  }, 120_000);
});
