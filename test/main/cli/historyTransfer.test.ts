import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/* Export and import carry rewinds (the set-aside branch stays set aside) and forks (where they came from). */

const cli = useCliFixture('keel-history-transfer-', {
  prepare: ({ project }) => {
    fs.writeFileSync(path.join(project, 'a.txt'), 'a\n');
  },
});

type Message = { role: string; content: unknown };
const lastRequestText = () =>
  JSON.stringify((cli.server.requests.at(-1)?.body as { messages: Message[] }).messages);

describe('export and import of rewound and forked sessions', () => {
  it('an imported rewound session and its imported fork continue without the set-aside branch', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'one' });
    const first = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'first' }));
    expect(first.code, first.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    cli.server.enqueue({ kind: 'reply', text: 'abandoned answer' });
    expect((await keel(cli.home, ['run', '--session', id, 'abandoned question'])).code).toBe(0);
    const second = eventsOf(cli.home, id).filter((e) => e.kind === 'user_message')[1]?.seq as number;
    expect((await keel(cli.home, ['rewind', id, '--to', String(second - 1)])).code).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'three' });
    expect((await keel(cli.home, ['run', '--session', id, 'third'])).code).toBe(0);
    const forked = await keel(cli.home, ['fork', id]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = forked.stdout.trim();

    // Both exported, imported into another home.
    const other = path.join(cli.dir, 'other-home');
    const imported: string[] = [];
    for (const session of [id, forkId]) {
      const file = path.join(cli.dir, `${session}.jsonl`);
      expect((await keel(cli.home, ['export', session, '-o', file])).code).toBe(0);
      const result = await keel(other, ['import', file, '--project', cli.project]);
      expect(result.code, result.stderr).toBe(0);
      imported.push(result.stdout.trim());
    }
    const [importedParent, importedFork] = imported as [string, string];
    const events = eventsOf(other, importedParent);
    // The whole log came, the set-aside branch and the rewind included.
    expect(events.map((e) => e.kind)).toEqual(eventsOf(cli.home, id).map((e) => e.kind));
    expect(events.find((e) => e.kind === 'rewound')).toMatchObject({ toSeq: second - 1 });
    const created = eventsOf(other, importedFork)[0] as EventOf<'session_created'>;
    expect(created.forkedFrom).toEqual({ sessionId: id, seq: eventsOf(cli.home, id).at(-1)?.seq });

    for (const session of [importedParent, importedFork]) {
      const payload = await keel(other, ['payload', session, '--json']);
      expect(payload.code, payload.stderr).toBe(0);
      expect(payload.stdout).toContain('third');
      expect(payload.stdout).not.toContain('abandoned');
      // Each continues (its endpoint confirmed first, as an import asks); the provider gets the projection
      // without the set-aside branch.
      const confirmed = await keel(other, [
        'model',
        session,
        'openai-compatible:scripted-model',
        '--base-url',
        cli.server.openaiBaseUrl,
        '--context-window',
        '32000',
      ]);
      expect(confirmed.code, confirmed.stderr).toBe(0);
      cli.server.enqueue({ kind: 'reply', text: 'continued' });
      const ran = await keel(other, ['run', '--session', session, 'fourth']);
      expect(ran.code, ran.stderr).toBe(0);
      expect(lastRequestText()).toContain('third');
      expect(lastRequestText()).toContain('fourth');
      expect(lastRequestText()).not.toContain('abandoned');
    }
  }, 120_000);
});
