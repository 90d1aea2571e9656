import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../main/common/events.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * A session's history in the browser against `keel serve`, on a real git project with an auto checkout: undo a
 * turn's changes (a command's edit, reverted onto the folder), a conflicting undo (the user edited the same
 * line: nothing written, a Monaco diff per file), a rewind with files refused by that conflict, a rewind
 * (the abandoned branch folded, the next request without it), and a fork opened as its own session.
 */

let project: string;
const LINES = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'];

const read = () => fs.readFileSync(path.join(project, 'a.txt'), 'utf8');
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

const of = <K extends SessionEvent['kind']>(events: SessionEvent[], kind: K) =>
  events.filter((event): event is EventOf<K> => event.kind === kind);

/** The transcript row of the user message saying `text`. */
const userRow = (page: Page, text: string) =>
  page.locator('.transcript-row', {
    has: page.getByRole('article', { name: 'You' }).filter({ hasText: text }),
  });

describe.skipIf(!HAS_CHROMIUM)('undo, rewind and fork in the browser', () => {
  const app = setUpApp({
    prefix: 'keel-ui-history-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'a.txt'), `${LINES.join('\n')}\n`);
      git('init', '-q', '-b', 'main');
      git('add', '-A');
      git('commit', '-qm', 'initial');
    },
  });

  it("undoes a turn's changes, shows a conflicting undo as diffs, rewinds and forks", async () => {
    const watched = app.watch('history');
    const page = await app.goto();
    const sessionId = await createSession(page, {
      title: 'History work',
      projectFolder: project,
      policy: 'full-auto',
      checkout: 'auto',
    });

    // Turn 1: a command edits line two; the auto checkout commits it to the project.
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
    await expect.poll(read).toContain('\nTWO\n');
    // In the user's terms (issue #37): the folder by name, no event numbers.
    await page.getByText('Committed 1 file to the project folder').waitFor();

    // Undo: the folder is as before the turn, the log says so, the transcript shows it.
    await page.getByRole('button', { name: 'Undo this turn’s changes' }).click();
    await page.getByText(/Reverted turn 1: 1 file of the project folder put back/).waitFor();
    expect(read()).toBe(`${LINES.join('\n')}\n`);
    expect(of(await readEvents(page, sessionId), 'changes_reverted')).toMatchObject([{ turn: 1 }]);
    await screenshot(page, 'history-01-undone');

    // Turn 2 edits line two again; then the user edits the same line by hand.
    app.provider.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'run_command', arguments: { command: "sed -i 's/^two$/Two!/' a.txt" } }],
      },
      { kind: 'reply', text: 'Line two is excited now.' },
    );
    await sendMessage(page, 'Excite line two.');
    await page.getByText('Line two is excited now.').waitFor();
    await waitForIdle(page);
    await expect.poll(read).toContain('\nTwo!\n');
    const mine = read().replace('Two!', 'two, as I like it');
    fs.writeFileSync(path.join(project, 'a.txt'), mine);

    // Undoing turn 2 conflicts: nothing is written, each file has its diff, the panel closes.
    const undos = page.getByRole('button', { name: 'Undo this turn’s changes' });
    await expect.poll(() => undos.count()).toBe(2);
    await undos.nth(1).click();
    const panel = page.getByRole('region', { name: 'Revert conflicts' });
    await panel.getByText(/Could not undo turn 2: 1 file changed since/).waitFor();
    const diff = panel.locator('.diff-view[data-path="project/a.txt"][data-state="ready"]');
    await diff.waitFor();
    await panel.getByText('folder now | before the change').waitFor();
    expect(read()).toBe(mine);
    expect(of(await readEvents(page, sessionId), 'changes_reverted')).toHaveLength(1);
    await screenshot(page, 'history-02-undo-conflict');
    await panel.getByRole('button', { name: 'The change', exact: true }).click();
    await panel.getByText('before the change | after it').waitFor();
    await panel.locator('.diff-view[data-state="ready"]').waitFor();
    await screenshot(page, 'history-03-conflict-the-change');
    await panel.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => panel.count()).toBe(0);

    // Rewind to before turn 2 with its files: refused by the same conflict, nothing rewound.
    const second = userRow(page, 'Excite line two.');
    await second.getByRole('button', { name: 'Rewind to here' }).click();
    const confirm = second.getByRole('group', { name: 'Rewind to here' });
    await confirm.getByLabel('Also undo the changes to the files made since').check();
    await screenshot(page, 'history-04-rewind-confirm');
    await confirm.getByRole('button', { name: 'Rewind' }).click();
    await page.getByText('Not rewound: undoing the later changes to the files would conflict.').waitFor();
    await panel.getByText(/Could not undo the changes after this point/).waitFor();
    expect(of(await readEvents(page, sessionId), 'rewound')).toHaveLength(0);
    expect(read()).toBe(mine);
    await panel.getByRole('button', { name: 'Close' }).click();

    // Rewind without files: the branch is folded under its marker, the folder (the user's edit) untouched.
    await second.getByRole('button', { name: 'Rewind to here' }).click();
    await second
      .getByRole('group', { name: 'Rewind to here' })
      .getByRole('button', { name: 'Rewind' })
      .click();
    const marker = page.locator('.marker-rewound');
    await marker.waitFor();
    const userTwo = of(await readEvents(page, sessionId), 'user_message').find(
      (e) => e.content === 'Excite line two.',
    );
    expect(of(await readEvents(page, sessionId), 'rewound')).toMatchObject([
      { toSeq: (userTwo?.seq ?? 0) - 1 },
    ]);
    await expect.poll(() => page.getByText('Line two is excited now.').count()).toBe(0);
    expect(read()).toBe(mine);
    // The message rewound to is back in the composer, to edit and send again.
    await expect.poll(() => page.getByLabel('Message').inputValue()).toBe('Excite line two.');
    await screenshot(page, 'history-05-rewound');
    await marker.getByRole('button', { name: /Show the abandoned branch/ }).click();
    await page.locator('.set-aside').getByText('Line two is excited now.').waitFor();
    // Inside the abandoned branch nothing offers to rewind or fork again.
    expect(await page.locator('.set-aside').getByRole('button', { name: 'Fork from here' }).count()).toBe(0);
    await screenshot(page, 'history-06-abandoned-branch');

    // The conversation continues from the rewind point: the next request has no trace of turn 2.
    app.provider.enqueue({ kind: 'reply', text: 'Continuing from turn one.' });
    const before = app.provider.requests.length;
    await sendMessage(page, 'Now something else.');
    await page.getByText('Continuing from turn one.').waitFor();
    await waitForIdle(page);
    const next = app.provider.requests[before];
    expect(next?.raw).toContain('Now something else.');
    expect(next?.raw).toContain('Shout line two.');
    expect(next?.raw).not.toContain('Excite line two.');

    // Fork from the newest message, once confirmed: a new session with the conversation before it, opened at once.
    const newest = userRow(page, 'Now something else.');
    await newest.getByRole('button', { name: 'Fork from here' }).click();
    const forkConfirm = newest.getByRole('group', { name: 'Fork from here' });
    await forkConfirm.getByText(/This session stays as it is/).waitFor();
    await forkConfirm.getByRole('button', { name: 'Fork', exact: true }).click();
    await expect
      .poll(async () => {
        const listed = await page.evaluate<{ value: { sessions: { id: string; parentId?: string }[] } }>(
          'window.keel.sessions.list({})',
        );
        return listed.value.sessions.find((s) => s.parentId === sessionId)?.id;
      })
      .toBeTruthy();
    const listed = await page.evaluate<{ value: { sessions: { id: string; parentId?: string }[] } }>(
      'window.keel.sessions.list({})',
    );
    const forkId = listed.value.sessions.find((s) => s.parentId === sessionId)?.id as string;
    const forked = await readEvents(page, forkId);
    expect(of(forked, 'session_created')[0]?.forkedFrom?.sessionId).toBe(sessionId);
    expect(of(forked, 'user_message').map((e) => e.content)).toEqual(['Shout line two.', 'Excite line two.']);
    // The view is the fork's: its transcript ends before the message it was forked at.
    await page.getByText('Shout line two.').waitFor();
    await expect.poll(() => page.getByText('Now something else.').count()).toBe(0);
    // In the user's terms: the session it came from, by title, and no event number.
    await page.getByText('Forked from “History work”: both go on independently.').waitFor();
    expect(await page.getByText(/Subagent session/).count()).toBe(0);
    await screenshot(page, 'history-07-fork-opened');
    await page.getByRole('button', { name: 'Open the session it was forked from' }).click();
    await page.getByText('Now something else.').waitFor();
    // After undo, rewind and fork, the conversation still speaks the user's terms: no event numbers, no codes.
    const shown = await page.getByRole('log', { name: 'Transcript' }).innerText();
    expect(shown).not.toMatch(
      /\b(event|change|snapshot) \d+|\((bad_request|invalid_input|invalid_state|provider)\)/,
    );

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });

  it('says in words why a rewind is refused while an approval is pending', async () => {
    const watched = app.watch('history-refused');
    const page = await app.goto();
    const sessionId = await createSession(page, {
      title: 'Waiting work',
      projectFolder: project,
      policy: 'auto-edit',
      checkout: 'auto',
    });
    app.provider.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'run_command', arguments: { command: 'rm a.txt' } }],
    });
    await sendMessage(page, 'Remove the file.');
    await page.getByRole('article', { name: 'Approval needed: run_command' }).waitFor();
    const row = userRow(page, 'Remove the file.');
    await row.getByRole('button', { name: 'Rewind to here' }).click();
    await row.getByRole('group', { name: 'Rewind to here' }).getByRole('button', { name: 'Rewind' }).click();
    const alert = page.locator('.history-error');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toMatch(/approval/i);
    expect(text).not.toMatch(/\bat \S+:\d+|Error:/);
    expect(of(await readEvents(page, sessionId), 'rewound')).toHaveLength(0);
    await screenshot(page, 'history-08-rewind-refused');
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => alert.count()).toBe(0);
    expect(watched.errors).toEqual([]);
  });
});
