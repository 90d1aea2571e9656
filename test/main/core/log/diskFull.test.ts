import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskFullError } from '../../../../main/core/log/logErrors.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import { fillDisk, mountTmpfs, TMPFS_REFUSED, unmountTmpfs } from '../../../support/tmpfs.js';
import { sessionInit } from './support.js';

// Issue 20, item 4, at the log's level: on a full disk (a 2 MiB tmpfs, filled) an append or a create throws a
// DiskFullError naming the file and the session, keeps everything acknowledged before, and works again once
// space is freed; a create that cannot finish leaves no folder and no index row.

let home: string;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-logfull-'));
  if (TMPFS_REFUSED === undefined) mountTmpfs(home, '2m');
});

afterEach(() => {
  unmountTmpfs(home);
  fs.rmSync(home, { recursive: true, force: true });
});

const text = (n: number) => ({ kind: 'user_message' as const, content: `message ${n} ${'x'.repeat(2000)}` });

function indexIds(): Set<string> {
  const index = SessionIndex.open(home);
  try {
    return index.ids();
  } finally {
    index.close();
  }
}

describe.skipIf(TMPFS_REFUSED !== undefined)(
  `SessionLog on a full disk${TMPFS_REFUSED ? ` (skipped: ${TMPFS_REFUSED})` : ''}`,
  () => {
    it('an append that does not fit throws DiskFullError (file, session, kinds), loses nothing, and works after space is freed', () => {
      const log = SessionLog.create(home, sessionInit());
      const file = path.join(log.dir, 'events.sqlite');
      for (let n = 1; n <= 5; n++) log.append(text(n));
      const acknowledged = log.read();
      const filler = fillDisk(home);
      let thrown: unknown;
      try {
        // Large enough that no free page of the WAL can hold it.
        for (let n = 6; n <= 400; n++) log.append(text(n));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DiskFullError);
      const full = thrown as DiskFullError;
      expect(full).toMatchObject({ file, sessionId: log.id, stage: 'append', kinds: ['user_message'] });
      expect(full.message).toBe(`${file} could not be written: the disk is full (${full.reason})`);
      expect(full.reason).toMatch(/disk is full|disk I\/O error/);
      const kept = log.read();
      expect(kept.slice(0, acknowledged.length)).toEqual(acknowledged);
      expect(kept.map((event) => event.seq)).toEqual(kept.map((_, i) => i + 1));

      fs.rmSync(filler);
      const after = log.append(text(1000));
      expect(after.ok && after.events[0]?.seq).toBe(kept.length + 1);
      log.close();
      const reopened = SessionLog.open(home, log.id);
      expect(reopened.read().slice(0, kept.length)).toEqual(kept);
      expect(reopened.lastSeq()).toBe(kept.length + 1);
      reopened.close();
    });

    it('a create on a full disk throws DiskFullError and leaves no folder and no index row', () => {
      SessionLog.create(home, sessionInit()).close();
      const before = indexIds();
      const filler = fillDisk(home);
      expect(() => SessionLog.create(home, sessionInit(), { id: 'made-on-a-full-disk' })).toThrow(
        DiskFullError,
      );
      fs.rmSync(filler);
      expect(fs.existsSync(path.join(home, 'sessions', 'made-on-a-full-disk'))).toBe(false);
      expect(indexIds()).toEqual(before);
    });

    it('a create whose own files do not fit (persistent.json) is not registered: never a session without them', () => {
      SessionLog.create(home, sessionInit()).close();
      const before = indexIds();
      let filler: string | undefined;
      let thrown: unknown;
      try {
        SessionLog.create(home, sessionInit(), {
          id: 'half-made',
          files: (dir) => {
            filler = fillDisk(home);
            fs.writeFileSync(path.join(dir, 'persistent.json'), 'x'.repeat(64 * 1024));
          },
        });
      } catch (error) {
        thrown = error;
      }
      fs.rmSync(filler as string);
      expect(thrown).toBeInstanceOf(DiskFullError);
      expect(thrown).toMatchObject({
        // A write that fails names no path: the session's folder is the place.
        file: path.join(home, 'sessions', 'half-made'),
        stage: 'create',
      });
      expect(fs.existsSync(path.join(home, 'sessions', 'half-made'))).toBe(false);
      expect(indexIds()).toEqual(before);
      expect(() => SessionLog.open(home, 'half-made')).toThrow(/no session half-made/);
    });
  },
);
