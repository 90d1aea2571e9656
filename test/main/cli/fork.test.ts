import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import type { ProviderServer } from '../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  startSessionFixture,
} from '../../support/sessionFixture.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  ({ dir, home, project, server } = await startSessionFixture('keel-fork-'));
  fs.writeFileSync(path.join(project, 'a.txt'), 'a\n');
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
});

type Message = { role: string; content: unknown };
const lastRequest = () =>
  (server.requests.at(-1)?.body as { messages: Message[] }).messages.filter((m) => m.role !== 'system');
/** The conversation's texts, without the environment block each request ends with. */
const texts = (messages: Message[]) =>
  messages
    .map((m) =>
      typeof m.content === 'string' ? m.content.replace(/\n*<environment>[\s\S]*$/, '') : m.content,
    )
    .filter((text) => text !== '');

async function twoTurns(): Promise<string> {
  server.enqueue({ kind: 'reply', text: 'one' });
  const first = await keel(
    home,
    newSessionArgs({ project, server }, { policy: 'full-auto', prompt: 'first' }),
  );
  expect(first.code, first.stderr).toBe(0);
  const id = onlySessionId(home);
  server.enqueue({ kind: 'reply', text: 'two' });
  expect((await keel(home, ['run', '--session', id, 'second'])).code).toBe(0);
  return id;
}

describe('keel fork', () => {
  it('starts a session from the conversation up to a point; fork and parent continue independently', async () => {
    const id = await twoTurns();
    const parentEvents = eventsOf(home, id);
    const second = parentEvents.filter((e) => e.kind === 'user_message')[1]?.seq as number;
    const forked = await keel(home, ['fork', id, '--at', String(second - 1)]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = forked.stdout.trim();
    expect(forkId).not.toBe(id);
    const forkEvents = eventsOf(home, forkId);
    expect(forkEvents).toHaveLength(second - 1);
    const created = forkEvents[0] as EventOf<'session_created'>;
    expect(created.sessionId).toBe(forkId);
    expect(created.forkedFrom).toEqual({ sessionId: id, seq: second - 1 });
    expect(created.model).toBe((parentEvents[0] as EventOf<'session_created'>).model);
    expect(forkEvents.slice(1)).toEqual(parentEvents.slice(1, second - 1));
    // Listed under its parent.
    const listed = JSON.parse((await keel(home, ['sessions', '--json'])).stdout) as {
      id: string;
      parentId?: string;
    }[];
    expect(listed.find((s) => s.id === forkId)?.parentId).toBe(id);

    server.enqueue({ kind: 'reply', text: 'in the fork' });
    const inFork = await keel(home, ['run', '--session', forkId, 'other way']);
    expect(inFork.code, inFork.stderr).toBe(0);
    expect(texts(lastRequest())).toEqual(['first', 'one', 'other way']);

    server.enqueue({ kind: 'reply', text: 'three' });
    expect((await keel(home, ['run', '--session', id, 'third'])).code).toBe(0);
    expect(texts(lastRequest())).toEqual(['first', 'one', 'second', 'two', 'third']);
    expect(eventsOf(home, id).some((e) => e.kind === 'user_message' && e.content === 'other way')).toBe(
      false,
    );

    // An export of the fork carries where it came from.
    const file = path.join(dir, 'fork.jsonl');
    expect((await keel(home, ['export', forkId, '-o', file])).code).toBe(0);
    const imported = await keel(home, ['import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    const [importedCreated] = eventsOf(home, imported.stdout.trim());
    expect(importedCreated?.kind === 'session_created' && importedCreated.forkedFrom).toEqual({
      sessionId: id,
      seq: second - 1,
    });
  });

  it('refuses a point inside a turn (exit 2) and forks the whole session by default', async () => {
    const id = await twoTurns();
    const second = eventsOf(home, id).filter((e) => e.kind === 'user_message')[1]?.seq as number;
    const refused = await keel(home, ['fork', id, '--at', String(second)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot fork at \d+: event \d+ is inside a turn/);
    const whole = await keel(home, ['fork', id, '--json']);
    expect(whole.code).toBe(0);
    const report = JSON.parse(whole.stdout) as { id: string; at: number };
    expect(report.at).toBe(eventsOf(home, id).at(-1)?.seq);
    expect(eventsOf(home, report.id)).toHaveLength(report.at);
  });
});
