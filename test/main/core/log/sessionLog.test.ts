import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import {
  SessionExistsError,
  SessionLockedError,
  SessionLog,
  SessionNotFoundError,
} from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-log-');

const user = (content: string): NewEvent => ({ kind: 'user_message', content });
const assistant = (
  content: string,
  toolCalls: { id: string; name: string; arguments: string }[] = [],
): NewEvent => ({
  kind: 'assistant_message',
  content,
  toolCalls,
});
const compaction = (through: number, summary: string): NewEvent => ({
  kind: 'compaction',
  through,
  summary,
  pinned: 'goal',
});

function indexRow(home: string, id: string) {
  const index = SessionIndex.open(home);
  try {
    return index.get(id);
  } finally {
    index.close();
  }
}

function search(home: string, text: string): string[] {
  const index = SessionIndex.open(home);
  try {
    return index.list({ limit: 50, search: text }).map((s) => s.id);
  } finally {
    index.close();
  }
}

describe('SessionLog.create', () => {
  it('lays out the session folder, pins session_created at seq 1 and registers it in the index', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit({ title: 'Rate limits', systemPrompt: 'be brief' }));
    expect(log.id).toMatch(/^[0-9a-z]{26}$/);
    expect(log.dir).toBe(path.join(home, 'sessions', log.id));
    expect(log.artifactsDir).toBe(path.join(log.dir, 'artifacts'));
    expect(fs.statSync(log.artifactsDir).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(log.dir, 'workspace', 'session')).isDirectory()).toBe(true);
    expect(fs.existsSync(path.join(log.dir, 'events.sqlite'))).toBe(true);

    const [created] = log.read();
    expect(created).toMatchObject({
      seq: 1,
      kind: 'session_created',
      sessionId: log.id,
      model: 'qwen',
      contextWindow: 32_000,
      systemPrompt: 'be brief',
    });
    expect(log.lastSeq()).toBe(1);
    expect(indexRow(home, log.id)).toMatchObject({
      id: log.id,
      title: 'Rate limits',
      projectFolder: '/work/app',
      status: 'idle',
      eventCount: 1,
      lastSeq: 1,
      createdAt: created!.at,
    });
    log.close();
  });

  it('uses the id it is given and refuses one that exists', () => {
    const home = tempHome();
    SessionLog.create(home, sessionInit(), { id: 'chat_123' }).close();
    expect(() => SessionLog.create(home, sessionInit(), { id: 'chat_123' })).toThrow(SessionExistsError);
    expect(SessionLog.open(home, 'chat_123').lastSeq()).toBe(1);
  });

  it('refuses ids that are not a plain folder name, writing nothing', () => {
    const home = tempHome();
    for (const id of ['../escape', 'a/b', '.hidden', '', 'con', 'x'.repeat(200)]) {
      expect(() => SessionLog.create(home, sessionInit(), { id })).toThrow(/cannot be a session id/);
    }
    expect(fs.existsSync(path.join(home, 'escape'))).toBe(false);
    expect(
      fs.readdirSync(home).filter((name) => name !== 'index.sqlite' && !name.startsWith('index.sqlite-')),
    ).toEqual([]);
  });

  it('leaves nothing behind when session_created is invalid', () => {
    const home = tempHome();
    expect(() => SessionLog.create(home, sessionInit({ contextWindow: -1 }), { id: 'bad' })).toThrow();
    expect(fs.existsSync(path.join(home, 'sessions', 'bad'))).toBe(false);
    expect(indexRow(home, 'bad')).toBeUndefined();
  });
});

