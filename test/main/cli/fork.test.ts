import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-fork-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), 'a\n');
  },
});

type Message = { role: string; content: unknown };
const lastRequest = () =>
  (cli.server.requests.at(-1)?.body as { messages: Message[] }).messages.filter((m) => m.role !== 'system');
/** The conversation's texts, without the environment block each request ends with. */
const texts = (messages: Message[]) =>
  messages
    .map((m) =>
      typeof m.content === 'string' ? m.content.replace(/\n*<environment>[\s\S]*$/, '') : m.content,
    )
    .filter((text) => text !== '');

async function twoTurns(): Promise<string> {
  cli.server.enqueue({ kind: 'reply', text: 'one' });
  const first = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'first' }));
  expect(first.code, first.stderr).toBe(0);
  const id = onlySessionId(cli.home);
  cli.server.enqueue({ kind: 'reply', text: 'two' });
  expect((await keel(cli.home, ['run', '--session', id, 'second'])).code).toBe(0);
  return id;
}

describe('keel fork', () => {
  it('starts a session from the conversation up to a point; fork and parent continue independently', async () => {
    const id = await twoTurns();
    const parentEvents = eventsOf(cli.home, id);
    const second = parentEvents.filter((e) => e.kind === 'user_message')[1]?.seq as number;
    const forked = await keel(cli.home, ['fork', id, '--at', String(second - 1)]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = forked.stdout.trim();
    expect(forkId).not.toBe(id);
    const forkEvents = eventsOf(cli.home, forkId);
    expect(forkEvents).toHaveLength(second - 1);
    const created = forkEvents[0] as EventOf<'session_created'>;
    expect(created.sessionId).toBe(forkId);
    expect(created.forkedFrom).toEqual({ sessionId: id, seq: second - 1 });
    expect(created.model).toBe((parentEvents[0] as EventOf<'session_created'>).model);
    expect(forkEvents.slice(1)).toEqual(parentEvents.slice(1, second - 1));
    // Listed under its parent.
    const listed = JSON.parse((await keel(cli.home, ['sessions', '--json'])).stdout) as {
      id: string;
      parentId?: string;
    }[];
    expect(listed.find((s) => s.id === forkId)?.parentId).toBe(id);

    cli.server.enqueue({ kind: 'reply', text: 'in the fork' });
    const inFork = await keel(cli.home, ['run', '--session', forkId, 'other way']);
    expect(inFork.code, inFork.stderr).toBe(0);
    expect(texts(lastRequest())).toEqual(['first', 'one', 'other way']);

    cli.server.enqueue({ kind: 'reply', text: 'three' });
    expect((await keel(cli.home, ['run', '--session', id, 'third'])).code).toBe(0);
    expect(texts(lastRequest())).toEqual(['first', 'one', 'second', 'two', 'third']);
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'user_message' && e.content === 'other way')).toBe(
      false,
    );

    // An export of the fork carries where it came from.
    const file = path.join(cli.dir, 'fork.jsonl');
    expect((await keel(cli.home, ['export', forkId, '-o', file])).code).toBe(0);
    const imported = await keel(cli.home, ['import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    const [importedCreated] = eventsOf(cli.home, imported.stdout.trim());
    expect(importedCreated?.kind === 'session_created' && importedCreated.forkedFrom).toEqual({
      sessionId: id,
      seq: second - 1,
    });
  });

  it('refuses a point inside a turn (exit 2) and forks the whole session by default', async () => {
    const id = await twoTurns();
    const second = eventsOf(cli.home, id).filter((e) => e.kind === 'user_message')[1]?.seq as number;
    const refused = await keel(cli.home, ['fork', id, '--at', String(second)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot fork at \d+: event \d+ is inside a turn/);
    const whole = await keel(cli.home, ['fork', id, '--json']);
    expect(whole.code).toBe(0);
    const report = JSON.parse(whole.stdout) as { id: string; at: number };
    expect(report.at).toBe(eventsOf(cli.home, id).at(-1)?.seq);
    expect(eventsOf(cli.home, report.id)).toHaveLength(report.at);
  });
});
