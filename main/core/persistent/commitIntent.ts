import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SessionEvent, type ChangedFile, type EventOf, type NewEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { blobId, hashFile } from './hashing.js';
import { readFileState } from './kept.js';
import { checkoutLocation, type PersistentConfig } from './config.js';

/**
 * The commit intent of a checkout: the events a commit owes the log, kept in the checkout's state folder
 * (fsynced) from the moment its files are in the backing folder until those events are appended. A process
 * killed in between (issue 20, item 6) left the user's folder changed with no persistent_commit saying so;
 * the next open of the session finds the intent and appends what is still missing, each file checked
 * against the bytes the folder holds now. The checkout's own state already counts the commit as done, so
 * nothing is ever written twice.
 */

const INTENT_FILE = 'commit-intent.json';

/** The files a commit is writing (commit.ts's PlannedFile): written before the first of them. */
const Applying = z.object({
  /** The patch artifact of the commit being written (its persistent_commit names it). */
  diffArtifact: z.string().min(1).optional(),
  files: z.array(
    z.object({ path: z.string().min(1), preHash: z.string().nullable(), post: z.string().nullable() }),
  ),
});

const Intent = z.object({
  version: z.literal(1),
  /** The backing folder the files were written into (paths of persistent_commit events are relative to it). */
  backing: z.string().min(1),
  events: z.array(z.record(z.string(), z.unknown())),
  /**
   * Set while the files are still being written (no events yet): a process killed then left some written and
   * some not; the next open finishes the commit (turnCheckouts.ts, finishInterruptedCommits) before anything else.
   */
  applying: Applying.optional(),
});

/** What an intent in the applying phase holds. */
export type ApplyingCommit = z.infer<typeof Applying>;

/**
 * Where the intent of a dir's commits lives: the checkout's state folder, or the session's folder for a
 * --commit direct session (`checkout` false: its granted protected files are written into the project itself).
 */
export function commitIntentFile(dataDir: string, dir: string, checkout = true): string {
  return checkout
    ? path.join(checkoutLocation(dataDir, dir).stateDir, INTENT_FILE)
    : path.join(dataDir, INTENT_FILE);
}

/** The dir name of a --commit direct session's commits (their folder is the project). */
export const DIRECT_DIR = 'project';

/** The intent files a session may hold: one per Persistent Dir, or the direct session's one. */
function intentFiles(dataDir: string, config: PersistentConfig | undefined): { dir: string; file: string }[] {
  if (!config) return [{ dir: DIRECT_DIR, file: commitIntentFile(dataDir, DIRECT_DIR, false) }];
  return config.dirs.map((dir) => ({ dir: dir.name, file: commitIntentFile(dataDir, dir.name) }));
}

/** Writes the intent durably (temp + fsync + rename + folder fsync in the private state folder). */
export function writeCommitIntent(
  file: string,
  backing: string,
  events: readonly NewEvent[],
  applying?: ApplyingCommit,
): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temp, 'w');
  try {
    fs.writeSync(fd, JSON.stringify({ version: 1, backing, events, ...(applying ? { applying } : {}) }));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  const folder = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(folder);
  } finally {
    fs.closeSync(folder);
  }
}

/** The commit a dir's intent says was being written when the process died, or undefined (none, or past it). */
export function readApplyingIntent(file: string): { backing: string; applying: ApplyingCommit } | undefined {
  try {
    const parsed = Intent.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success && parsed.data.applying
      ? { backing: parsed.data.backing, applying: parsed.data.applying }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes the temp files a killed write left beside the files of `applying` (`.<name>.<random>.keel-tmp`,
 * main/sandbox/confinedWrite.ts): the folder is to hold the commit's files and nothing of its writing.
 */
export function removeWriteLeftovers(backing: string, applying: ApplyingCommit): void {
  for (const file of applying.files) {
    const folder = path.join(backing, path.dirname(file.path));
    const stem = `.${path.basename(file.path)}.`;
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.startsWith(stem) && name.endsWith('.keel-tmp'))
        fs.rmSync(path.join(folder, name), { force: true });
    }
  }
}

/** The files of an interrupted commit whose bytes in the folder are the planned ones (blob id; deleted: absent). */
export function landedFiles(backing: string, applying: ApplyingCommit): ChangedFile[] {
  const landed: ChangedFile[] = [];
  for (const file of applying.files) {
    const state = readFileState(path.join(backing, file.path));
    if (file.post === null) {
      if (state === undefined) landed.push({ path: file.path, preHash: file.preHash, postHash: null });
      continue;
    }
    if (state === undefined || state === 'too-large') continue;
    const format = file.post.length === 64 ? 'sha256' : 'sha1';
    if (blobId(format, state.bytes) === file.post)
      landed.push({ path: file.path, preHash: file.preHash, postHash: state.sha256 });
  }
  return landed;
}

