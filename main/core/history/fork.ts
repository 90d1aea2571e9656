// Forking a session: a new session whose log starts with a copy of another's events up to a point. The one
// implementation the CLI (`keel fork`) and the app ("Fork from here") call. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { IMPORT_METADATA_KEY, importMarkOf, isImportedSeq } from '../log/imported.js';
import { SessionLog } from '../log/sessionLog.js';
import { rewindProblem } from '../projection/rewind.js';
import { readPersistentConfig, writePersistentConfig } from '../persistent/config.js';
import { artifactsDir, eventsFile, historyStoreOf, makeSessionFolders, sessionAreaDir } from '../paths.js';
import { RevertTargetError, type ChangeEvent } from './changes.js';
import { forkBaseOf, writeForkBase } from '../persistent/forkBase.js';

/**
 * What a fork made: the new session's id and the parent's seq its log was copied through; `notice` when its
 * folder cannot be shown as at that point (a --commit direct session works on the project itself).
 */
export type ForkReport = { id: string; parentId: string; at: number; events: number; notice?: string };

/**
 * Makes a new session whose log is the parent's events 1..`at` (default: all), copied as they are but for
 * session_created, which names the new id and `forkedFrom`. It keeps the parent's pin (model, window,
 * policy) and Persistent Dirs (its own checkouts show the folders as at `at`: the parent's later recorded
 * changes taken out three-way, after every reset, forkBase.ts); the
 * parent's artifacts and history store are linked in (Keel writes them once), its private files copied. The
 * parent is only read. `at` must be the last event, or one the conversation can go back to (just before a
 * user message); else a RevertTargetError names those.
 */
export function forkSession(home: string, parentId: string, options: { at?: number } = {}): ForkReport {
  const parent = SessionLog.open(home, parentId);
  let events: SessionEvent[];
  let dataDir: string;
  let changes: SessionEvent[];
  try {
    // Read once and not re-validated: a local log's rows were validated by zod when appended or imported, and
    // stored as zod's output, so decoding them gives the events zod gave (the fork's projection is unchanged).
    const all = parent.read({ validate: false });
    const last = all.at(-1)?.seq ?? 0;
    const at = options.at ?? last;
    events = all.filter((event) => event.seq <= at);
    dataDir = parent.dir;
    changes = parent.readKinds(['persistent_commit', 'changes_reverted']);
    if (at !== last) {
      const problem = rewindProblem(all, at);
      if (problem !== undefined) throw new RevertTargetError(`cannot fork at ${at}: ${problem}`);
    }
  } finally {
    parent.close();
  }
  const at = events.at(-1)?.seq ?? 0;
  const created = events[0] as EventOf<'session_created'>;
  const mark = importMarkOf(created);
  const first: EventOf<'session_created'> = {
    ...created,
    forkedFrom: { sessionId: parentId, seq: at },
    // A fork of an imported session is imported too (its grants inactive, its endpoint and folder as
    // unconfirmed), but only the copied events came with the file: the fork's own, from at + 1, are made here,
    // so a grant or a `keel model` confirming the endpoint counts at once.
    ...(mark
      ? {
          metadata: {
            ...created.metadata,
            [IMPORT_METADATA_KEY]: { ...mark, through: Math.min(mark.through, at) },
          },
        }
      : {}),
  };
  const config = readPersistentConfig(dataDir);
  // The changes made after `at` are taken out of the fork's checkouts (forkBase.ts), never out of the project;
  // those that came with an imported file are not (it carries no bytes, and they never reached this folder).
  const base: ChangeEvent[] = forkBaseOf(dataDir, changes, at).filter(
    (change) => !isImportedSeq(mark, change.seq),
  );
  // The rows after session_created are copied in SQLite from the parent's file (logCopy.ts), in the one
  // transaction that writes the fork's own session_created: a crash leaves the fork whole or absent.
  const id = SessionLog.importEvents(home, [first, ...events.slice(1)], {
    copyFrom: eventsFile(dataDir),
    files: (dir) => {
      makeSessionFolders(dir);
      if (config) writePersistentConfig(dir, config);
      if (config) writeForkBase(dir, base);
      linkTree(artifactsDir(dataDir), artifactsDir(dir));
      linkTree(historyStoreOf(dataDir), historyStoreOf(dir));
      copyTree(sessionAreaDir(dataDir), sessionAreaDir(dir));
    },
  });
  const notice =
    config || base.length === 0
      ? undefined
      : `the session works on the project folder directly (--commit direct): the fork does too, as it is now, ` +
        `with the ${base.length} later changes of the parent in it`;
  return { id, parentId, at, events: events.length, ...(notice ? { notice } : {}) };
}

/** Hard-links every regular file under `from` into `to` (a copy where links cannot be made). */
function linkTree(from: string, to: string): void {
  walk(from, to, (source, target) => {
    try {
      fs.linkSync(source, target);
    } catch {
      fs.copyFileSync(source, target);
    }
  });
}

/** Copies every regular file under `from` into `to`: the fork's private files are its own to change. */
function copyTree(from: string, to: string): void {
  walk(from, to, (source, target) => fs.copyFileSync(source, target));
}

/** Calls `each` for every regular file under `from` (links and other kinds skipped), making folders in `to`. */
function walk(from: string, to: string, each: (source: string, target: string) => void): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(from, { withFileTypes: true });
  } catch {
    return;
  }
  fs.mkdirSync(to, { recursive: true });
  for (const entry of entries) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) walk(source, target, each);
    else if (entry.isFile() && !fs.existsSync(target)) each(source, target);
  }
}
