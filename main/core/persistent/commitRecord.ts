import fs from 'node:fs';
import path from 'node:path';
import type { ChangedFile, EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import { HELD_BACK_TOOL } from '../approvals/state.js';
import { importMarkOf, isImportedSeq } from '../log/imported.js';
import { asDiskFull } from '../log/logErrors.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { DirectHeldFile } from './types.js';
import type { HeldFile } from './types.js';
import type { CommitReport, CommittedFile, PersistentDirSpec } from './types.js';
import { crashPoint } from '../crash.js';
import { clearCommitIntent, writeCommitIntent } from './commitIntent.js';
import type { PersistentConfig } from './config.js';

/** The dirs named (each must exist; read-only ones only when allowed), or those `byDefault` picks. */
export function chooseDirs(
  config: PersistentConfig,
  names: readonly string[] | undefined,
  byDefault: (dir: PersistentDirSpec) => boolean,
  allowReadOnly = false,
): PersistentDirSpec[] {
  if (names === undefined) {
    return config.dirs.filter(
      (dir) => byDefault(dir) && (allowReadOnly || !config.readOnly.includes(dir.name)),
    );
  }
  return names.map((name) => {
    const dir = config.dirs.find((d) => d.name === name);
    if (!dir)
      throw new Error(
        `no Persistent Dir "${name}" in this session (it has: ${config.dirs.map((d) => d.name).join(', ')})`,
      );
    if (!allowReadOnly && config.readOnly.includes(name)) {
      throw new Error(
        `Persistent Dir "${name}" is read-only for this session; its changes are never committed`,
      );
    }
    return dir;
  });
}

/** A commit report as the trace keeps it (counts, not file lists). */
export function summarize(reports: readonly CommitReport[]): unknown[] {
  return reports.map((r) =>
    r.status === 'committed'
      ? { dir: r.dir, status: r.status, files: r.files.length }
      : r.status === 'conflict'
        ? { dir: r.dir, status: r.status, conflicts: r.conflicts }
        : { dir: r.dir, status: r.status },
  );
}

/** Writes one trace record of checkout work; a failed write never fails the work it describes. */
export function trace(
  log: SessionLog,
  turn: number | undefined,
  stage: string,
  started: number,
  detail: unknown,
): void {
  try {
    log.appendTrace({
      // Without a turn (Apply after review, keel commit) the work belongs to the turn that made it: the last.
      turn: turn ?? log.countOfKind('user_message'),
      stage,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      detail,
    });
  } catch {
    // Trace is observability only; a failed trace write never fails a commit.
  }
}

/**
 * Runs a commit's writes into `folder`. A commit that fails (a full disk, in the folder or in Keel's own
 * copies) leaves its intent behind, so the next open runs it again; a full disk is told with the file (a
 * confined write names it relative to the folder, `("a.txt")`) and the session.
 */
export async function withFolderNamed<T>(
  log: SessionLog,
  intent: string,
  folder: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!fs.existsSync(intent)) {
      try {
        writeCommitIntent(intent, folder, [], { files: [] });
      } catch {
        // No room even for that: an auto dir's turn-pending mark still has the next turn commit it.
      }
    }
    const named = /\("([^"]+)"\)/.exec(error instanceof Error ? error.message : '')?.[1];
    // Unnamed, it is the folder or Keel's own copies (checkout, history store): whichever disk is full.
    const file = named !== undefined ? path.join(folder, named) : nearlyFull(folder) ? folder : log.dir;
    throw asDiskFull(error, file, { sessionId: log.id });
  }
}

/** Whether the disk holding `folder` has (almost) no space left. */
function nearlyFull(folder: string): boolean {
  try {
    const stats = fs.statfsSync(folder);
    return stats.bavail * stats.bsize < 1024 * 1024;
  } catch {
    return false;
  }
}

/** A committed file as the log records it: hashes, and the modes of the sides whose bytes were kept. */
export function changedFileOf(file: CommittedFile): ChangedFile {
  return {
    path: file.path,
    preHash: file.preHash,
    postHash: file.postHash,
    ...(file.preMode !== undefined ? { preMode: file.preMode } : {}),
    ...(file.postMode !== undefined ? { postMode: file.postMode } : {}),
  };
}

