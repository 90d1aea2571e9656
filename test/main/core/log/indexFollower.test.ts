import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { PENDING_LIMIT } from '../../../../main/core/log/indexFollower.js';
import { openSessionIndex } from '../../../../main/core/log/indexRebuild.js';
import { indexLag } from '../../../../main/core/log/indexLag.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { waitForClose } from '../../../support/childProcesses.js';
import { spawnTypescript, waitForLine } from '../../store/support/childProcess.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-follow-');
const TURN_THEN_HANG = path.join(import.meta.dirname, 'fixtures', 'turnThenHang.ts');

function reply(content: string) {
  return { kind: 'assistant_message' as const, content, toolCalls: [] };
}

function searchIds(index: SessionIndex, words: string): string[] {
  return index.list({ limit: 10, search: words }).map((row) => row.id);
}

describe('the index row during a turn', () => {
  it('holds a turn’s replies and tool events back and indexes them, searchable, when the turn ends', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const index = SessionIndex.open(home);
    log.setRunning(true);
    log.append({ kind: 'user_message', content: 'Fix the flaky quokka test' });
    // The first user message is indexed at once: it gives the session its title.
    expect(index.get(log.id)).toMatchObject({
      title: 'Fix the flaky quokka test',
      lastSeq: 2,
      status: 'running',
    });

    log.append(reply('looking at the zephyr module'));
    log.append({ kind: 'tool_call_started', toolCallId: 'c1', tool: 'grep', idempotencyKey: 'k1' });
    log.append({ kind: 'tool_result', toolCallId: 'c1', tool: 'grep', content: 'found', exitCode: 0 });
    expect(log.indexPending()).toBe(3);
    expect(index.get(log.id)?.lastSeq).toBe(2);
    expect(searchIds(index, 'zephyr')).toEqual([]);
    // A reader is told how far the row is behind.
    expect(indexLag(home, index, index.list({ limit: 10 }))).toEqual(new Map([[log.id, 3]]));

    log.setRunning(false);
    expect(log.indexPending()).toBe(0);
    expect(index.get(log.id)).toMatchObject({ lastSeq: 5, eventCount: 5, status: 'idle' });
    expect(searchIds(index, 'zephyr')).toEqual([log.id]);
    expect(indexLag(home, index, index.list({ limit: 10 })).size).toBe(0);
    log.close();
    index.close();
  });

  it('indexes at once, with what it held, anything that changes the row but its counts', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const index = SessionIndex.open(home);
    log.setRunning(true);
    log.append({ kind: 'user_message', content: 'first' });
    log.append(reply('held back'));
    expect(index.get(log.id)?.lastSeq).toBe(2);
    // An approval request changes the status the list shows: indexed now, the held reply with it.
    log.append({
      kind: 'approval_request',
      toolCallId: 'c1',
      tool: 'run_command',
      arguments: '{"command":"rm -rf build"}',
    });
    expect(index.get(log.id)).toMatchObject({ lastSeq: 4, status: 'awaiting_approval' });
    expect(searchIds(index, 'held')).toEqual([log.id]);
    log.append({ kind: 'session_renamed', title: 'Renamed mid-turn' });
    expect(index.get(log.id)).toMatchObject({ lastSeq: 5, title: 'Renamed mid-turn' });
    log.close();
    index.close();
  });

  it('holds a running turn’s events only while the row says running: after an approval, its answer, an error', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const index = SessionIndex.open(home);
    const result = (id: string) => ({
      kind: 'tool_result' as const,
      toolCallId: id,
      content: 'ok',
      exitCode: 0,
    });
    log.setRunning(true);
    log.append({ kind: 'user_message', content: 'first' });
    log.append(result('c0'));
    expect(log.indexPending()).toBe(1);
    const request = log.append({
      kind: 'approval_request',
      toolCallId: 'c1',
      tool: 'run_command',
      arguments: '{"command":"make"}',
    });
    expect(index.get(log.id)).toMatchObject({ lastSeq: 4, status: 'awaiting_approval' });
    // Still waiting: another call's result changes nothing the row shows, and is held.
    log.append(result('c2'));
    expect(log.indexPending()).toBe(1);
    const requestSeq = request.ok ? (request.events[0]?.seq ?? 0) : 0;
    log.append({ kind: 'approval_granted', requestSeq, scope: 'once' });
    expect(index.get(log.id)).toMatchObject({ lastSeq: 6, status: 'running' });
    log.append(result('c1'));
    expect(log.indexPending()).toBe(1);
    log.append({ kind: 'error', message: 'provider refused' });
    expect(index.get(log.id)).toMatchObject({ lastSeq: 8, status: 'error' });
    // After an error a result makes the session running again: indexed at once with that status, then held.
    log.append(result('c3'));
    expect(index.get(log.id)).toMatchObject({ lastSeq: 9, status: 'running' });
    log.append(result('c4'));
    expect(log.indexPending()).toBe(1);
    log.setRunning(false);
    expect(index.get(log.id)).toMatchObject({ lastSeq: 10, eventCount: 10, status: 'idle' });
    log.close();
    index.close();
  });

  it('indexes every append at once outside a turn, and a later user message at the turn end', async () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const other = SessionLog.create(home, sessionInit());
    const index = SessionIndex.open(home);
    log.append({ kind: 'user_message', content: 'one' });
    log.append(reply('two'));
    expect(index.get(log.id)?.lastSeq).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    other.append({ kind: 'user_message', content: 'newer session' });
    expect(index.list({ limit: 2 }).map((row) => row.id)).toEqual([other.id, log.id]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A turn that starts moves its session up the list at once, though its events are indexed at its end.
    log.setRunning(true);
    expect(index.list({ limit: 2 }).map((row) => row.id)).toEqual([log.id, other.id]);
    other.close();
    log.append({ kind: 'user_message', content: 'a later quokka question' });
    expect(index.get(log.id)?.lastSeq).toBe(3);
    log.close(); // close indexes what was held, like a turn end
    expect(index.get(log.id)).toMatchObject({ lastSeq: 4, status: 'idle' });
    expect(searchIds(index, 'quokka')).toEqual([log.id]);
    index.close();
  });

  it(`never holds more than ${PENDING_LIMIT} events, however long the turn`, () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    const index = SessionIndex.open(home);
    log.setRunning(true);
    log.append({ kind: 'user_message', content: 'long turn' });
    for (let n = 0; n < PENDING_LIMIT + 10; n++) log.append(reply(`reply ${n}`));
    expect(log.indexPending()).toBeLessThan(PENDING_LIMIT);
    expect(index.get(log.id)!.lastSeq).toBeGreaterThanOrEqual(log.lastSeq() - PENDING_LIMIT);
    log.close();
    index.close();
  });
});

