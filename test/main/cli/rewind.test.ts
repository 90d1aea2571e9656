import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-rewind-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), 'as the user left it\n');
  },
});

type Message = { role: string; content: unknown; tool_calls?: unknown[] };
const messagesOf = (index: number) => (cli.server.requests[index]?.body as { messages: Message[] }).messages;
const userSeqs = (id: string) =>
  eventsOf(cli.home, id)
    .filter((e) => e.kind === 'user_message')
    .map((e) => e.seq);

/** Two turns: the first answers, the second writes a file with a tool call and answers. */
async function twoTurns(): Promise<string> {
  cli.server.enqueue({ kind: 'reply', text: 'one' });
  const first = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'first' }));
  expect(first.code, first.stderr).toBe(0);
  const id = onlySessionId(cli.home);
  cli.server.enqueue(
    {
      kind: 'reply',
      toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'by turn two\n' } }],
    },
    { kind: 'reply', text: 'two' },
  );
  const second = await keel(cli.home, ['run', '--session', id, 'second']);
  expect(second.code, second.stderr).toBe(0);
  expect(fs.readFileSync(path.join(cli.project, 'b.txt'), 'utf8')).toBe('by turn two\n');
  return id;
}

describe('keel rewind', () => {
  it('continues from before a message: the next request is the projection up to there plus the new message, accepted', async () => {
    const id = await twoTurns();
    const [, secondMessage] = userSeqs(id);
    const to = (secondMessage as number) - 1;
    const secondTurnFirstRequest = messagesOf(1);
    const rewound = await keel(cli.home, ['rewind', id, '--to', String(to), '--files']);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(rewound.stderr).toMatch(new RegExp(`continues from event ${to} .*1 files put back`));
    expect(fs.existsSync(path.join(cli.project, 'b.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(cli.project, 'a.txt'), 'utf8')).toBe('as the user left it\n');
    // The log only grew: the second turn's events are all still there, then a revert and the rewind.
    const kinds = eventsOf(cli.home, id).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'user_message')).toHaveLength(2);
    expect(kinds.slice(-2)).toEqual(['changes_reverted', 'rewound']);

    cli.server.enqueue({ kind: 'reply', text: 'three' });
    const third = await keel(cli.home, ['run', '--session', id, 'third']);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toContain('three');
    const request = messagesOf(cli.server.requests.length - 1);
    // Same request as the second turn's first one, but for the new message: nothing of the set-aside branch.
    const swap = (messages: Message[]) =>
      JSON.stringify(messages).replaceAll('second', 'MESSAGE').replaceAll('third', 'MESSAGE');
    expect(swap(request)).toBe(swap(secondTurnFirstRequest));
    expect(JSON.stringify(request)).not.toContain('by turn two');
    expect(request.some((m) => m.tool_calls !== undefined)).toBe(false);

    const payload = await keel(cli.home, ['payload', id, '--json']);
    expect(payload.stdout).not.toContain('second');
    const shown = await keel(cli.home, ['show', id]);
    expect(shown.stdout).toMatch(new RegExp(`rewound +the conversation continues from ${to}`));
  });

  it('refuses a point inside a turn and names the points it can go back to (exit 2), writing nothing', async () => {
    const id = await twoTurns();
    const [first, second] = userSeqs(id);
    const inside = (second as number) + 1;
    const refused = await keel(cli.home, ['rewind', id, '--to', String(inside), '--files']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(`event ${inside} is inside a turn.*choose one of .*${(second as number) - 1}`),
    );
    expect(fs.existsSync(path.join(cli.project, 'b.txt'))).toBe(true);
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'rewound')).toBe(false);
    // Going back to before the first message is a point too.
    expect((await keel(cli.home, ['rewind', id, '--to', String((first as number) - 1)])).code).toBe(0);
  });

  it('refuses while an approval is pending (it would stay listed for a call set aside)', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'one' });
    expect((await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'first' }))).code).toBe(0);
    const id = onlySessionId(cli.home);
    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'asks first\n' } }],
    });
    expect((await keel(cli.home, ['run', '--session', id, 'second'])).code).toBe(3);
    const [, second] = userSeqs(id);
    const refused = await keel(cli.home, ['rewind', id, '--to', String((second as number) - 1)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/an approval is pending in this session: approve or deny it first/);
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'rewound')).toBe(false);
  });

  it('with --files and a conflicting edit of the user: nothing is reverted, nothing rewound (exit 1)', async () => {
    const id = await twoTurns();
    fs.writeFileSync(path.join(cli.project, 'b.txt'), 'the user rewrote it\n');
    const [, second] = userSeqs(id);
    const refused = await keel(cli.home, ['rewind', id, '--to', String((second as number) - 1), '--files']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /nothing was rewound: 1 file.*\n.*b\.txt: the change created it and it was edited since/,
    );
    expect(fs.readFileSync(path.join(cli.project, 'b.txt'), 'utf8')).toBe('the user rewrote it\n');
    expect(eventsOf(cli.home, id).some((e) => e.kind === 'rewound' || e.kind === 'changes_reverted')).toBe(
      false,
    );
  });
});
