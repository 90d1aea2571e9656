import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLockedError, SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { spawnTypescript, waitForExit, waitForLine } from '../../store/support/childProcess.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-lease-');
const HOLD_LEASE = path.join(import.meta.dirname, 'fixtures', 'holdLease.ts');

function createSession(home: string): string {
  const log = SessionLog.create(home, sessionInit());
  log.close();
  return log.id;
}

describe('the writer lease across processes', () => {
  it('refuses a second writer while another live process holds it, and takes it over after kill -9', async () => {
    const home = tempHome();
    const id = createSession(home);
    const child = spawnTypescript(HOLD_LEASE, [home, id, 'wait']);
    try {
      await waitForLine(child, /^holding \d+$/);

      let refused: unknown;
      try {
        SessionLog.open(home, id, { write: true }).close();
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(SessionLockedError);
      expect((refused as SessionLockedError).holderPid).toBe(child.pid);
      expect((refused as SessionLockedError).sessionId).toBe(id);

      // Readers are never blocked by the lease.
      const reader = SessionLog.open(home, id);
      expect(reader.read().map((e) => e.kind)).toEqual(['session_created', 'user_message']);
      reader.close();
    } finally {
      child.kill('SIGKILL');
      expect(await waitForExit(child)).toBe('SIGKILL');
    }

    const writer = SessionLog.open(home, id, { write: true });
    const index = SessionIndex.open(home);
    expect(index.leaseHolder(id)?.pid).toBe(process.pid);
    expect(writer.append({ kind: 'user_message', content: 'after takeover' }).ok).toBe(true);
    writer.close();
    expect(index.leaseHolder(id)).toBeUndefined();
    index.close();
  });

  it('is released when the holding process exits without closing the log', async () => {
    const home = tempHome();
    const id = createSession(home);
    const child = spawnTypescript(HOLD_LEASE, [home, id, 'exit']);
    await waitForLine(child, /^holding \d+$/);
    expect(await waitForExit(child)).toBe(0);
    const index = SessionIndex.open(home);
    expect(index.leaseHolder(id)).toBeUndefined();
    index.close();
  });

  it('refuses a second writer in the same process until the first closes', () => {
    const home = tempHome();
    const id = createSession(home);
    const first = SessionLog.open(home, id, { write: true });
    expect(() => SessionLog.open(home, id, { write: true })).toThrow(SessionLockedError);
    // The refused open must not have released the first writer's lease.
    const index = SessionIndex.open(home);
    expect(index.leaseHolder(id)?.pid).toBe(process.pid);
    index.close();
    expect(() => SessionLog.open(home, id, { write: true })).toThrow(SessionLockedError);
    first.close();
    SessionLog.open(home, id, { write: true }).close();
  });
});
