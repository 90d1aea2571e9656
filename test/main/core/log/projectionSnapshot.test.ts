import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import { SNAPSHOT_POLICY } from '../../../../main/core/log/logFold.js';
import { SNAPSHOT_FILE } from '../../../../main/core/log/projectionSnapshot.js';
import { LogCache, SessionLog } from '../../../../main/core/log/sessionLog.js';
import { projectPayload } from '../../../../main/core/projection/index.js';
import { waitForClose } from '../../../support/childProcesses.js';
import { spawnTypescript } from '../../store/support/childProcess.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { buildLog, foldStep } from '../projection/randomLog.js';

const tempHome = useTempHomes('keel-snapshot-');
const system = 'You are Keel.';
const WRITER = path.join(import.meta.dirname, 'fixtures', 'snapshotWriter.ts');
const defaults = { ...SNAPSHOT_POLICY };

const created: NewEvent = {
  kind: 'session_created',
  sessionId: 'x',
  projectFolder: '/work/app',
  provider: 'openai-compatible',
  model: 'qwen',
  contextWindow: 32_000,
  toolMode: 'write',
  policy: 'ask',
};

/** Random real logs (rewinds, compactions, reasoning parts, held-back commits) that start as a session does. */
const sessionLogs = fc
  .array(foldStep, { minLength: 1, maxLength: 70 })
  .map((steps) => buildLog(steps, created));

/** What projecting the log's events from scratch gives, as bytes. */
function fromEvents(log: SessionLog): string {
  return JSON.stringify(projectPayload(log.read(), { system }));
}

function asNew(event: SessionEvent): NewEvent {
  const { seq: _seq, at: _at, ...rest } = event;
  return rest;
}

function openReadOnly(home: string, id: string): { payload: string; origin: string; problem?: string } {
  const log = SessionLog.open(home, id);
  try {
    const payload = JSON.stringify(log.projection().payload({ system }));
    expect(payload).toBe(fromEvents(log));
    const origin = log.projectionOrigin;
    return {
      payload,
      origin: origin?.source ?? '',
      ...(origin?.snapshotProblem ? { problem: origin.snapshotProblem } : {}),
    };
  } finally {
    log.close();
  }
}

/** A long-enough session imported (so it has a snapshot), its id and its snapshot file. */
function importedSession(home: string, blocks = 30): { id: string; file: string } {
  const events: SessionEvent[] = [];
  const at = '2026-01-01T00:00:00.000Z';
  const push = (event: NewEvent) => events.push({ ...event, seq: events.length + 1, at });
  push(created);
  for (let i = 0; i < blocks; i++) {
    push({ kind: 'user_message', content: `step ${i}: tighten the limiter` });
    push({
      kind: 'assistant_message',
      content: 'reading',
      toolCalls: [{ id: `c${i}`, name: 'read_file', arguments: '{}' }],
    });
    push({ kind: 'tool_result', toolCallId: `c${i}`, content: `package limit // ${i}` });
    push({ kind: 'assistant_message', content: `done ${i}`, toolCalls: [] });
  }
  const id = SessionLog.importEvents(home, events);
  return { id, file: path.join(home, 'sessions', id, SNAPSHOT_FILE) };
}