/** Whether any dir of the session holds a commit intent (read without the session's lease). */
export function hasCommitIntent(dataDir: string, config: PersistentConfig | undefined): boolean {
  return intentFiles(dataDir, config).some(({ file }) => fs.existsSync(file));
}

/** The intent's events are all in the log: it is removed. */
export function clearCommitIntent(file: string): void {
  fs.rmSync(file, { force: true });
}

/** An event of the intent is in the log already (the process died after the append, before the clear). */
function alreadyLogged(log: SessionLog, event: NewEvent): boolean {
  if (event.kind === 'persistent_commit') {
    return log
      .readKinds(['persistent_commit'])
      .some(
        (e) => e.kind === 'persistent_commit' && e.dir === event.dir && e.diffArtifact === event.diffArtifact,
      );
  }
  if (event.kind === 'approval_request') {
    return log
      .readKinds(['approval_request'])
      .some((e) => e.kind === 'approval_request' && e.toolCallId === event.toolCallId);
  }
  return false;
}

function parseEvents(raw: readonly Record<string, unknown>[]): NewEvent[] | undefined {
  const events: NewEvent[] = [];
  for (const candidate of raw) {
    // The stored events have no seq and time yet; checked with placeholders, kept without them.
    const parsed = SessionEvent.safeParse({ ...candidate, seq: 1, at: new Date(0).toISOString() });
    if (!parsed.success) return undefined;
    const { seq: _seq, at: _at, ...event } = parsed.data;
    events.push(event);
  }
  return events;
}

/**
 * Completes every commit a crash interrupted between writing the backing folder and appending its events:
 * appends those still missing, a persistent_commit carrying only the files whose bytes in the folder are
 * the ones it wrote (sha256), and returns one notice per dir naming what was recorded and what was not.
 */
export async function recoverCommitIntents(
  log: SessionLog,
  config: PersistentConfig | undefined,
  onEvent?: (event: SessionEvent) => void,
): Promise<string[]> {
  const notices: string[] = [];
  for (const { dir, file } of intentFiles(log.dir, config)) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    let parsed: z.infer<typeof Intent> | undefined;
    try {
      const result = Intent.safeParse(JSON.parse(text));
      parsed = result.success ? result.data : undefined;
    } catch {
      parsed = undefined;
    }
    // Still being written: finishInterruptedCommits finishes it (run before this), not this function.
    if (parsed?.applying) continue;
    const events = parsed ? parseEvents(parsed.events) : undefined;
    if (!parsed || !events) {
      // A torn intent: its rename never happened, so its commit's files were not written after it either.
      fs.renameSync(file, `${file}.damaged`);
      notices.push(`${dir}: an unreadable commit intent was moved aside (${file}.damaged)`);
      continue;
    }
    const recorded: string[] = [];
    const changedSince: string[] = [];
    const missing: NewEvent[] = [];
    for (const event of events) {
      if (alreadyLogged(log, event)) continue;
      if (event.kind !== 'persistent_commit') {
        missing.push(event);
        continue;
      }
      const landed: EventOf<'persistent_commit'>['files'] = [];
      for (const changed of event.files) {
        const now = await hashFile(path.join(parsed.backing, ...changed.path.split('/')));
        if (now === changed.postHash) {
          landed.push(changed);
          recorded.push(changed.path);
        } else {
          changedSince.push(changed.path);
        }
      }
      if (landed.length > 0 || event.files.length === 0) missing.push({ ...event, files: landed });
    }
    if (missing.length > 0) {
      const result = log.append(missing, { expectedLastSeq: log.lastSeq() });
      if (result.ok) for (const appended of result.events) onEvent?.(appended);
    }
    clearCommitIntent(file);
    if (missing.length === 0 && changedSince.length === 0) continue;
    notices.push(
      `${dir}: a commit interrupted by a crash was recorded` +
        (recorded.length > 0 ? ` (${recorded.join(', ')})` : '') +
        (changedSince.length > 0
          ? `; changed in the folder since, not recorded as this commit's: ${changedSince.join(', ')}`
          : ''),
    );
  }
  return notices;
}
