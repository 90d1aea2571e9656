import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { waitForClose } from '../../support/childProcesses.js';
import { ensureCliBuilt, makeTempDir, removeTempDir, runKeel } from '../../support/cli.js';
import { sessionInit } from '../core/log/support.js';
import { spawnTypescript, waitForLine } from '../store/support/childProcess.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/harness-article-session.jsonl');
const PARENT_ID = '01JNARTICLE0000000000000001';
const CHILD_ID = '01JNARTICLE0000000000000002';
const TURN_THEN_HANG = path.join(import.meta.dirname, '../core/log/fixtures/turnThenHang.ts');

let home: string;
beforeAll(ensureCliBuilt, 180_000);
beforeEach(() => {
  home = makeTempDir();
});
afterEach(() => removeTempDir(home));

/** Writes a small child session of the article session (newer, so it sorts first) and imports it. */
function importChild(): void {
  const events = [
    {
      seq: 1,
      kind: 'session_created',
      at: '2025-03-05T10:00:00.000Z',
      sessionId: CHILD_ID,
      title: 'find the handler tests',
      projectFolder: '/home/dev/api',
      provider: 'anthropic',
      model: 'claude-haiku',
      contextWindow: 200000,
      toolMode: 'read-only',
      policy: 'read-only',
      parentId: PARENT_ID,
    },
    { seq: 2, kind: 'user_message', at: '2025-03-05T10:00:01.000Z', content: 'list the tests of apiHandler' },
  ];
  const file = path.join(home, 'child.jsonl');
  fs.writeFileSync(file, events.map((event) => JSON.stringify(event)).join('\n') + '\n');
  expect(runKeel(home, ['import', file, '--keep-id']).code).toBe(0);
}

describe('keel sessions', () => {
  it('lists sessions as a table with children indented under their parent', () => {
    expect(runKeel(home, ['import', FIXTURE, '--keep-id']).code).toBe(0);
    importChild();
    const listed = runKeel(home, ['sessions']);
    expect(listed.code).toBe(0);
    const [header, first, second, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +TITLE +PROJECT +MODEL +STATUS +EVENTS +UPDATED$/);
    expect(first).toMatch(
      new RegExp(
        `^${PARENT_ID} +add rate limiting to the api +/home/dev/api +qwen2\\.5-coder:32b +interrupted +10 +2025-03-0\\d \\d\\d:\\d\\d$`,
      ),
    );
    expect(second).toMatch(
      new RegExp(`^ {2}${CHILD_ID} +find the handler tests +/home/dev/api +claude-haiku +idle +2 `),
    );
    expect(rest).toEqual([]);

    const json = JSON.parse(runKeel(home, ['sessions', '--json']).stdout) as {
      id: string;
      parentId?: string;
    }[];
    // JSON keeps the index's order (most recently updated first) and carries parentId.
    expect(json.map((s) => [s.id, s.parentId])).toEqual([
      [CHILD_ID, PARENT_ID],
      [PARENT_ID, undefined],
    ]);

    const limited = runKeel(home, ['sessions', '--limit', '1']).stdout.trimEnd().split('\n');
    expect(limited).toHaveLength(2);
    expect(limited[1]).toMatch(new RegExp(`^${CHILD_ID} `));
  });

  it('finds a session by a word from one of its messages', () => {
    expect(runKeel(home, ['import', FIXTURE, '--keep-id']).code).toBe(0);
    importChild();
    const found = runKeel(home, ['sessions', '--search', 'token-bucket', '--json']);
    expect(found.code).toBe(0);
    const rows = JSON.parse(found.stdout) as { id: string; snippet?: string }[];
    expect(rows.map((s) => s.id)).toEqual([PARENT_ID]);
    // index.sqlite keeps no message text: the snippet is made from the hit's event in the session's log.
    expect(rows[0]?.snippet).toContain('in a [token-bucket] limiter');

    const table = runKeel(home, ['sessions', '--search', 'apiHandler tests']).stdout;
    expect(table).toContain(CHILD_ID);
    expect(table).not.toContain(PARENT_ID);
    expect(table.split('\n')[0]).toMatch(/ MATCH$/);

    const none = runKeel(home, ['sessions', '--search', 'kubernetes']);
    expect(none).toEqual({ code: 0, stdout: 'no session mentions "kubernetes"\n', stderr: '' });
  });

  it('says how far a running turn is not indexed yet, in the table’s note and as indexBehind', async () => {
    const created = SessionLog.create(home, sessionInit());
    const id = created.id;
    created.close();
    // A writer mid-turn: 15 of its events are held back from the index until the turn ends.
    const writer = spawnTypescript(TURN_THEN_HANG, [home, id, 'xylograph']);
    try {
      await waitForLine(writer, /^appended \d+ pending 15$/);
      const json = JSON.parse(runKeel(home, ['sessions', '--json']).stdout) as { id: string }[];
      expect(json).toEqual([expect.objectContaining({ id, status: 'running', indexBehind: 15 })]);
      expect(runKeel(home, ['sessions']).stdout.trimEnd().split('\n').at(-1)).toBe(
        `not indexed yet (counted and searchable when the running turn ends): ${id} (15 events)`,
      );
    } finally {
      writer.kill('SIGKILL');
      await waitForClose(writer);
    }
    // The dead writer's row is caught up by the next list: nothing is behind any more.
    const after = JSON.parse(runKeel(home, ['sessions', '--json']).stdout) as object[];
    expect(after).toHaveLength(1);
    expect(after[0]).not.toHaveProperty('indexBehind');
  }, 60_000);

  it('says so when the home has no sessions', () => {
    expect(runKeel(home, ['sessions'])).toEqual({
      code: 0,
      stdout: 'no sessions yet (keel import FILE adds one)\n',
      stderr: '',
    });
  });
});