describe('projection snapshot', () => {
  beforeEach(() => Object.assign(SNAPSHOT_POLICY, { minMessages: 0, minLag: 0, lagPerMessage: 0 }));
  afterEach(() => Object.assign(SNAPSHOT_POLICY, defaults));

  it('gives the payload of projecting the events, byte for byte, for random real logs imported, extended and reopened', () => {
    fc.assert(
      fc.property(sessionLogs, fc.nat(), fc.nat({ max: 3 }), (events, splitSeed, every) => {
        const home = tempHome();
        const split = 1 + (splitSeed % events.length);
        const id = SessionLog.importEvents(home, events.slice(0, split));
        expect(openReadOnly(home, id).origin).toBe('snapshot');

        const writer = SessionLog.open(home, id, { write: true });
        events.slice(split).forEach((event, i) => {
          const result = writer.append(asNew(event));
          expect(result.ok).toBe(true);
          // Sometimes projected between appends (a turn's requests), sometimes not at all (a writer that never asks).
          if (every > 0 && i % every === 0)
            expect(JSON.stringify(writer.projection().payload({ system }))).toBe(fromEvents(writer));
        });
        const tallies = writer.tallies();
        expect(tallies.userMessages).toBe(writer.countOfKind('user_message'));
        expect(tallies.usage).toEqual(writer.usageTotals());
        writer.close();
        // Extended from the snapshot, or from a snapshot the writer's close rewrote: the same bytes either way.
        expect(openReadOnly(home, id).origin).toBe('snapshot');
        fs.rmSync(home, { recursive: true, force: true });
      }),
      { numRuns: 25 },
    );
  });

  it('detects a snapshot whose body was changed and rebuilds from events; the next writer rewrites it', () => {
    const home = tempHome();
    const { id, file } = importedSession(home);
    const text = fs.readFileSync(file, 'utf8');
    // Same length, one word changed: only the hash can tell.
    fs.writeFileSync(file, text.replace('step 7: tighten', 'step 7: loosen!'));
    expect(openReadOnly(home, id)).toMatchObject({
      origin: 'rebuilt',
      problem: 'body does not match its hash',
    });

    const writer = SessionLog.open(home, id, { write: true });
    writer.projection();
    writer.close();
    expect(openReadOnly(home, id).origin).toBe('snapshot');
  });

  it('detects a snapshot cut short, one of another version, one of another log and one ahead of its log', () => {
    const home = tempHome();
    const { id, file } = importedSession(home);
    const good = fs.readFileSync(file);

    fs.writeFileSync(file, good.subarray(0, Math.floor(good.length / 2)));
    expect(openReadOnly(home, id)).toMatchObject({
      origin: 'rebuilt',
      problem: expect.stringMatching(/bytes, not/) as unknown,
    });
    fs.writeFileSync(file, good.subarray(0, 20));
    expect(openReadOnly(home, id)).toMatchObject({
      origin: 'rebuilt',
      problem: expect.stringMatching(/header/) as unknown,
    });

    fs.writeFileSync(file, good.toString('utf8').replace('"version":1', '"version":0'));
    expect(openReadOnly(home, id)).toMatchObject({ origin: 'rebuilt', problem: 'version 0, not 1' });

    // Another session's snapshot copied in (or this log replaced): its digests name rows this log does not have.
    const other = importedSession(home, 31);
    fs.copyFileSync(other.file, file);
    expect(openReadOnly(home, id)).toMatchObject({
      origin: 'rebuilt',
      problem: expect.stringMatching(/not match the log/) as unknown,
    });

    // A snapshot newer than the log (the log restored from an older copy): rebuilt, never trusted.
    const restored = importedSession(home);
    const database = path.join(home, 'sessions', restored.id, 'events.sqlite');
    const older = fs.readFileSync(database);
    const writer = SessionLog.open(home, restored.id, { write: true });
    writer.projection();
    writer.append({ kind: 'user_message', content: 'later' });
    writer.close();
    for (const suffix of ['-wal', '-shm']) fs.rmSync(database + suffix, { force: true });
    fs.writeFileSync(database, older);
    expect(openReadOnly(home, restored.id)).toMatchObject({
      origin: 'rebuilt',
      problem: expect.stringMatching(/not match the log at seq 122/) as unknown,
    });
  });

  it('an older snapshot is extended with the events after it', () => {
    const home = tempHome();
    const { id } = importedSession(home);
    Object.assign(SNAPSHOT_POLICY, defaults); // this writer never rewrites it
    const writer = SessionLog.open(home, id, { write: true });
    writer.append({ kind: 'user_message', content: 'one more' });
    writer.append({ kind: 'assistant_message', content: 'sure', toolCalls: [] });
    writer.close();
    expect(openReadOnly(home, id).origin).toBe('snapshot');
  });

  it('a long-lived host cache carries the projection to the next open of the session', () => {
    const home = tempHome();
    const { id } = importedSession(home);
    const cache = new LogCache();
    const first = SessionLog.open(home, id, { write: true, cache });
    first.projection();
    expect(first.projectionOrigin?.source).toBe('snapshot');
    first.append({ kind: 'user_message', content: 'next turn' });
    first.close();
    expect(cache.size).toBe(1);
    const second = SessionLog.open(home, id, { write: true, cache });
    expect(JSON.stringify(second.projection().payload({ system }))).toBe(fromEvents(second));
    expect(second.projectionOrigin?.source).toBe('cache');
    second.close();
  });

  it('a crash half way through writing the snapshot leaves the old one (or none) and a usable session', async () => {
    const home = tempHome();
    const { id, file } = importedSession(home);
    const before = fs.readFileSync(file);
    process.env['KEEL_CRASH_AT'] = 'during_snapshot_write';
    let child;
    try {
      child = spawnTypescript(WRITER, [home, id]);
    } finally {
      delete process.env['KEEL_CRASH_AT'];
    }
    expect((await waitForClose(child)).signal).toBe('SIGKILL');
    // The half-written temp file never replaced the snapshot.
    expect(fs.existsSync(`${file}.tmp`)).toBe(true);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(openReadOnly(home, id).origin).toBe('snapshot');
    // The next writer takes over the dead one's lease and writes a whole snapshot over the leftover.
    const rerun = spawnTypescript(WRITER, [home, id]);
    expect((await waitForClose(rerun)).code).toBe(0);
    expect(fs.readFileSync(file).equals(before)).toBe(false);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    expect(openReadOnly(home, id).origin).toBe('snapshot');
  });
});
