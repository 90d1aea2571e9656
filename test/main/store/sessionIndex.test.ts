import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SessionIndex, toSearchQuery } from '../../../main/store/sessionIndex.js';
import type { NewSessionRow } from '../../../main/store/indexRows.js';
import { useTempHomes } from './support/tempHomes.js';

const tempHome = useTempHomes();

function row(id: string, overrides: Partial<NewSessionRow> = {}): NewSessionRow {
  return {
    id,
    projectFolder: '/work/app',
    provider: 'openai',
    model: 'gpt',
    createdAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** The message texts the sessions' logs would hold (index.sqlite keeps none): what search reads for snippets. */
const logTexts = new Map<string, string>();
const messageText = (id: string, seq: number) => logTexts.get(`${id}:${seq}`);

/** Adds a session updated at minute `minute`, with the given message texts at seq 2, 3, … */
function addSession(
  index: SessionIndex,
  id: string,
  minute: number,
  texts: string[] = [],
  overrides: Partial<NewSessionRow> = {},
): void {
  texts.forEach((text, i) => logTexts.set(`${id}:${i + 2}`, text));
  index.registerSession(row(id, overrides), {
    lastSeq: texts.length + 1,
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
    status: 'idle',
    messages: texts.map((text, i) => ({ seq: i + 2, text })),
  });
}

function deadPid(): number {
  // A short-lived process that has exited: its pid is dead (until the OS reuses it).
  return spawnSync('true').pid;
}

describe('SessionIndex.list', () => {
  it('pages sessions newest first', () => {
    const index = SessionIndex.open(tempHome());
    for (let i = 0; i < 5; i++) addSession(index, `s${i}`, i);
    expect(index.list({ limit: 2 }).map((s) => s.id)).toEqual(['s4', 's3']);
    expect(index.list({ limit: 2, offset: 2 }).map((s) => s.id)).toEqual(['s2', 's1']);
    expect(index.list({ limit: 2, offset: 4 }).map((s) => s.id)).toEqual(['s0']);
    index.close();
  });

  it('reports what the list shows for each session', () => {
    const index = SessionIndex.open(tempHome());
    addSession(index, 'a', 3, ['hello'], { title: 'Rate limits', parentId: 'p' });
    expect(index.get('a')).toEqual({
      id: 'a',
      title: 'Rate limits',
      projectFolder: '/work/app',
      provider: 'openai',
      model: 'gpt',
      status: 'idle',
      parentId: 'p',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:03:00.000Z',
      eventCount: 2,
      lastSeq: 2,
      archived: false,
    });
    expect(index.get('missing')).toBeUndefined();
    index.close();
  });

  it('leaves archived sessions out unless asked, and filters by project folder', () => {
    const index = SessionIndex.open(tempHome());
    addSession(index, 'a', 1);
    addSession(index, 'b', 2, [], { projectFolder: '/other' });
    addSession(index, 'c', 3);
    expect(index.setArchived('c', true)).toBe(true);
    expect(index.setArchived('nope', true)).toBe(false);
    expect(index.list({ limit: 10 }).map((s) => s.id)).toEqual(['b', 'a']);
    expect(index.list({ limit: 10, includeArchived: true }).map((s) => s.id)).toEqual(['c', 'b', 'a']);
    expect(index.list({ limit: 10, projectFolder: '/work/app' }).map((s) => s.id)).toEqual(['a']);
    expect(
      index.list({ limit: 10, projectFolder: '/work/app', includeArchived: true }).map((s) => s.id),
    ).toEqual(['c', 'a']);
    index.close();
  });

  it('registers a session all at once, or not at all, and restores a lost row without touching an existing one', () => {
    const index = SessionIndex.open(tempHome());
    addSession(index, 'a', 1, ['hello']);
    expect(() => addSession(index, 'a', 2, ['again'])).toThrow(/UNIQUE/);
    expect(index.get('a')?.lastSeq).toBe(2);
    expect(index.list({ limit: 10, search: 'again' })).toEqual([]);
    index.restoreSession(row('a', { title: 'other' }));
    expect(index.get('a')?.title).toBeUndefined();
    index.restoreSession(row('b'));
    expect(index.get('b')).toMatchObject({ lastSeq: 0, status: 'idle' });
    index.registerSession(
      row('c'),
      { lastSeq: 1, updatedAt: 't', status: 'idle', messages: [] },
      { lease: true },
    );
    expect(index.leaseHolder('c')?.pid).toBe(process.pid);
    index.close();
  });

  it('keeps the first title and follows model changes', () => {
    const index = SessionIndex.open(tempHome());
    addSession(index, 'a', 1);
    index.recordAppend('a', { lastSeq: 2, updatedAt: 't', status: 'idle', title: 'first', messages: [] });
    index.recordAppend('a', {
      lastSeq: 3,
      updatedAt: 't',
      status: 'error',
      title: 'second',
      provider: 'anthropic',
      model: 'claude',
      messages: [],
    });
    expect(index.get('a')).toMatchObject({
      title: 'first',
      provider: 'anthropic',
      model: 'claude',
      status: 'error',
    });
    index.close();
  });
});

describe.each([
  ['grouping hits', Number.MAX_SAFE_INTEGER],
  ['walking sessions', 0],
])('SessionIndex search by %s', (_plan, fewHits) => {
  it('returns only sessions whose messages match, newest first, with a snippet of the newest match', () => {
    const index = SessionIndex.open(tempHome(), { fewHits, messageText });
    addSession(index, 'a', 1, ['add rate limiting to the api', 'done: the limiter is in']);
    addSession(index, 'b', 2, ['fix the login page']);
    addSession(index, 'c', 3, ['Rate limits again?', 'unrelated']);
    const found = index.list({ limit: 10, search: 'rate limit' });
    expect(found.map((s) => s.id)).toEqual(['c', 'a']);
    expect(found[0]!.snippet).toBe('[Rate] [limits] again?');
    expect(found[1]!.snippet).toBe('add [rate] [limiting] to the api');
    expect(index.list({ limit: 1, offset: 1, search: 'rate limit' }).map((s) => s.id)).toEqual(['a']);
    expect(index.list({ limit: 10, search: 'login' }).map((s) => s.id)).toEqual(['b']);
    expect(index.list({ limit: 10, search: 'logi' })).toEqual([]);
    expect(index.list({ limit: 10, search: 'nothing-like-this' })).toEqual([]);
    index.close();
  });

  it('applies the archive and project filters to search', () => {
    const index = SessionIndex.open(tempHome(), { fewHits });
    addSession(index, 'a', 1, ['deploy script']);
    addSession(index, 'b', 2, ['deploy script'], { projectFolder: '/other' });
    addSession(index, 'c', 3, ['deploy script']);
    index.setArchived('c', true);
    expect(index.list({ limit: 10, search: 'deploy' }).map((s) => s.id)).toEqual(['b', 'a']);
    expect(index.list({ limit: 10, search: 'deploy', projectFolder: '/other' }).map((s) => s.id)).toEqual([
      'b',
    ]);
    expect(index.list({ limit: 10, search: 'deploy', includeArchived: true }).map((s) => s.id)).toEqual([
      'c',
      'b',
      'a',
    ]);
    index.close();
  });

  it("keeps no copy of message text: a snippet is made from the hit's text as its log has it, the title's from the row", () => {
    const home = tempHome();
    const index = SessionIndex.open(home, { fewHits, messageText });
    addSession(index, 'a', 1, ['the deploy script failed twice']);
    addSession(index, 'b', 2, ['nothing here'], { title: 'Deploy notes' });
    addSession(index, 'c', 3, ['deploy again']);
    logTexts.delete('c:2');
    const found = index.list({ limit: 10, search: 'deploy' });
    expect(found.map((s) => [s.id, s.snippet])).toEqual([
      // The log of c cannot be read: listed, no snippet.
      ['c', undefined],
      ['b', '[Deploy] notes'],
      ['a', 'the [deploy] script failed twice'],
    ]);
    index.close();
    const raw = new Database(path.join(home, 'index.sqlite'));
    expect(
      raw.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'message_search_content'").pluck().get(),
    ).toBe(0);
    expect(
      raw.prepare('SELECT text FROM message_search WHERE message_search MATCH ?').pluck().all('deploy'),
    ).toEqual([null, null, null]);
    raw.close();
    // Without a text source the rows are found all the same, without snippets.
    const bare = SessionIndex.open(home, { fewHits });
    expect(bare.list({ limit: 10, search: 'deploy' }).map((s) => [s.id, s.snippet])).toEqual([
      ['c', undefined],
      ['b', '[Deploy] notes'],
      ['a', undefined],
    ]);
    bare.close();
  });

  it('treats whatever a person types as words, never as a query syntax error', () => {
    const index = SessionIndex.open(tempHome(), { fewHits });
    addSession(index, 'a', 1, ['use "quotes" AND (parens) * carefully: NEAR/2']);
    for (const text of ['"quotes', 'AND', '(parens', '*', 'NEAR/2', 'carefully:', "'", '-x']) {
      expect(() => index.list({ limit: 10, search: text })).not.toThrow();
    }
    expect(index.list({ limit: 10, search: '"quotes" (parens)' }).map((s) => s.id)).toEqual(['a']);
    expect(index.list({ limit: 10, search: '   ' }).map((s) => s.id)).toEqual(['a']);
    expect(toSearchQuery('a "b')).toBe('"a" """b"');
    index.close();
  });

  it('forgets a removed session entirely', () => {
    const home = tempHome();
    const index = SessionIndex.open(home, { fewHits });
    addSession(index, 'a', 1, ['needle']);
    addSession(index, 'b', 2, ['needle']);
    index.removeSession('a');
    expect(index.list({ limit: 10, search: 'needle' }).map((s) => s.id)).toEqual(['b']);
    index.close();
    const raw = new Database(path.join(home, 'index.sqlite'));
    expect(raw.prepare('SELECT count(*) FROM message_search').pluck().get()).toBe(1);
    raw.close();
  });

  it('drops search text past a seq when the index is cut back to the log', () => {
    const index = SessionIndex.open(tempHome(), { fewHits });
    addSession(index, 'a', 1, ['alpha', 'beta', 'gamma']);
    index.truncateTo('a', 2, 'idle');
    expect(index.get('a')).toMatchObject({ lastSeq: 2, eventCount: 2 });
    expect(index.list({ limit: 10, search: 'alpha' })).toHaveLength(1);
    expect(index.list({ limit: 10, search: 'beta' })).toHaveLength(0);
    index.close();
  });
});

describe('SessionIndex writer lease', () => {
  it('is held by one process: a second acquire in the same process is refused until release', () => {
    const index = SessionIndex.open(tempHome());
    addSession(index, 'a', 1);
    expect(index.acquireLease('a')).toBeUndefined();
    expect(index.acquireLease('a')).toMatchObject({ pid: process.pid, hostname: os.hostname() });
    index.releaseLease('a');
    expect(index.leaseHolder('a')).toBeUndefined();
    expect(index.acquireLease('a')).toBeUndefined();
    index.close();
  });

  it('is taken over from a dead pid, or from a holder that predates the boot, but not from another host', () => {
    const home = tempHome();
    const index = SessionIndex.open(home);
    addSession(index, 'a', 1);
    const raw = new Database(path.join(home, 'index.sqlite'));
    const put = raw.prepare(
      'INSERT OR REPLACE INTO writer_leases (session_id, pid, hostname, acquired_at) VALUES (?, ?, ?, ?)',
    );
    const now = new Date().toISOString();

    put.run('a', deadPid(), os.hostname(), now);
    expect(index.acquireLease('a')).toBeUndefined();
    expect(index.leaseHolder('a')?.pid).toBe(process.pid);

    // pid 1 is alive, but a lease from before the machine booted cannot be its.
    put.run('a', 1, os.hostname(), '2000-01-01T00:00:00.000Z');
    expect(index.acquireLease('a')).toBeUndefined();

    put.run('a', 1, os.hostname(), now);
    expect(index.acquireLease('a')).toMatchObject({ pid: 1 });

    put.run('a', deadPid(), 'another-host', now);
    expect(index.acquireLease('a')).toMatchObject({ hostname: 'another-host' });
    raw.close();
    index.close();
  });

  it('shows a running session whose process is gone as interrupted', () => {
    const home = tempHome();
    const index = SessionIndex.open(home);
    addSession(index, 'a', 1);
    index.setStatus('a', 'running');
    expect(index.get('a')?.status).toBe('interrupted');
    index.acquireLease('a');
    expect(index.get('a')?.status).toBe('running');
    const raw = new Database(path.join(home, 'index.sqlite'));
    raw.prepare('UPDATE writer_leases SET pid = ?').run(deadPid());
    raw.close();
    expect(index.list({ limit: 1 })[0]?.status).toBe('interrupted');
    index.close();
  });
});

describe('SessionIndex at scale', () => {
  it('answers the first page of 10k sessions, and searches over 30k messages by either plan, quickly', () => {
    const home = tempHome();
    SessionIndex.open(home).close();
    // Filled with raw SQL in one transaction: this test is about reading, not about 30k commits.
    const raw = new Database(path.join(home, 'index.sqlite'));
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const insertSession = raw.prepare(`INSERT INTO sessions
      (num, id, project_folder, provider, model, created_at, updated_at, event_count, last_seq)
      VALUES (?, ?, '/p', 'openai', 'm', '2026-01-01T00:00:00.000Z', ?, 4, 4)`);
    const insertMessage = raw.prepare('INSERT INTO message_search (rowid, text) VALUES ((? << 32) + ?, ?)');
    raw.transaction(() => {
      for (let i = 1; i <= 10_000; i++) {
        insertSession.run(i, `s${i}`, new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString());
        insertMessage.run(i, 2, `note ${words[i % 8]} ${i}`);
        insertMessage.run(i, 3, `note about ${words[(i + 3) % 8]}`);
        insertMessage.run(i, 4, `closing note`);
      }
    })();
    raw.close();

    const index = SessionIndex.open(home, {
      messageText: (id, seq) => {
        const i = Number(id.slice(1));
        return [`note ${words[i % 8]} ${i}`, `note about ${words[(i + 3) % 8]}`, 'closing note'][seq - 2];
      },
    });
    expect(index.list({ limit: 50 })[0]!.id).toBe('s10000');
    // 30k hits: more than the default FEW_HITS, so this walks sessions.
    const notes = index.list({ limit: 50, search: 'note' });
    expect(notes.map((s) => s.id).slice(0, 2)).toEqual(['s10000', 's9999']);
    expect(notes[0]!.snippet).toBe('closing [note]');
    // 2.5k hits: grouped.
    const golf = index.list({ limit: 50, search: 'golf' });
    expect(golf[0]!.id).toBe('s9998');
    expect(golf[0]!.snippet).toBe('note [golf] 9998');
    // Speed is measured by `npm run bench` (list, search); the query plans are checked in the migration tests.
    index.close();
  });
});
