import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import { FreshLogBatch } from '../../../../main/core/log/freshLogs.js';
import { openSessionIndex } from '../../../../main/core/log/indexRebuild.js';
import { SessionExistsError, SessionLog } from '../../../../main/core/log/sessionLog.js';
import { openReadOnly } from '../../../../main/store/database.js';
import { BUILDING_SUFFIX } from '../../../../main/store/freshDatabase.js';
import { buildSessionEvents, REALISTIC_SHAPE } from '../../../bench/conversation.js';
import { useTempHomes } from '../../store/support/tempHomes.js';

// Issue 35: a history import's new logs written whole, then named a batch at a time (log/freshLogs.ts).

const tempHome = useTempHomes('keel-freshlogs-');

/** `count` realistic events (tool calls and results, reasoning), session_created first, checked by the builder. */
const eventsOf = (id: string, count: number, compactionTail?: number): SessionEvent[] =>
  buildSessionEvents({
    sessionId: id,
    eventCount: count,
    shape: REALISTIC_SHAPE,
    seed: count,
    ...(compactionTail === undefined ? {} : { compactionTail }),
  });

function listed(home: string) {
  const index = openSessionIndex(home);
  try {
    return index.list({ limit: 100 });
  } finally {
    index.close();
  }
}

function rows(home: string, id: string): unknown[] {
  const db = openReadOnly(path.join(home, 'sessions', id, 'events.sqlite'));
  try {
    return db.prepare('SELECT * FROM events ORDER BY seq').all();
  } finally {
    db.close();
  }
}

function search(home: string, words: string): string[] {
  const index = openSessionIndex(home);
  try {
    return index.list({ limit: 100, search: words }).map((row) => row.id);
  } finally {
    index.close();
  }
}

describe('fresh logs named in batches', () => {
  it('are the logs, index rows and search text SessionLog.importEvents makes, and nothing is named before the seal', async () => {
    const home = tempHome();
    const reference = tempHome();
    // 1 event, fewer than one multi-row insert, several of them and a remainder, and a compaction's `through`.
    const sessions = [
      { id: 'fresh-one', events: eventsOf('fresh-one', 1) },
      { id: 'fresh-few', events: eventsOf('fresh-few', 31) },
      { id: 'fresh-many', events: eventsOf('fresh-many', 130, 10) },
    ];
    const index = openSessionIndex(home, { synchronous: 'NORMAL' });
    try {
      const batch = new FreshLogBatch(home, index);
      for (const { id, events } of sessions) {
        batch.write(id, events, (dir) => fs.writeFileSync(path.join(dir, 'persistent.json'), '[]'));
        SessionLog.importEvents(reference, events, { id, validated: true, snapshot: false });
      }
      expect(batch.has('fresh-few')).toBe(true);
      // Written whole under another name: no log to open, no row.
      expect(fs.readdirSync(path.join(home, 'sessions', 'fresh-few'))).toContain(
        `events.sqlite${BUILDING_SUFFIX}`,
      );
      expect(() => SessionLog.open(home, 'fresh-few')).toThrow(/not found|no session/i);
      expect(index.list({ limit: 10 })).toEqual([]);
      expect(await batch.seal()).toEqual(sessions.map(({ id }) => ({ id })));
      expect(batch.has('fresh-few')).toBe(false);
    } finally {
      index.close();
    }
    for (const { id, events } of sessions) {
      const log = SessionLog.open(home, id);
      try {
        expect(log.read()).toEqual(SessionLog.open(reference, id).read());
        expect(log.read()).toHaveLength(events.length);
      } finally {
        log.close();
      }
      // Row for row what importEvents stores (the compaction's `through` column, each body).
      expect(rows(home, id)).toEqual(rows(reference, id));
      // The same folder (an open leaves its -wal and -shm files).
      const files = (h: string) =>
        fs
          .readdirSync(path.join(h, 'sessions', id))
          .filter((name) => !/-(wal|shm)$/.test(name))
          .sort();
      expect(files(home)).toEqual([...files(reference), 'persistent.json'].sort());
    }
    expect(listed(home)).toEqual(listed(reference));
    const words = 'the';
    expect(search(home, words).sort()).toEqual(search(reference, words).sort());
  });

  it('leaves out whole a log that fails, at its write or its naming; the others are named', async () => {
    const home = tempHome();
    const index = openSessionIndex(home, { synchronous: 'NORMAL' });
    try {
      const batch = new FreshLogBatch(home, index);
      batch.write('fresh-a', eventsOf('fresh-a', 5));
      // Its folder's own files fail (a full disk): nothing of it is left.
      expect(() =>
        batch.write('fresh-b', eventsOf('fresh-b', 5), () => {
          throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
        }),
      ).toThrow();
      expect(fs.existsSync(path.join(home, 'sessions', 'fresh-b'))).toBe(false);
      expect(() => batch.write('fresh-a', eventsOf('fresh-a', 5))).toThrow(SessionExistsError);
      batch.write('fresh-c', eventsOf('fresh-c', 5));
      // Something took its name meanwhile: it is not named over it, and its folder goes.
      fs.writeFileSync(path.join(home, 'sessions', 'fresh-c', 'events.sqlite'), 'someone else');
      const sealed = await batch.seal();
      expect(sealed.map((s) => [s.id, s.error?.message.includes('already exists') ?? 'ok'])).toEqual([
        ['fresh-a', 'ok'],
        ['fresh-c', true],
      ]);
      expect(fs.existsSync(path.join(home, 'sessions', 'fresh-c'))).toBe(false);
      expect(() => batch.write('fresh-a', eventsOf('fresh-a', 5))).toThrow(SessionExistsError);
    } finally {
      index.close();
    }
    expect(listed(home).map((row) => row.id)).toEqual(['fresh-a']);
  });
});
