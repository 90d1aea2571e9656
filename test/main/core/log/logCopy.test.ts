import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../../main/common/events.js';
import { forkSession } from '../../../../main/core/history/fork.js';
import { SNAPSHOT_FILE } from '../../../../main/core/log/projectionSnapshot.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { buildSessionEvents, REALISTIC_SHAPE } from '../../../bench/conversation.js';
import { useTempHomes } from '../../store/support/tempHomes.js';

const tempHome = useTempHomes('keel-logcopy-');

/** A parent session of `count` realistic events (tool calls, results, reasoning), imported into `home`. */
function parentIn(home: string, count: number): { id: string; events: SessionEvent[] } {
  const events = buildSessionEvents({ sessionId: 'p', eventCount: count, shape: REALISTIC_SHAPE, seed: 3 });
  const id = SessionLog.importEvents(home, events);
  return { id, events: SessionLog.open(home, id).read() };
}

function indexIds(home: string): string[] {
  const index = SessionIndex.open(home);
  try {
    return index.list({ limit: 1000 }).map((row) => row.id);
  } finally {
    index.close();
  }
}

describe('a fork copies the parent rows in SQLite (logCopy.ts)', () => {
  it('gives the same log, index row and projection (snapshot bytes too) as re-importing the events', () => {
    const home = tempHome();
    const parent = parentIn(home, 3000);
    const fork = forkSession(home, parent.id);
    expect(fork.events).toBe(3000);

    // The former way: the same events (the fork's own session_created first) validated and inserted one by one.
    const copied = SessionLog.open(home, fork.id);
    const created = copied.read({ toSeq: 1 })[0] as EventOf<'session_created'>;
    const reference = tempHome();
    const referenceId = SessionLog.importEvents(reference, [created, ...parent.events.slice(1)], {
      id: fork.id,
    });
    const imported = SessionLog.open(reference, referenceId);
    try {
      expect(created.forkedFrom).toEqual({ sessionId: parent.id, seq: 3000 });
      expect(copied.read()).toEqual(imported.read());
      expect(JSON.stringify(copied.projection())).toBe(JSON.stringify(imported.projection()));
      expect(copied.tallies()).toEqual(imported.tallies());
      // A projection this long is snapshotted at import (logFold.ts SNAPSHOT_POLICY): byte for byte the same.
      const snapshot = (h: string) => fs.readFileSync(path.join(h, 'sessions', fork.id, SNAPSHOT_FILE));
      expect(snapshot(home).equals(snapshot(reference))).toBe(true);
      const row = (h: string) => {
        const index = SessionIndex.open(h);
        const found = index.list({ limit: 1000 }).find((r) => r.id === fork.id);
        index.close();
        return found;
      };
      expect(row(home)).toEqual(row(reference));
    } finally {
      copied.close();
      imported.close();
    }
  });

  it('leaves no session when the parent lacks a row it was to copy (one transaction, folder removed)', () => {
    const home = tempHome();
    const parent = parentIn(home, 50);
    const file = path.join(home, 'sessions', parent.id, 'events.sqlite');
    const extra: SessionEvent = { ...parent.events.at(-1)!, seq: 51 };
    const before = fs.readdirSync(path.join(home, 'sessions')).sort();
    expect(() =>
      SessionLog.importEvents(home, [...parent.events, extra], { id: 'half', copyFrom: file }),
    ).toThrow(/has 49 of the events 2\.\.51/);
    expect(fs.readdirSync(path.join(home, 'sessions')).sort()).toEqual(before);
    expect(indexIds(home)).toEqual([parent.id]);
    // The parent is only read: still its 50 rows.
    expect(SessionLog.open(home, parent.id).lastSeq()).toBe(50);
  });
});
