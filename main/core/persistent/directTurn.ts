// A `--commit direct` session's turn around its folder (no checkout: the tools write the project itself): granted
// held files written and a killed segment's change recorded when a turn starts, the folder photographed just
// before the first tool that can change it, its protected paths put back and its change recorded when the
// segment stops. turnCheckouts.ts calls these for a session without Persistent Dirs; see README.md.
import fs from 'node:fs';
import path from 'node:path';
import type { SessionEvent } from '../../common/events.js';
import { HELD_BACK_TOOL } from '../approvals/state.js';
import type { SessionLog } from '../log/sessionLog.js';
import {
  applyDirect,
  holdDirect,
  protectedSnapshotSchema,
  snapshotProtected,
  updatedProtected,
  type ProtectedSnapshot,
} from './directHeld.js';
import * as directChanges from './directChanges.js';
import { watchedSince, type WatchMark } from './backingWatch.js';
import { redactPatchFile } from '../../sandbox/redactFile.js';
import { crashPoint } from '../crash.js';
import { DIRECT_DIR, commitIntentFile, writeCommitIntent } from './commitIntent.js';
import { readPersistentConfig } from './config.js';
import { historyStoreOf } from '../paths.js';
import {
  approvedHeld,
  heldEvents,
  projectFolderOf,
  recordCommitted,
  withFolderNamed,
  type DirectHeldRequest,
} from './commitRecord.js';

/** A direct session's photograph of its folder's protected paths, taken when a segment begins changing files. */
const DIRECT_SNAPSHOT = 'protected-snapshot.json';
/**
 * The last segment's end photograph and the watch mark taken before it (while its watcher lives, the next start
 * photographs again only what changed since: the put-back's own writes come after that mark).
 */
const LAST_PHOTO = 'protected-last.json';
type Photo = ProtectedSnapshot & { mark?: WatchMark };

/**
 * The paths changed in `root` since `mark` as the watcher saw them, and its barrier's mark, when it can vouch for
 * them as for a segment's end (directChanges.ts `segmentEndPaths`: close writes seen, bwrap, no second name).
 */
async function vouchedSince(root: string, mark: WatchMark | undefined) {
  const watched = mark === undefined ? undefined : await watchedSince(root, mark);
  const paths = watched === undefined ? undefined : await directChanges.segmentEndPaths(root, watched.paths);
  return watched === undefined ? undefined : { paths, mark: watched.mark };
}

