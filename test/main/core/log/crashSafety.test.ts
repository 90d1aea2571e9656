import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { waitForClose } from '../../../support/childProcesses.js';
import { spawnTypescript, waitForLine } from '../../store/support/childProcess.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-crash-');
const APPEND_LOOP = path.join(import.meta.dirname, 'fixtures', 'appendLoop.ts');
const RUNS = 10;

describe('crash safety', () => {
  it(`keeps every acknowledged append and an intact database across ${RUNS} kill -9s mid-append`, async () => {
    const home = tempHome();
    const created = SessionLog.create(home, sessionInit());
    const id = created.id;
    created.close();

    let highestAcked = 1;
    for (let run = 0; run < RUNS; run++) {
      // This child's own acks can come in the same chunk as its `ready`: compare with earlier runs' only.
      const ackedBefore = highestAcked;
      const child = spawnTypescript(APPEND_LOOP, [home, id]);
      let pending = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const match = /^acked (\d+)$/.exec(line);
          if (match) highestAcked = Math.max(highestAcked, Number(match[1]));
        }
      });
      const ready = await waitForLine(child, /^ready \d+$/);
      // Each run starts where the last acknowledged one ended, or later (a commit may land unacknowledged).
      expect(Number(ready.split(' ')[1])).toBeGreaterThanOrEqual(ackedBefore);
      await waitForLine(child, /^acked \d+$/);
      await sleep(20 + Math.random() * 150);
      child.kill('SIGKILL');
      // Close, not exit: its last acks may still be in the stdout pipe, and the next run is held to them.
      expect((await waitForClose(child)).signal).toBe('SIGKILL');
    }

    const file = path.join(home, 'sessions', id, 'events.sqlite');
    const raw = new Database(file);
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.close();

    const log = SessionLog.open(home, id, { write: true });
    const events = log.read();
    expect(events.length).toBeGreaterThan(RUNS);
    expect(log.lastSeq()).toBeGreaterThanOrEqual(highestAcked);
    // Dense 1..n, so every acknowledged seq is present.
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    log.close();

    // The writer's open caught the index up with whatever the kills left it behind on.
    const index = SessionIndex.open(home);
    expect(index.get(id)?.lastSeq).toBe(events.length);
    const rawIndex = new Database(path.join(home, 'index.sqlite'));
    expect(rawIndex.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(rawIndex.prepare('SELECT count(*) FROM message_search').pluck().get()).toBe(events.length - 1);
    rawIndex.close();
    index.close();
  }, 120_000);
});
