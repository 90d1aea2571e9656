import fs from 'node:fs';
import type { IndexUpdate, OpenSessionIndexOptions, SessionIndex } from '../../store/sessionIndex.js';
import type { NewSessionRow } from '../../store/indexRows.js';
import { assertNotBeingCreated } from './creatingMark.js';
import { SessionLockedError, SessionNotFoundError } from './logErrors.js';
import { toIndexUpdate, toSessionRow } from './logRows.js';
import { isValidSessionId } from './sessionId.js';
import { SessionLog } from './sessionLog.js';
import { indexNotice, openIndexWithNotice } from './indexNotice.js';
import { eventsFile, sessionDir, sessionsDir } from '../paths.js';

/*
 * index.sqlite is derived from the session logs, so it is rebuilt from them: every open of the index for
 * listing or lookup (`openSessionIndex`) re-registers the sessions found on disk that have no row, be it
 * because the index was deleted, set aside as damaged (`SessionIndex.open`), or lost the row of a create
 * killed between its session_created commit and its registration.
 */

/** From this many sessions to re-register, progress is reported. */
const PROGRESS_FROM = 50;
/** Sessions per index transaction. */
const BATCH = 100;
/** Events read at once from one log. */
const PAGE = 5_000;

/**
 * Opens the index (a damaged one moved aside, with a notice), re-registers the sessions it lacks and catches
 * up the rows of sessions whose writer was killed.
 */
export function openSessionIndex(home: string, options: OpenSessionIndexOptions = {}): SessionIndex {
  const index = openIndexWithNotice(home, options);
  try {
    reregisterMissing(home, index);
    catchUpAbandoned(home, index);
  } catch (error) {
    index.close();
    throw error;
  }
  return index;
}

/**
 * Registers every `<home>/sessions/<id>` with an events.sqlite whose session_created committed and which
 * has no index row, from its own log (row, counts, status, search text), a batch of sessions per index
 * transaction. A session still being created by a live process is left to it (a dead creator's mark is
 * cleared); a log that cannot be read is named in one notice and left as it is. Returns how many were
 * registered.
 */
export function reregisterMissing(home: string, index: SessionIndex): number {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir(home));
  } catch {
    return 0;
  }
  const known = index.ids();
  const missing = names.filter(
    (id) => !known.has(id) && isValidSessionId(id) && fs.existsSync(eventsFile(sessionDir(home, id))),
  );
  if (missing.length === 0) return 0;
  const loud = missing.length >= PROGRESS_FROM;
  const unreadable: string[] = [];
  let registered = 0;
  // At most about ten progress lines, however many sessions.
  const every = BATCH * Math.max(1, Math.ceil(missing.length / BATCH / 10));
  for (let start = 0; start < missing.length; start += BATCH) {
    if (loud && start % every === 0) {
      indexNotice(`re-registering sessions from their logs: ${start}/${missing.length}`);
    }
    const entries: IndexEntry[] = [];
    for (const id of missing.slice(start, start + BATCH)) {
      try {
        const entry = indexEntryOf(home, id, index);
        if (entry !== null) entries.push(entry);
      } catch (error) {
        unreadable.push(`${id} (${(error as Error).message})`);
      }
    }
    registered += index.restoreSessions(entries);
  }
  if (loud) indexNotice(`re-registered ${registered} sessions from their logs`);
  if (unreadable.length > 0) {
    const named = unreadable.slice(0, 5).join('; ');
    indexNotice(`${unreadable.length} session log(s) could not be read and are not listed: ${named}`);
  }
  return registered;
}

type IndexEntry = { row: NewSessionRow; updates: IndexUpdate[] };

/** What the index needs of one log, read without its lease; null when it is not (yet) a session. */
function indexEntryOf(home: string, id: string, index: SessionIndex): IndexEntry | null {
  try {
    assertNotBeingCreated(sessionDir(home, id), id);
  } catch (error) {
    if (error instanceof SessionLockedError) return null; // its creator is registering it
    throw error;
  }
  let log: SessionLog;
  try {
    log = SessionLog.open(home, id, { sharedIndex: index });
  } catch (error) {
    if (error instanceof SessionNotFoundError) return null; // a create that never committed
    throw error;
  }
  try {
    const created = log.read({ limit: 1 })[0];
    if (created?.kind !== 'session_created') return null;
    const status = log.indexStatus();
    const updates: IndexUpdate[] = [];
    for (let from = 1; ; from += PAGE) {
      const page = log.read({ fromSeq: from, limit: PAGE, validate: false });
      if (page.length === 0) break;
      updates.push(toIndexUpdate(page, status));
    }
    return { row: toSessionRow(created, id), updates };
  } finally {
    log.close();
  }
}

/**
 * A writer indexes a turn's events when the turn ends (indexFollower.ts); one killed mid-turn leaves its row
 * behind its log, with its lease. Such rows are caught up here from their logs by seq watermark (counts, time,
 * search text; the status stays, so a killed `running` session still lists as interrupted), each page applied
 * only if the row has not moved meanwhile (a new writer's own open catches it up too). Returns how many rows
 * moved; a log that cannot be read is named in a notice and left to its next writer.
 */
export function catchUpAbandoned(home: string, index: SessionIndex): number {
  let moved = 0;
  const unreadable: string[] = [];
  for (const id of index.abandonedLeases()) {
    const position = index.position(id);
    if (!position) continue;
    try {
      const log = SessionLog.open(home, id, { sharedIndex: index });
      try {
        let at = position.lastSeq;
        for (let from = at + 1; from <= log.lastSeq(); from += PAGE) {
          const page = log.read({ fromSeq: from, limit: PAGE, validate: false });
          if (page.length === 0) break;
          const update = toIndexUpdate(page, position.status);
          if (!index.recordCatchUp(id, at, update)) break;
          at = update.lastSeq;
        }
        if (at > position.lastSeq) moved += 1;
      } finally {
        log.close();
      }
    } catch (error) {
      unreadable.push(`${id} (${(error as Error).message})`);
    }
  }
  if (unreadable.length > 0) {
    indexNotice(
      `${unreadable.length} session log(s) could not be read to catch the index up: ${unreadable.join('; ')}`,
    );
  }
  return moved;
}