/** The approval_granted events made here (not imported), of any scope. */
export function grantsMadeHere(events: readonly SessionEvent[]): EventOf<'approval_granted'>[] {
  const first = events[0];
  const mark = first?.kind === 'session_created' ? importMarkOf(first) : undefined;
  return events.filter(
    (event): event is EventOf<'approval_granted'> =>
      event.kind === 'approval_granted' && !isImportedSeq(mark, event.seq),
  );
}

/** What approvedHeld reads: session_created (the import mark), the approval events and the commits. */
export function heldEvents(log: SessionLog): SessionEvent[] {
  const created = log.read({ fromSeq: 1, limit: 1, validate: false });
  const kinds = log.readKinds(['approval_request', 'approval_granted', 'persistent_commit'], {
    validate: false,
  });
  return [...created, ...kinds];
}

/** The project folder a session's session_created names (a direct session works in it). */
export function projectFolderOf(log: SessionLog): string | undefined {
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  return created?.kind === 'session_created' ? created.projectFolder : undefined;
}

/** What a held-back approval request carries in its `arguments` (`direct`: a --commit direct session's). */
export type HeldRequest = { dir: string; patchArtifact: string; files: HeldFile[]; direct?: false };
export type DirectHeldRequest = { dir: string; patchArtifact: string; files: DirectHeldFile[]; direct: true };
/** A checkout's nested repositories' files (nestedRepos.ts), written like a direct session's once granted. */
export type NestedHeldRequest = { dir: string; patchArtifact: string; files: DirectHeldFile[]; nested: true };
export type AnyHeldRequest = HeldRequest | DirectHeldRequest | NestedHeldRequest;

/**
 * The held-back requests of `dir` that were granted and not yet written: no persistent_commit naming the
 * request's patch came after the grant. Requests from an imported file never count (their grant is no grant).
 */
export function approvedHeld(events: readonly SessionEvent[], dir: string, direct: false): HeldRequest[];
export function approvedHeld(events: readonly SessionEvent[], dir: string, direct: true): DirectHeldRequest[];
export function approvedHeld(
  events: readonly SessionEvent[],
  dir: string,
  direct: 'nested',
): NestedHeldRequest[];
export function approvedHeld(
  events: readonly SessionEvent[],
  dir: string,
  direct: boolean | 'nested',
): AnyHeldRequest[] {
  const grantedAt = new Map<number, number>();
  for (const grant of grantsMadeHere(events)) grantedAt.set(grant.requestSeq, grant.seq);
  const found: AnyHeldRequest[] = [];
  for (const event of events) {
    if (event.kind !== 'approval_request' || event.tool !== HELD_BACK_TOOL) continue;
    const granted = grantedAt.get(event.seq);
    if (granted === undefined) continue;
    const held = JSON.parse(event.arguments) as AnyHeldRequest;
    const kind = 'nested' in held ? 'nested' : 'direct' in held && held.direct === true;
    if (held.dir !== dir || kind !== direct) continue;
    const written = events.some(
      (later) =>
        later.seq > granted &&
        later.kind === 'persistent_commit' &&
        later.diffArtifact === held.patchArtifact,
    );
    if (!written) found.push(held);
  }
  return found;
}

/**
 * Appends the events of a commit whose files are already in the backing folder. The commit intent holds
 * them first, so a process killed before the append leaves what the next open needs to record the commit
 * (commitIntent.ts); the `after_commit_before_event` crash point dies in that window.
 */
export function recordCommitted(
  log: SessionLog,
  intent: string,
  backing: string,
  onEvent: ((event: SessionEvent) => void) | undefined,
  events: readonly NewEvent[],
): void {
  if (events.length === 0) return;
  writeCommitIntent(intent, backing, events);
  crashPoint('after_commit_before_event');
  const result = log.append(events, { expectedLastSeq: log.lastSeq() });
  if (!result.ok) return; // the intent stays: the next open records them
  for (const appended of result.events) onEvent?.(appended);
  clearCommitIntent(intent);
}
