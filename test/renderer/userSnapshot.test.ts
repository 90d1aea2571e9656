import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../main/common/events.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * "Nothing a user wrote is ever lost", in the browser against `keel serve`: undoing a turn keeps the user's
 * uncommitted work first (a snapshot row in the transcript), and its Restore button writes it back.
 */

let project: string;
const file = (name: string) => path.join(project, name);
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
const of = <K extends SessionEvent['kind']>(events: SessionEvent[], kind: K) =>
  events.filter((event): event is EventOf<K> => event.kind === kind);

describe.skipIf(!HAS_CHROMIUM)("the user's snapshot in the browser", () => {
  const app = setUpApp({
    prefix: 'keel-ui-snapshot-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(file('a.txt'), 'one\ntwo\nthree\n');
      git('init', '-q', '-b', 'main');
      git('add', '-A');
      git('commit', '-qm', 'initial');
    },
  });

  it('undo keeps the uncommitted work as a snapshot; Restore these files writes it back', async () => {
    const page = await app.goto();
    const sessionId = await createSession(page, {
      title: 'Snapshot work',
      projectFolder: project,
      policy: 'full-auto',
      checkout: 'auto',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'run_command', arguments: { command: "sed -i 's/^two$/TWO/' a.txt" } }],
      },
      { kind: 'reply', text: 'Line two is loud now.' },
    );
    await sendMessage(page, 'Shout line two.');
    await page.getByText('Line two is loud now.').waitFor();
    await waitForIdle(page);
    await expect.poll(() => fs.readFileSync(file('a.txt'), 'utf8')).toContain('TWO');
    // The user's own work, never committed anywhere.
    fs.writeFileSync(file('notes.txt'), 'my notes\n');

    await page.getByRole('button', { name: 'Undo this turn’s changes' }).click();
    await page.getByText(/Reverted turn 1: 1 file of the project folder put back/).waitFor();
    await page
      .getByText(
        /Your work in the project folder was kept before reverting turn 1: 2 files \(a\.txt, notes\.txt\)/,
      )
      .waitFor();
    const [snapshot] = of(await readEvents(page, sessionId), 'user_snapshot');
    expect(snapshot?.files.map((f) => f.path)).toEqual(['a.txt', 'notes.txt']);
    await screenshot(page, 'snapshot-01-kept');

    // The notes are lost by hand; the snapshot's button brings them (and the turn's a.txt) back.
    fs.rmSync(file('notes.txt'));
    await page.getByRole('button', { name: 'Restore these files' }).first().click();
    await page
      .getByText(
        'Restored 2 files (a.txt, notes.txt). What was there is kept too: it shows in the conversation, to restore.',
      )
      .waitFor();
    expect(fs.readFileSync(file('notes.txt'), 'utf8')).toBe('my notes\n');
    expect(fs.readFileSync(file('a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    await page.getByText('Restored your kept work: 2 files of the project folder written back').waitFor();
    expect(of(await readEvents(page, sessionId), 'user_snapshot_restored')).toMatchObject([
      { snapshotSeq: snapshot?.seq },
    ]);
    await screenshot(page, 'snapshot-02-restored');
  });
});
