import path from 'node:path';
import {
  describeBackgroundEnd,
  type BackgroundEndReason,
  type BackgroundRecord,
} from '../../common/backgroundEvents.js';
import type { SessionEvent } from '../../common/events.js';
import { clip } from '../../common/text.js';
import {
  listBackground,
  sessionsWithUnrecordedEnds,
  stopBackground,
  takeUnrecordedEnds,
} from '../../runner/background.js';
import { registerBackgroundRecorder } from '../../runner/backgroundEnd.js';
import { SessionLog } from '../log/sessionLog.js';
import { sessionDir, sessionsDir } from '../paths.js';
import { withWritableSession } from './lock.js';

/*
 * Issue #32: the log is the truth of a session's background commands. A command lives only in the Keel process
 * that started it (main/runner/background.ts); every end is recorded as background_exited: by the call that
 * read it (its result said so), else here, outside any call (`outsideCall`), and the projection tells the model
 * in a note: a stop of the session or of Keel killed it (recorded while the stopping host still holds the log,
 * or by its next turn), it ended by itself between turns (recorded when the turn ends or the next starts), or
 * the log says it started and this process never ran it (the Keel that did ended: `keel_ended`, on resume).
 */

/** Longest command text a recorded end carries (the note names the command, the start has it whole). */
const COMMAND_CHARS = 200;

/**
 * Records the ends of the session's background commands its log does not have: those this process saw end
 * (with their reasons), then those it never ran that the log still counts as running (`keel_ended`). Returns a
 * sentence per lost command for the host's notices.
 */
export function recordBackgroundEnds(log: SessionLog, onEvent: (event: SessionEvent) => void): string[] {
  const ends: {
    handle: string;
    command: string;
    reason: BackgroundEndReason;
    exitCode?: number | null;
    signal?: string | null;
  }[] = takeUnrecordedEnds(log.dir);
  const known = new Set(ends.map((end) => end.handle));
  const lost: string[] = [];
  for (const [handle, record] of readBackgroundRecords(log)) {
    if (record.end !== undefined || known.has(handle)) continue;
    if (listBackground(log.dir).some((entry) => entry.handle === handle)) continue;
    ends.push({ handle, command: record.command, reason: 'keel_ended' });
    lost.push(
      `background command ${handle} (${clip(record.command, 60)}) ended with the Keel that ran it; it is not started again`,
    );
  }
  for (const end of ends) {
    const result = log.append(
      {
        kind: 'background_exited',
        handle: end.handle,
        reason: end.reason,
        ...(end.exitCode !== undefined ? { exitCode: end.exitCode } : {}),
        ...(end.signal !== undefined ? { signal: end.signal } : {}),
        command: clip(end.command, COMMAND_CHARS),
        outsideCall: true,
      },
      { expectedLastSeq: log.lastSeq() },
    );
    if (result.ok) for (const event of result.events) onEvent(event);
  }
  return lost;
}

/** What the log says of each background command of the session, by handle, in the order they started. */
export function readBackgroundRecords(log: SessionLog): Map<string, BackgroundRecord> {
  const records = new Map<string, BackgroundRecord>();
  for (const event of log.readKinds(['background_started', 'background_exited'], { validate: false })) {
    if (event.kind === 'background_started') {
      records.set(event.handle, { handle: event.handle, command: event.command });
    } else if (event.kind === 'background_exited') {
      const record = records.get(event.handle);
      if (record === undefined || record.end !== undefined) continue;
      record.end = {
        reason: event.reason,
        ...(event.exitCode !== undefined ? { exitCode: event.exitCode } : {}),
        ...(event.signal !== undefined ? { signal: event.signal } : {}),
      };
    }
  }
  return records;
}

/** How long a stopping host waits to record the ends (a session another process holds is recorded later). */
const RECORD_WAIT_MS = 3000;

/**
 * Records, in each session of `home` that has some, the ends a stop left unrecorded (the host stopped a session
 * that ran no turn, or is quitting). A session whose log cannot be taken now (another process holds it) keeps
 * them in memory for this process's next turn of it; the wait is bounded, so a quit never hangs on it.
 */
export async function recordStoppedBackground(home: string, sessionId?: string): Promise<void> {
  const keys = sessionsWithUnrecordedEnds().filter((key) =>
    sessionId === undefined ? path.dirname(key) === sessionsDir(home) : key === sessionDir(home, sessionId),
  );
  const writes = keys.map((key) =>
    withWritableSession(home, path.basename(key), (log) =>
      Promise.resolve(recordBackgroundEnds(log, () => undefined)),
    ).catch(() => undefined),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(writes),
    new Promise((resolve) => (timer = setTimeout(resolve, RECORD_WAIT_MS))),
  ]);
  clearTimeout(timer);
}

/** Called by createHarness: `stopBackgroundCommands` (a process that ends: `keel`) records in this home's logs. */
export function recordBackgroundOnExit(home: string): void {
  registerBackgroundRecorder(home, () => recordStoppedBackground(home));
}

/** A background command as the terminal dock lists it (issue #32). */
export interface BackgroundCommandView {
  handle: string;
  command: string;
  /** The box's launcher process while this Keel runs it. */
  pid: number | null;
  state: 'running' | 'ended';
  exitCode: number | null;
  signal: string | null;
  /** How it ended, in words (absent while it runs). */
  ended?: string;
  /** Its latest output (redacted); empty for a command this Keel never ran. */
  tail: string;
}

/**
 * The session's background commands for a view: those this process runs or ran (live state and output tail),
 * then those the log knows that it never ran (how they ended as recorded, or that they were lost).
 */
export function backgroundCommandsOf(home: string, sessionId: string): BackgroundCommandView[] {
  const dir = sessionDir(home, sessionId);
  const live = listBackground(dir);
  let records = new Map<string, BackgroundRecord>();
  try {
    const log = SessionLog.open(home, sessionId, { write: false });
    try {
      records = readBackgroundRecords(log);
    } finally {
      log.close();
    }
  } catch {
    // A session without a log yet has no recorded commands; the live ones are still listed.
  }
  const views: BackgroundCommandView[] = live.map((entry) => ({
    handle: entry.handle,
    command: entry.command,
    pid: entry.pid,
    state: entry.exit === null ? 'running' : 'ended',
    exitCode: entry.exit?.exitCode ?? null,
    signal: entry.exit?.signal ?? null,
    ...(entry.exit === null
      ? {}
      : {
          ended: describeBackgroundEnd({
            reason: entry.exit.aborted ? 'stopped' : entry.exit.timedOut ? 'timed_out' : 'exited',
            exitCode: entry.exit.exitCode,
            signal: entry.exit.signal,
          }),
        }),
    tail: entry.tail,
  }));
  for (const record of records.values()) {
    if (live.some((entry) => entry.handle === record.handle)) continue;
    views.push({
      handle: record.handle,
      command: record.command,
      pid: null,
      state: 'ended',
      exitCode: record.end?.exitCode ?? null,
      signal: record.end?.signal ?? null,
      ended:
        record.end === undefined
          ? 'it ended with the Keel that ran it (Keel quit or crashed)'
          : describeBackgroundEnd(record.end),
      tail: '',
    });
  }
  return views;
}

/** The user's stop of one background command (the dock's Stop); false when this Keel does not run it. */
export async function stopBackgroundCommand(
  home: string,
  sessionId: string,
  handle: string,
): Promise<boolean> {
  const entry = listBackground(sessionDir(home, sessionId)).find((e) => e.handle === handle);
  if (entry === undefined || entry.exit !== null) return false;
  return (await stopBackground(sessionDir(home, sessionId), handle)) !== null;
}