/** A photograph kept in the session's folder, or undefined when there is none or it does not read as one. */
function readPhoto(file: string): Photo | undefined {
  try {
    const parsed = protectedSnapshotSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the last start photograph was the last end one brought up to date (tests). */
export let lastStartPhotoChanged = false;

/**
 * The start photograph: the last end one brought up to date from what changed since (the user's edits between turns,
 * the put-back) while the watcher vouches for it; else the whole walk.
 */
async function startPhoto(log: SessionLog, root: string): Promise<ProtectedSnapshot> {
  const file = path.join(log.dir, LAST_PHOTO);
  const last = readPhoto(file);
  fs.rmSync(file, { force: true });
  const topGit = fs.existsSync(path.join(root, '.git'));
  const since = last?.topGit === topGit ? await vouchedSince(root, last.mark) : undefined;
  const updated =
    last !== undefined && since?.paths !== undefined ? updatedProtected(root, last, since.paths) : undefined;
  lastStartPhotoChanged = updated !== undefined;
  return updated === undefined ? snapshotProtected(root) : { ...updated, topGit };
}

/**
 * A direct session's turn starts: held files granted since are written (a persistent_commit naming the
 * request's patch) and a killed turn's change recorded. This turn's own start is taken later, by
 * `beginDirectChanges`, just before its first tool that can change files.
 */
export async function prepareDirect(log: SessionLog, onEvent: ((event: SessionEvent) => void) | undefined) {
  const root = projectFolderOf(log);
  if (root === undefined || !fs.existsSync(root)) return;
  await applyGrantedDirect(log, root, onEvent);
  // A killed segment never put its protected paths back: do it first, so no git Keel runs below sees a .git
  // (config, filters, hooks) that a command planted (test/attacks/directCrashGitConfig.test.ts).
  const stale = path.join(log.dir, DIRECT_SNAPSHOT);
  if (fs.existsSync(stale)) await holdDirectProtected(log, root, stale, onEvent);
  await recordDirectChanges(log, root, onEvent);
}

/**
 * The start of a direct session's turn (segment) as far as its folder goes: the folder's tree and its
 * protected paths photographed. Taken just before the segment's first tool that can change files (the turn
 * host's `beforeChanges`) or MCP server start, not when the turn starts: a segment that changes nothing through
 * tools runs no git (`finishDirect` then finds no start), and the user's edits made before that tool are
 * not the turn's. A no-op for a session with Persistent Dirs (its checkouts are reset and committed instead).
 */
export async function beginDirectChanges(log: SessionLog): Promise<void> {
  if (readPersistentConfig(log.dir)) return;
  const root = projectFolderOf(log);
  if (root === undefined || !fs.existsSync(root)) return;
  const snapshot = path.join(log.dir, DIRECT_SNAPSHOT);
  // Begun already in this segment (a second host of it): its photograph is the segment's start.
  if (fs.existsSync(snapshot)) return;
  const stateDir = directChanges.directStateDir(log.dir);
  await directChanges.startDirectTurn(stateDir, root);
  // The start tree's watch mark (taken before it, so before this photograph too): the segment's end photographs again
  // only what changed after it, where the watcher can vouch for the segment (holdDirectProtected).
  const mark = directChanges.lastTreeMark(stateDir);
  const photo = await startPhoto(log, root);
  // Whole or not at all: a Keel killed while writing it must not leave half a photograph (holdDirectProtected).
  fs.writeFileSync(`${snapshot}.tmp`, JSON.stringify({ ...photo, ...(mark ? { mark } : {}) }));
  fs.renameSync(`${snapshot}.tmp`, snapshot);
}

/**
 * Writes a direct session's granted held files into its folder, each request's plan in the commit intent
 * before its first file (a kill while writing is finished on the next open), then its persistent_commit.
 */
export async function applyGrantedDirect(
  log: SessionLog,
  root: string,
  onEvent: ((event: SessionEvent) => void) | undefined,
): Promise<void> {
  const intent = commitIntentFile(log.dir, DIRECT_DIR, false);
  for (const request of approvedHeld(heldEvents(log), DIRECT_DIR, true)) {
    const files = request.files.map((file) => ({
      path: file.path,
      preHash: file.beforeSha256 ?? null,
      post: file.after?.kind === 'file' ? file.after.sha256 : null,
    }));
    writeCommitIntent(intent, root, [], { diffArtifact: request.patchArtifact, files });
    const applied = await withFolderNamed(log, intent, root, () =>
      applyDirect(root, request.files, log.artifactsDir, () => crashPoint('during_commit_files')),
    );
    recordCommitted(log, intent, root, onEvent, [
      {
        kind: 'persistent_commit',
        dir: DIRECT_DIR,
        files: applied.files.map(({ path, preHash, postHash }) => ({ path, preHash, postHash })),
        diffArtifact: request.patchArtifact,
      },
    ]);
  }
}

/** Records what any tool changed since the turn's start record as a `persistent_commit` (directChanges.ts). */
async function recordDirectChanges(
  log: SessionLog,
  root: string,
  onEvent: ((event: SessionEvent) => void) | undefined,
): Promise<void> {
  const stateDir = directChanges.directStateDir(log.dir);
  const patchArtifact = `commits/${log.lastSeq() + 1}-${DIRECT_DIR}-${Date.now().toString(36)}-changes.patch`;
  const patchFile = path.join(log.artifactsDir, patchArtifact);
  const change = await directChanges.directTurnChanges(stateDir, root, historyStoreOf(log.dir), patchFile);
  if (change !== undefined && change.files.length > 0) {
    await redactPatchFile(patchFile, root);
    recordCommitted(log, commitIntentFile(log.dir, DIRECT_DIR, false), root, onEvent, [
      { kind: 'persistent_commit', dir: DIRECT_DIR, files: change.files, diffArtifact: patchArtifact },
    ]);
  }
  directChanges.clearDirectTurn(stateDir);
}

/**
 * A direct session's turn stops: every protected path it changed in the folder is put back and asked for
 * with one approval_request, as a checkout's commit does (granted, the next turn's start writes them).
 */
export async function finishDirect(log: SessionLog, onEvent: ((event: SessionEvent) => void) | undefined) {
  const root = projectFolderOf(log);
  if (root === undefined || !fs.existsSync(root)) return;
  const file = path.join(log.dir, DIRECT_SNAPSHOT);
  if (fs.existsSync(file)) await holdDirectProtected(log, root, file, onEvent);
  // After the protected paths were put back: what remains is the turn's change to record.
  await recordDirectChanges(log, root, onEvent);
}

async function holdDirectProtected(
  log: SessionLog,
  root: string,
  file: string,
  onEvent: ((event: SessionEvent) => void) | undefined,
): Promise<void> {
  // Without it nothing can say what the turn changed under a protected name: no silent skip of the put-back.
  const before = readPhoto(file);
  if (before === undefined)
    throw new Error(
      `the photograph of the protected files taken when this turn began changing ${root} (${file}) cannot be read: ` +
        'check the protected files (.git, .vscode, .envrc...) by hand, then remove that file',
    );
  fs.rmSync(file, { force: true });
  const stem = `commits/${log.lastSeq() + 1}-${DIRECT_DIR}-${Date.now().toString(36)}`;
  const since = await vouchedSince(root, before.mark);
  const held = await holdDirect(root, before, {
    artifactsDir: log.artifactsDir,
    artifactStem: stem,
    ...(since?.paths === undefined ? {} : { changed: since.paths }),
  });
  // Kept for the next start, with the mark of the barrier before it was taken (the whole walk, too, came after it).
  if (since !== undefined) {
    const last = path.join(log.dir, LAST_PHOTO);
    fs.writeFileSync(`${last}.tmp`, JSON.stringify({ ...held.after, mark: since.mark }));
    fs.renameSync(`${last}.tmp`, last);
  }
  if (held.diff === '') return;
  const patchArtifact = `${stem}.patch`;
  fs.mkdirSync(path.dirname(path.join(log.artifactsDir, patchArtifact)), { recursive: true });
  fs.writeFileSync(path.join(log.artifactsDir, patchArtifact), held.diff);
  // What the turn wrote there (a nested repository's config with a remote's password...): redacted first.
  await redactPatchFile(path.join(log.artifactsDir, patchArtifact), root);
  const diff = fs.readFileSync(path.join(log.artifactsDir, patchArtifact), 'utf8');
  const request: DirectHeldRequest = { dir: DIRECT_DIR, patchArtifact, files: held.files, direct: true };
  const names = held.files.map((f) => f.path);
  const kept = held.files.length === 0 ? '' : ` (${names.join(', ')}): they were put back as they were`;
  const result = log.append(
    {
      kind: 'approval_request',
      toolCallId: `held-${stem}`,
      tool: HELD_BACK_TOOL,
      arguments: JSON.stringify(request),
      reason:
        `the turn changed protected files in the project folder itself${kept}. ` +
        `Approved, the turn's versions are written when the next turn starts; denied, they are dropped` +
        (before.complete ? '' : '. The folder is too large to check whole: parts were not looked at'),
      diff,
    },
    { expectedLastSeq: log.lastSeq() },
  );
  if (result.ok) for (const event of result.events) onEvent?.(event);
}
