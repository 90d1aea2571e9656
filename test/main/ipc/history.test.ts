import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixture, type IpcFixture } from './support.js';

let f: IpcFixture;

beforeEach(async () => {
  f = await startFixture('keel-ipc-history-');
  fs.writeFileSync(path.join(f.project, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\n');
});

afterEach(async () => {
  await f.close();
});

const read = () => fs.readFileSync(path.join(f.project, 'a.txt'), 'utf8');

async function turn(sessionId: string, prompt: string) {
  const { turnId } = await f.call('turns.send', { sessionId, prompt });
  return (await f.turnEnded(sessionId, turnId)).outcome;
}

describe('history channels (the app: undo, rewind, fork)', () => {
  it("undoes a turn's change made by a command, lists a conflict with the three texts, rewinds and forks", async () => {
    const session = await f.newSession({ policy: 'full-auto' });
    f.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'run_command', arguments: { command: "sed -i 's/two/TWO/' a.txt" } }],
      },
      { kind: 'reply', text: 'done' },
    );
    expect(await turn(session.id, 'shout two')).toEqual({ status: 'completed' });
    expect(read()).toContain('TWO');

    // The user edits the same line: the undo writes nothing and shows the three versions.
    fs.writeFileSync(path.join(f.project, 'a.txt'), read().replace('TWO', 'Two!'));
    const refused = await f.call('history.revert', { sessionId: session.id, turn: 1 });
    expect(refused.status).toBe('conflict');
    const [conflict] = refused.status === 'conflict' ? refused.conflicts : [];
    expect(conflict).toMatchObject({ dir: 'project', path: 'a.txt' });
    expect(conflict?.sides).toEqual({
      current: 'one\nTwo!\nthree\nfour\nfive\n',
      changed: 'one\nTWO\nthree\nfour\nfive\n',
      original: 'one\ntwo\nthree\nfour\nfive\n',
    });
    expect(read()).toContain('Two!');

    // An edit elsewhere merges.
    fs.writeFileSync(path.join(f.project, 'a.txt'), 'one\nTWO\nthree\nfour\nFIVE by me\n');
    const undone = await f.call('history.revert', { sessionId: session.id, turn: 1 });
    expect(undone.status).toBe('reverted');
    expect(read()).toBe('one\ntwo\nthree\nfour\nFIVE by me\n');
    const events = (await f.call('events.page', { sessionId: session.id })).events;
    expect(events.at(-1)?.kind).toBe('changes_reverted');
    // The app's transcript hears of it as of any event.
    expect(
      f.pushes.some(
        (push) => push.topic === 'event.appended' && push.payload.event.kind === 'changes_reverted',
      ),
    ).toBe(true);

    const firstUser = events.find((e) => e.kind === 'user_message')?.seq as number;
    const forked = await f.call('history.fork', { sessionId: session.id, at: firstUser - 1 });
    expect(forked.parentId).toBe(session.id);
    // The fork's view names where it came from (its parentId is a fork's, not a subagent's); the parent has none.
    expect((await f.call('sessions.open', { sessionId: forked.id })).forkedFrom).toEqual({
      sessionId: session.id,
      seq: firstUser - 1,
    });
    expect((await f.call('sessions.open', { sessionId: session.id })).forkedFrom).toBeUndefined();
    const rewound = await f.call('history.rewind', { sessionId: session.id, toSeq: firstUser - 1 });
    expect(rewound.status).toBe('rewound');
    expect((await f.fail('history.rewind', { sessionId: session.id, toSeq: 9999 })).code).toBe(
      'invalid_input',
    );
  });
});