describe('SessionLog.append', () => {
  it('numbers events densely, stamps them, and commits a batch together', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    const first = log.append(user('add rate limiting'));
    expect(first).toMatchObject({ ok: true, lastSeq: 2 });
    const batch = log.append([
      assistant('looking', [{ id: 'c1', name: 'grep', arguments: '{}' }]),
      user('go on'),
    ]);
    expect(batch.ok && batch.events.map((e) => e.seq)).toEqual([3, 4]);
    expect(batch.ok && batch.events.every((e) => !Number.isNaN(Date.parse(e.at)))).toBe(true);
    expect(log.read().map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    log.close();
  });

  it('returns a conflict and writes nothing when the expected last seq is stale', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    expect(log.append(user('one'), { expectedLastSeq: 1 }).ok).toBe(true);
    const stale = log.append(user('two'), { expectedLastSeq: 1 });
    expect(stale).toEqual({ ok: false, conflict: { expectedLastSeq: 1, actualLastSeq: 2 } });
    expect(log.lastSeq()).toBe(2);
    log.close();
  });

  it('writes none of a batch when one event is invalid', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    const invalid = { kind: 'tool_result', toolCallId: '', content: 'x' } as unknown as NewEvent;
    expect(() => log.append([user('fine'), invalid])).toThrow();
    expect(() => log.append({ ...sessionInit(), kind: 'session_created', sessionId: log.id })).toThrow(
      /only ever the first event/,
    );
    expect(log.lastSeq()).toBe(1);
    log.close();
  });

  it('is refused on a log opened read-only, which holds no lease', () => {
    const home = tempHome();
    const writer = SessionLog.create(home, sessionInit());
    const reader = SessionLog.open(home, writer.id);
    expect(reader.writable).toBe(false);
    expect(() => reader.append(user('no'))).toThrow(/read-only/);
    writer.append(user('yes'));
    expect(reader.lastSeq()).toBe(2);
    reader.close();
    writer.close();
  });

  it('keeps the index row in step: counts, time, title, model and search text', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append(user('Add rate limiting to the API\nsecond line'));
    log.append(assistant('Rate limiter added'));
    log.append({ kind: 'tool_result', toolCallId: 'c1', content: 'grepped secretword' });
    const result = log.append({
      kind: 'model_changed',
      provider: 'anthropic',
      model: 'claude',
      contextWindow: 200_000,
    });
    log.append(compaction(3, 'summary mentions throttling'));
    const row = indexRow(home, log.id);
    expect(row).toMatchObject({
      title: 'Add rate limiting to the API',
      provider: 'anthropic',
      model: 'claude',
      eventCount: 6,
      lastSeq: 6,
    });
    expect(row!.updatedAt >= (result.ok ? result.events[0]!.at : '')).toBe(true);
    expect(search(home, 'limiter')).toEqual([log.id]);
    expect(search(home, 'throttling')).toEqual([log.id]);
    expect(search(home, 'secretword')).toEqual([]);
    log.close();
  });

  it('derives the status from the events and the running flag', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const status = () => indexRow(home, log.id)?.status;
    log.setRunning(true);
    expect(status()).toBe('running');
    log.append(assistant('calling', [{ id: 'c1', name: 'edit', arguments: '{}' }]));
    expect(status()).toBe('running');
    const request = (toolCallId: string): NewEvent => ({
      kind: 'approval_request',
      toolCallId,
      tool: 'edit',
      arguments: '{}',
    });
    const r1 = log.append(request('c1'));
    const r2 = log.append(request('c2'));
    expect(status()).toBe('awaiting_approval');
    log.append({ kind: 'approval_granted', requestSeq: r1.ok ? r1.lastSeq : 0, scope: 'once' });
    expect(status()).toBe('awaiting_approval');
    log.append({ kind: 'approval_denied', requestSeq: r2.ok ? r2.lastSeq : 0 });
    expect(status()).toBe('running');
    log.append({ kind: 'interrupted', content: 'partial', toolCalls: [] });
    expect(status()).toBe('interrupted');
    log.setRunning(false);
    log.append(user('again'));
    expect(status()).toBe('idle');
    log.append({ kind: 'error', message: 'provider down' });
    expect(status()).toBe('error');
    log.setRunning(true);
    log.close();
    expect(status()).toBe('error');
  });

  it('remembers an unanswered approval request across re-opening', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append({ kind: 'approval_request', toolCallId: 'c1', tool: 'bash', arguments: '{}' });
    log.close();
    const again = SessionLog.open(home, log.id, { write: true });
    again.append(user('still waiting?'));
    expect(indexRow(home, log.id)?.status).toBe('awaiting_approval');
    again.close();
  });
});

describe('SessionLog.read', () => {
  it('reads a seq range with a limit, validating each row', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    for (let i = 0; i < 5; i++) log.append(user(`m${i}`));
    expect(log.read({ fromSeq: 2, toSeq: 4 }).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(log.read({ fromSeq: 3, limit: 2 }).map((e) => e.seq)).toEqual([3, 4]);
    expect(log.read({ fromSeq: 7 })).toEqual([]);
    log.close();
  });

  it('refuses a stored row that does not match its schema, naming the event', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.close();
    const raw = new Database(path.join(log.dir, 'events.sqlite'));
    raw
      .prepare(
        "INSERT INTO events (seq, kind, at, body) VALUES (2, 'user_message', 't', '{\"text\":\"no content\"}')",
      )
      .run();
    raw.close();
    const reader = SessionLog.open(home, log.id);
    expect(() => reader.read()).toThrow(/stored event 2 \(user_message\)/);
    reader.close();
  });
});

