import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { EventOf } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { Checkout } from '../persistent/checkout.js';
import { ensureRealFolder, writeStreamConfined, type StreamSource } from '../persistent/streamWrite.js';
import { openCheckout } from '../persistent/turnCheckouts.js';
import { readPersistentConfig, type PersistentConfig } from '../persistent/config.js';
import type { PersistentDirSpec } from '../persistent/types.js';
import { withWritableSession } from './lock.js';
import type { FileWriter, StagedFile } from './types.js';

/** Events read per page when looking for an earlier staging of a message. */
const PAGE = 2_000;

/**
 * The FileWriter of one session. A write waits for a turn running in this process (staging happens
 * between turns), streams the bytes into the workspace through `writeStreamConfined` (the tools'
 * confinement, and the area: a `/session/` path never lands in a checkout and the reverse), then appends
 * `file_staged`. With a `messageId`, a path already staged for that message is not written or recorded again.
 */
export function createFileWriter(home: string, id: string): FileWriter {
  return {
    write(stagingPath, data, options = {}) {
      return withWritableSession(home, id, async (log) => {
        const target = mapStagingPath(readPersistentConfig(log.dir), stagingPath);
        if (options.messageId !== undefined) {
          const earlier = findStaged(log, options.messageId, target.virtualPath);
          if (earlier) {
            discard(data);
            return toStaged(earlier, true);
          }
        }
        const workspace = log.workspaceDir;
        let area: string;
        let view: string | undefined;
        if (target.area === 'session') {
          area = path.join(workspace, 'session');
          ensureRealFolder(workspace, area);
        } else {
          const checkout = await openCheckout(log, target.dir);
          Checkout.markDirty(checkout.location);
          area = checkout.location.checkout;
          // A copy-on-write view is written through its holder (issue #36), confined to the view.
          if (checkout.kind === 'view') view = await checkout.mount();
        }
        const relative = path.relative(workspace, path.join(area, target.relative));
        const written =
          view === undefined
            ? await writeStreamConfined(workspace, relative, data, { within: fs.realpathSync(area) })
            : await writeStreamConfined(view, target.relative, data);
        const result = log.append(
          {
            kind: 'file_staged',
            path: target.virtualPath,
            size: written.size,
            sha256: written.sha256,
            ...(options.mediaType ? { mediaType: options.mediaType } : {}),
            ...(options.source ? { source: options.source } : {}),
            ...(options.messageId ? { messageId: options.messageId } : {}),
          },
          { expectedLastSeq: log.lastSeq() },
        );
        if (!result.ok)
          throw new Error(`session ${id}: the log moved while a file was staged; stage it again`);
        return toStaged(result.events[0] as EventOf<'file_staged'>, false);
      });
    },
  };
}

function toStaged(event: EventOf<'file_staged'>, alreadyStaged: boolean): StagedFile {
  return { path: event.path, size: event.size, sha256: event.sha256, seq: event.seq, alreadyStaged };
}

/** The `file_staged` event of this message and path, if the host staged it before. */
function findStaged(
  log: SessionLog,
  messageId: string,
  virtualPath: string,
): EventOf<'file_staged'> | undefined {
  for (let fromSeq = 1; ;) {
    const page = log.read({ fromSeq, limit: PAGE });
    for (const event of page) {
      if (event.kind === 'file_staged' && event.messageId === messageId && event.path === virtualPath)
        return event;
    }
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) return undefined;
    fromSeq = last.seq + 1;
  }
}

/** Releases a source that will not be read (a retried upload already staged). */
function discard(data: StreamSource): void {
  if (data instanceof Readable) data.destroy();
  else if (typeof (data as ReadableStream).cancel === 'function')
    void (data as ReadableStream).cancel().catch(() => undefined);
}

/** A staging path mapped into the workspace: the private area, or one Persistent Dir's checkout. */
export type StagingTarget =
  | { area: 'session'; relative: string; virtualPath: string }
  | { area: 'persistent'; dir: PersistentDirSpec; relative: string; virtualPath: string };

/**
 * Maps a host's staging path (`/session/...` or `/persistent/<name>/...`; the leading slash is optional)
 * to the workspace. Throws an error naming the path when it is neither, or names an unknown Persistent Dir.
 */
export function mapStagingPath(config: PersistentConfig | undefined, stagingPath: string): StagingTarget {
  const parts = stagingPath.split('/').filter((part) => part !== '' && part !== '.');
  const [area, ...rest] = parts;
  if (area === 'session' && rest.length > 0) {
    const relative = rest.join('/');
    return { area: 'session', relative, virtualPath: `/session/${relative}` };
  }
  if (area === 'persistent' && rest.length > 1) {
    const [name, ...inside] = rest;
    const dir = config?.dirs.find((d) => d.name === name);
    if (!dir) {
      const known = config?.dirs.map((d) => d.name).join(', ') || 'none';
      throw new Error(
        `staging path ${JSON.stringify(stagingPath)}: no Persistent Dir "${name}" (this session has: ${known})`,
      );
    }
    const relative = inside.join('/');
    return { area: 'persistent', dir, relative, virtualPath: `/persistent/${dir.name}/${relative}` };
  }
  throw new Error(
    `staging path ${JSON.stringify(stagingPath)}: stage files under /session/... (private to the session) or /persistent/<name>/...`,
  );
}
