import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeKeptConnections } from '../../../../main/core/log/keptConnections.js';
import { LogCache, SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { spawnTypescript, waitForExit, waitForLine } from '../../store/support/childProcess.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-kept-');
const HOLD_LEASE = path.join(import.meta.dirname, 'fixtures', 'holdLease.ts');

afterEach(() => closeKeptConnections());

function createSession(home: string, content = 'first'): { id: string; file: string } {
  const log = SessionLog.create(home, sessionInit());
  log.append({ kind: 'user_message', content });
  log.close();
  return { id: log.id, file: path.join(log.dir, 'events.sqlite') };
}

const texts = (log: SessionLog): string[] =>
  log.read().flatMap((event) => (event.kind === 'user_message' ? [event.content] : []));

describe("a host's writer connections kept between its opens", () => {
  it('stay open after close (the WAL is not checkpointed away), the lease is free, another process writes meanwhile', async () => {
    const home = tempHome();
    const { id, file } = createSession(home);
    const cache = new LogCache();
    const first = SessionLog.open(home, id, { write: true, cache });
    first.append({ kind: 'user_message', content: 'one' });
    first.close();
    // The last connection's close would have checkpointed the WAL into the file and deleted it.
    expect(fs.existsSync(`${file}-wal`)).toBe(true);

    // The lease went with the close: another process takes it, appends and exits.
    const child = spawnTypescript(HOLD_LEASE, [home, id, 'exit']);
    await waitForLine(child, /^holding \d+$/);
    expect(await waitForExit(child)).toBe(0);

    // The next open takes the kept connection and sees the other process's event.
    const again = SessionLog.open(home, id, { write: true, cache });
    expect(texts(again)).toEqual(['first', 'one', `from pid ${child.pid}`]);
    again.append({ kind: 'user_message', content: 'two' });
    const lastSeq = again.lastSeq();
    again.close();
    const index = SessionIndex.open(home);
    expect(index.get(id)?.lastSeq).toBe(lastSeq);
    expect(index.leaseHolder(id)).toBeUndefined();
    index.close();
  });

  it('are closed for real by an open without a cache (the app deletes a session that way)', () => {
    const home = tempHome();
    const { id, file } = createSession(home);
    const cache = new LogCache();
    SessionLog.open(home, id, { write: true, cache }).close();
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    SessionLog.open(home, id, { write: true }).close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('are not reused once the path names another file', () => {
    const home = tempHome();
    const { id, file } = createSession(home);
    const other = createSession(home, 'the other log');
    const cache = new LogCache();
    SessionLog.open(home, id, { write: true, cache }).close();
    // The session's events.sqlite replaced by a copy of another log (a new inode), its WAL gone.
    for (const suffix of ['-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
    fs.copyFileSync(other.file, `${file}.new`);
    fs.renameSync(`${file}.new`, file);
    const log = SessionLog.open(home, id, { write: true, cache });
    expect(texts(log)).toEqual(['the other log']);
    log.close();
  });
});