describe('SessionLog.projectionView', () => {
  function logWithCompactions(): SessionLog {
    const log = SessionLog.create(tempHome(), sessionInit());
    log.append(user('the goal')); // 2
    log.append(assistant('a')); // 3
    log.append(user('b')); // 4
    log.append(compaction(3, 'first')); // 5
    log.append(assistant('c')); // 6
    log.append(compaction(4, 'second')); // 7
    log.append(compaction(4, 'second, re-run')); // 8
    log.append(user('d')); // 9
    return log;
  }

  it('returns the compaction with the largest through (ties to the newer), the first user message and what follows', () => {
    const log = logWithCompactions();
    const view = log.projectionView();
    expect(view.compaction).toMatchObject({ seq: 8, through: 4, summary: 'second, re-run' });
    expect(view.firstUserMessage).toMatchObject({ seq: 2, content: 'the goal' });
    expect(view.tail.map((e) => e.seq)).toEqual([5, 6, 7, 8, 9]);
    log.close();
  });

  it('rebuilds as if one compaction had not happened', () => {
    const log = logWithCompactions();
    const withoutNewest = log.projectionView({ withoutCompaction: 8 });
    expect(withoutNewest.compaction).toMatchObject({ seq: 7 });
    const withoutFirst = log.projectionView({ withoutCompaction: 5 });
    expect(withoutFirst.compaction).toMatchObject({ seq: 8 });
    log.close();
  });

  it('carries the newest instructions_loaded, also when a compaction replaced it', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    const loaded = (content: string): NewEvent => ({
      kind: 'instructions_loaded',
      files: [{ path: 'AGENTS.md', sha256: content, size: content.length, content }],
    });
    log.append(loaded('v1')); // 2
    log.append(user('goal')); // 3
    log.append(loaded('v2')); // 4
    log.append(assistant('a')); // 5
    log.append(compaction(5, 'summary')); // 6
    log.append(user('next')); // 7
    const view = log.projectionView();
    expect(view.instructions).toMatchObject({ seq: 4, files: [{ content: 'v2' }] });
    expect(view.tail.map((e) => e.seq)).toEqual([6, 7]);
    expect(log.projectionView({ validate: false })).toEqual(view);
    log.close();
  });

  it('returns the whole log when nothing was compacted', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    log.append(user('hi'));
    const view = log.projectionView();
    expect(view.compaction).toBeUndefined();
    expect(view.tail.map((e) => e.kind)).toEqual(['session_created', 'user_message']);
    log.close();
  });

  it('reads only the events after the compaction, whatever the log length', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    log.append(user('goal'));
    log.append(Array.from({ length: 20_000 }, (_, i) => assistant(`step ${i}`)));
    log.append(compaction(20_000, 'long story'));
    log.append(user('next'));
    const view = log.projectionView();
    expect(view.tail.map((e) => e.seq)).toEqual([20_001, 20_002, 20_003, 20_004]);
    expect(view.firstUserMessage?.content).toBe('goal');
    // O(tail) by construction: the view holds only the tail; the query plans are checked in the migration tests
    // and the time is measured by `npm run bench` (project).
    log.close();
  });
});

