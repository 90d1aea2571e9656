import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixture, type IpcFixture } from './support.js';

let fixture: IpcFixture;

beforeEach(async () => {
  fixture = await startFixture('keel-ipc-lag-');
  fs.writeFileSync(path.join(fixture.project, 'notes.txt'), 'the notes\n');
});

afterEach(async () => {
  await fixture.close();
});

describe('sessions.list while a turn runs', () => {
  it('says how many events the running session’s counts and search do not cover yet, and nothing once the turn ended', async () => {
    const { server } = fixture;
    const call = fixture.call.bind(fixture);
    const session = await fixture.newSession({ title: 'Lagging' });
    server.enqueue(
      {
        kind: 'reply',
        text: 'reading the zephyr notes',
        toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }],
      },
      // The turn stays running (its reply, call and result held back from the index) until stopped.
      { kind: 'hang' },
    );
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'Read the notes' });
    await fixture.waitForPush(
      'event.appended',
      (p) => p.sessionId === session.id && p.event.kind === 'tool_result',
    );
    await expect.poll(() => server.requests.length).toBe(2);

    const running = (await call('sessions.list')).sessions.find((s) => s.id === session.id);
    const logged = fixture.eventsOf(session.id).length;
    expect(running).toMatchObject({ status: 'running', indexBehind: logged - running!.lastSeq });
    expect(running!.indexBehind).toBeGreaterThanOrEqual(3);
    // That is what the mark tells: the search does not find the running turn's reply yet.
    expect((await call('sessions.list', { search: 'zephyr' })).sessions).toEqual([]);

    expect(await call('turns.stop', { sessionId: session.id })).toEqual({ stopped: true });
    await fixture.turnEnded(session.id, turnId);
    const ended = (await call('sessions.list')).sessions.find((s) => s.id === session.id);
    expect(ended).toMatchObject({ status: 'interrupted', lastSeq: fixture.eventsOf(session.id).length });
    expect(ended).not.toHaveProperty('indexBehind');
    expect((await call('sessions.list', { search: 'zephyr' })).sessions.map((s) => s.id)).toEqual([
      session.id,
    ]);
  });
});