describe('a writer killed mid-turn', () => {
  it('leaves its row behind, which the next list and the next writer catch up from the log', async () => {
    const home = tempHome();
    const created = SessionLog.create(home, sessionInit());
    const id = created.id;
    created.close();

    const child = spawnTypescript(TURN_THEN_HANG, [home, id, 'xylograph']);
    const line = await waitForLine(child, /^appended \d+ pending \d+$/);
    const [, lastSeq, pending] = /^appended (\d+) pending (\d+)$/.exec(line)!.map(Number);
    expect(pending).toBe(15);

    // While it runs: the row is at the user message, and a reader is told by how much it is behind.
    const live = SessionIndex.open(home);
    expect(live.get(id)).toMatchObject({ lastSeq: lastSeq! - 15, status: 'running' });
    expect(indexLag(home, live, live.list({ limit: 10 }))).toEqual(new Map([[id, 15]]));
    live.close();

    child.kill('SIGKILL');
    expect((await waitForClose(child)).signal).toBe('SIGKILL');

    // The list's open catches the dead writer's row up: counts and search; the status says interrupted.
    const index = openSessionIndex(home);
    expect(index.get(id)).toMatchObject({ lastSeq, eventCount: lastSeq, status: 'interrupted' });
    expect(index.list({ limit: 10, search: 'xylograph' }).map((row) => row.id)).toEqual([id]);
    expect(indexLag(home, index, index.list({ limit: 10 })).size).toBe(0);
    index.close();

    // The next writer finds it caught up, and its own open would have done the same.
    const log = SessionLog.open(home, id, { write: true });
    expect(log.lastSeq()).toBe(lastSeq);
    log.close();
    const after = SessionIndex.open(home);
    expect(after.get(id)).toMatchObject({ lastSeq, status: 'idle' });
    after.close();
  }, 60_000);

  it('is caught up by the next writer’s open when no list ran first', async () => {
    const home = tempHome();
    const created = SessionLog.create(home, sessionInit());
    const id = created.id;
    created.close();
    const child = spawnTypescript(TURN_THEN_HANG, [home, id, 'quillwort']);
    const line = await waitForLine(child, /^appended \d+ pending \d+$/);
    const lastSeq = Number(/^appended (\d+)/.exec(line)![1]);
    child.kill('SIGKILL');
    await waitForClose(child);

    const log = SessionLog.open(home, id, { write: true });
    const index = SessionIndex.open(home);
    expect(index.get(id)).toMatchObject({ lastSeq, eventCount: lastSeq });
    expect(index.list({ limit: 10, search: 'quillwort' }).map((row) => row.id)).toEqual([id]);
    log.close();
    index.close();
  }, 60_000);
});