describe('SessionLog.open', () => {
  it('throws SessionNotFoundError for an unknown or unsafe id', () => {
    const home = tempHome();
    expect(() => SessionLog.open(home, 'nope')).toThrow(SessionNotFoundError);
    expect(() => SessionLog.open(home, '../../etc')).toThrow(SessionNotFoundError);
    expect(fs.existsSync(path.join(home, 'sessions', 'nope'))).toBe(false);
  });

  it('re-registers a session the index lost and catches the index up, when opened for writing', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit({ title: 'kept' }));
    log.append([user('findable words'), assistant('reply')]);
    log.close();
    for (const name of fs.readdirSync(home).filter((n) => n.startsWith('index.sqlite'))) {
      fs.rmSync(path.join(home, name));
    }
    SessionLog.open(home, log.id).close();
    expect(indexRow(home, log.id)).toBeUndefined();
    SessionLog.open(home, log.id, { write: true }).close();
    expect(indexRow(home, log.id)).toMatchObject({ title: 'kept', lastSeq: 3, eventCount: 3 });
    expect(search(home, 'findable')).toEqual([log.id]);
  });

  it('does not take over a log another live process is still registering, and does once that process is gone', async () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit({ title: 'raced' }));
    log.close();
    // The moment between a creator's commit of session_created and its index registration: no row yet,
    // and the creator's mark beside the log. A racer re-registering it then made the creator's own
    // registration fail (UNIQUE constraint) and the creator deleted the folder the racer was using.
    for (const name of fs.readdirSync(home).filter((n) => n.startsWith('index.sqlite'))) {
      fs.rmSync(path.join(home, name));
    }
    const creator = spawn('sleep', ['30'], { stdio: 'ignore' });
    const mark = path.join(home, 'sessions', log.id, 'creating.json');
    const at = new Date().toISOString();
    fs.writeFileSync(mark, JSON.stringify({ pid: creator.pid, hostname: os.hostname(), acquiredAt: at }));
    try {
      expect(() => SessionLog.open(home, log.id, { write: true })).toThrow(SessionLockedError);
      expect(indexRow(home, log.id)).toBeUndefined();
    } finally {
      creator.kill('SIGKILL');
      await new Promise((resolve) => creator.once('exit', resolve));
    }
    // The creator died before registering: a crashed create, recovered by the next writer.
    SessionLog.open(home, log.id, { write: true }).close();
    expect(indexRow(home, log.id)).toMatchObject({ title: 'raced' });
    expect(fs.existsSync(mark)).toBe(false);
  });

  it('leaves no creating mark behind a create that registered', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.close();
    expect(fs.readdirSync(path.join(home, 'sessions', log.id))).not.toContain('creating.json');
  });

  it('cuts the index back when it is ahead of the log', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append([user('one'), user('two')]);
    log.close();
    const index = SessionIndex.open(home);
    index.recordAppend(log.id, {
      lastSeq: 9,
      updatedAt: 't',
      status: 'idle',
      messages: [{ seq: 9, text: 'ghost' }],
    });
    index.close();
    SessionLog.open(home, log.id, { write: true }).close();
    expect(indexRow(home, log.id)).toMatchObject({ lastSeq: 3 });
    expect(search(home, 'ghost')).toEqual([]);
  });

  it('does not leave a lease behind when opening fails after taking it', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.close();
    const holder = SessionLog.open(home, log.id, { write: true });
    expect(() => SessionLog.open(home, log.id, { write: true })).toThrow(SessionLockedError);
    holder.close();
    const index = SessionIndex.open(home);
    expect(index.leaseHolder(log.id)).toBeUndefined();
    index.close();
  });
});

