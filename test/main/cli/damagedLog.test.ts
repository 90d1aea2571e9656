import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/*
 * Issue 20, item 4: an error about a damaged log names the session, the file and what to do (before: "a Keel
 * database in HOME is corrupt", a bare JSON.parse message, or "no session X" for a session the list shows).
 */

const cli = useCliFixture('keel-damaged-log-');

async function oneSession(): Promise<{ id: string; file: string }> {
  cli.server.enqueue({ kind: 'reply', text: 'hello there' });
  const run = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'hi' }));
  expect(run.code, run.stderr).toBe(0);
  const id = onlySessionId(cli.home);
  return { id, file: path.join(cli.home, 'sessions', id, 'events.sqlite') };
}

const advice =
  'restore that file from a backup, or import the session again from an export (keel import FILE)';

describe('a damaged session log is named with its session and file', () => {
  const cases: [string, (file: string) => void, RegExp][] = [
    ['deleted', (file) => fs.rmSync(file), /\(the file is missing\)/],
    ['zero-length', (file) => fs.writeFileSync(file, ''), /\(the file is empty\)/],
    ['not a database', (file) => fs.writeFileSync(file, 'x'.repeat(8192)), /\(file is not a database\)/],
  ];
  for (const [name, damage, reason] of cases) {
    it(`${name}: show names the session, the file and what to do; the list still shows it`, async () => {
      const { id, file } = await oneSession();
      for (const extra of ['-wal', '-shm']) fs.rmSync(`${file}${extra}`, { force: true });
      damage(file);
      const shown = await keel(cli.home, ['show', id]);
      expect(shown.code).toBe(1);
      expect(shown.stderr).toContain(`keel: session ${id}: its log ${file} is damaged (`);
      expect(shown.stderr).toMatch(reason);
      expect(shown.stderr).toContain(advice);
      const listed = await keel(cli.home, ['sessions', '--json']);
      expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id)).toEqual([id]);
    });
  }

  it('one event whose body is not JSON: the session, the file and its seq are named', async () => {
    const { id, file } = await oneSession();
    const db = new Database(file);
    // The log's triggers and CHECK refuse any change; a damaged disk does not ask.
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as {
      name: string;
    }[]) {
      db.exec(`DROP TRIGGER "${name}"`);
    }
    db.pragma('ignore_check_constraints = ON');
    db.prepare("UPDATE events SET body = '{oops' WHERE seq = 2").run();
    db.close();
    const shown = await keel(cli.home, ['show', id]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain(
      `keel: session ${id}: event 2 of its log ${file} is damaged (its body is not JSON: `,
    );
    expect(shown.stderr).toContain(advice);
  });
});