describe('SessionLog.importEvents', () => {
  function exported(): SessionEvent[] {
    const log = SessionLog.create(tempHome(), sessionInit({ title: 'Imported' }));
    log.append([user('import me please'), assistant('ok', [{ id: 'c1', name: 'grep', arguments: '{}' }])]);
    log.append({ kind: 'tool_result', toolCallId: 'c1', content: 'done' });
    const events = log.read();
    log.close();
    return events;
  }

  it('writes the whole log under a new id and indexes it', () => {
    const events = exported();
    const home = tempHome();
    const id = SessionLog.importEvents(home, events);
    expect(id).not.toBe(events[0]!.kind === 'session_created' && events[0].sessionId);
    const log = SessionLog.open(home, id);
    const read = log.read();
    expect(read.slice(1)).toEqual(events.slice(1));
    expect(read[0]).toEqual({ ...events[0], sessionId: id });
    log.close();
    expect(indexRow(home, id)).toMatchObject({
      title: 'Imported',
      eventCount: 4,
      lastSeq: 4,
      status: 'idle',
    });
    expect(search(home, 'please')).toEqual([id]);
    const index = SessionIndex.open(home);
    expect(index.leaseHolder(id)).toBeUndefined();
    index.close();
  });

  it('keeps the id it is given and refuses one that exists, leaving the existing session alone', () => {
    const events = exported();
    const home = tempHome();
    const id = SessionLog.importEvents(home, events, { id: 'kept-id' });
    expect(id).toBe('kept-id');
    expect(() => SessionLog.importEvents(home, events, { id: 'kept-id' })).toThrow(SessionExistsError);
    expect(SessionLog.open(home, 'kept-id').lastSeq()).toBe(4);
  });

  it('leaves no folder, index row or search text when any event fails to store', () => {
    const events = exported();
    const home = tempHome();
    const gap = [...events.slice(0, 2), { ...events[3]!, seq: 7 }];
    expect(() => SessionLog.importEvents(home, gap, { id: 'broken' })).toThrow(/append-only/);
    const invalid = [...events.slice(0, 2), { ...events[2]!, toolCalls: 'nope' } as unknown as SessionEvent];
    expect(() => SessionLog.importEvents(home, invalid, { id: 'broken' })).toThrow();
    expect(fs.existsSync(path.join(home, 'sessions', 'broken'))).toBe(false);
    expect(indexRow(home, 'broken')).toBeUndefined();
    expect(search(home, 'please')).toEqual([]);
    const raw = new Database(path.join(home, 'index.sqlite'));
    expect(raw.prepare('SELECT count(*) FROM message_search').pluck().get()).toBe(0);
    raw.close();
  });

  it('removes the written session folder when registering it in the index fails', () => {
    const events = exported();
    const home = tempHome();
    SessionIndex.open(home).close();
    const raw = new Database(path.join(home, 'index.sqlite'));
    raw.exec(`CREATE TRIGGER refuse_doomed BEFORE INSERT ON sessions WHEN NEW.id = 'doomed'
      BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    raw.close();
    expect(() => SessionLog.importEvents(home, events, { id: 'doomed' })).toThrow(/injected failure/);
    expect(() => SessionLog.create(home, sessionInit(), { id: 'doomed' })).toThrow(/injected failure/);
    expect(fs.existsSync(path.join(home, 'sessions', 'doomed'))).toBe(false);
    expect(indexRow(home, 'doomed')).toBeUndefined();
    expect(search(home, 'please')).toEqual([]);
  });

  it('requires the log to start with session_created', () => {
    const events = exported();
    expect(() => SessionLog.importEvents(tempHome(), events.slice(1))).toThrow(/session_created/);
  });
});

describe('SessionLog trace', () => {
  it('appends and reads trace records by turn, outside the projection', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    log.appendTrace([
      { turn: 1, stage: 'project', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1.5 },
      {
        turn: 1,
        stage: 'model',
        startedAt: '2026-01-01T00:00:00.002Z',
        durationMs: 900,
        detail: { inputTokens: 12 },
      },
    ]);
    log.appendTrace({ turn: 2, stage: 'model', startedAt: '2026-01-01T00:01:00.000Z' });
    expect(log.readTrace({ turn: 1 })).toEqual([
      { turn: 1, stage: 'project', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1.5 },
      {
        turn: 1,
        stage: 'model',
        startedAt: '2026-01-01T00:00:00.002Z',
        durationMs: 900,
        detail: { inputTokens: 12 },
      },
    ]);
    expect(log.readTrace().map((t) => t.turn)).toEqual([1, 1, 2]);
    expect(() => log.appendTrace({ turn: -1, stage: 'x', startedAt: 't' })).toThrow();
    expect(log.projectionView().tail).toHaveLength(1);
    log.close();
  });
});

describe('renaming', () => {
  it('shows the newest session_renamed title in the index, and later messages do not replace it', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append(user('add rate limiting to the api'));
    expect(indexRow(home, log.id)?.title).toBe('add rate limiting to the api');
    log.append({ kind: 'session_renamed', title: 'Rate limiter' });
    expect(indexRow(home, log.id)?.title).toBe('Rate limiter');
    log.append(user('and tests'));
    expect(indexRow(home, log.id)?.title).toBe('Rate limiter');
    expect(search(home, 'limiter')).toEqual([log.id]);
    log.close();
  });

  it('finds a session by the title it was created with', () => {
    const home = tempHome();
    const log = SessionLog.create(home, { ...sessionInit(), title: 'Quasar refactor' });
    log.append(user('start'));
    expect(search(home, 'quasar')).toEqual([log.id]);
    log.close();
  });
});

describe('the hot-path projection view', () => {
  it('equals the validated view after every append, across a new compaction, with the tail decoded once', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    const check = () => expect(log.projectionView({ validate: false })).toEqual(log.projectionView());
    check();
    log.append(user('goal'));
    check();
    log.append([assistant('one'), user('two')]);
    check();
    log.append(compaction(3, 'summary of 1..3'));
    check();
    log.append(user('after the compaction'));
    check();
    // A returned tail is the caller's own array: changing it does not change the next view.
    (log.projectionView({ validate: false }).tail as SessionEvent[]).length = 0;
    check();
    log.close();
  });
});
