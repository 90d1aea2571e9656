import fs from 'node:fs';
import path from 'node:path';
import type { NewEvent, SessionEvent } from '../../common/events.js';
import { HELD_BACK_TOOL } from '../approvals/state.js';
import { applyForkBase, resetCheckout } from './forkBase.js';
import { watchAhead } from './backingWatch.js';
import type { SessionLog } from '../log/sessionLog.js';
import { Checkout } from './checkout.js';
import { describeGitMetadataChanges } from './gitMetadata.js';
import { applyDirect } from './directHeld.js';
import type { NestedHold } from './types.js';
import { redactPatchFile } from '../../sandbox/redactFile.js';
import type { CommitReport, PersistentDirSpec } from './types.js';
import { crashPoint } from '../crash.js';
import {
  DIRECT_DIR,
  clearCommitIntent,
  landedFiles,
  commitIntentFile,
  readApplyingIntent,
  recoverCommitIntents,
  removeWriteLeftovers,
  writeCommitIntent,
  type ApplyingCommit,
} from './commitIntent.js';
import { checkoutLocation, readPersistentConfig, type PersistentConfig } from './config.js';
import { onViewsLetGo } from './viewHolder.js';
import { historyStoreOf, homeOf } from '../paths.js';
import { readSettings } from '../../store/settings.js';
import {
  approvedHeld,
  changedFileOf,
  chooseDirs,
  heldEvents,
  projectFolderOf,
  recordCommitted,
  summarize,
  trace,
  withFolderNamed,
  type HeldRequest,
  type NestedHeldRequest,
} from './commitRecord.js';
import { applyGrantedDirect, finishDirect, prepareDirect } from './directTurn.js';
import type { UncommittedDir } from './types.js';

/**
 * The turn lifecycle of a session's Persistent Dirs, around the turn engine (which knows nothing of them):
 * `prepareTurn` before a new user turn (commit auto leftovers, then reset every checkout), `finishTurn`
 * when the turn stops (commit auto dirs), and `commitDirs` / `discardDirs` for manual dirs. Every function
 * takes the session's log open for writing: the writer lease is what serializes checkout work across
 * processes. Sessions without a persistent.json (they work on their project folder directly) are no-ops.
 */

/** Marker file in a checkout's state folder: a turn ran in it and its auto commit has not happened yet. */
const TURN_PENDING = 'turn-pending';

/**
 * Marks every checkout as written to by a turn (createTurnHost calls it), and every writable auto dir as
 * owing a commit: until finishTurn commits it, the next new turn commits those changes before it resets.
 * Host writes alone never set the second mark, so they are discarded by the reset, as the API promises.
 */
export function markTurnStarted(dataDir: string, config: PersistentConfig): void {
  for (const dir of config.dirs) {
    const location = checkoutLocation(dataDir, dir.name);
    Checkout.markDirty(location);
    if (dir.commit !== 'auto' || config.readOnly.includes(dir.name)) continue;
    if (fs.existsSync(location.stateDir)) fs.writeFileSync(path.join(location.stateDir, TURN_PENDING), '');
  }
}

function isTurnPending(dataDir: string, name: string): boolean {
  return fs.existsSync(path.join(checkoutLocation(dataDir, name).stateDir, TURN_PENDING));
}

function clearTurnPending(dataDir: string, name: string): void {
  fs.rmSync(path.join(checkoutLocation(dataDir, name).stateDir, TURN_PENDING), { force: true });
}

/** What prepareTurn did. */
export type TurnPreparation = {
  /** Auto changes a previous turn left uncommitted (a crash, a turn finished by a host that does not commit), committed first. */
  commits: CommitReport[];
  /** Dirs whose checkouts were reset to their backing folders. */
  reset: string[];
};

/** Options of prepareTurn. */
export type PrepareTurnOptions = {
  /** A new user turn resets the checkouts; continuing a paused or interrupted turn only makes missing ones. */
  newTurn: boolean;
  /** Called with each commit event appended. */
  onEvent?: (event: SessionEvent) => void;
  /** The turn number the trace records are filed under. */
  turn?: number;
};

/** Options shared by the commit functions. */
export type CommitDirsOptions = {
  onEvent?: (event: SessionEvent) => void;
  /** The turn number the trace record is filed under. */
  turn?: number;
};

/** The session's Persistent Dir configuration, or undefined for a session that works on its project folder directly. */
export function persistentConfigOf(log: SessionLog): PersistentConfig | undefined {
  return readPersistentConfig(log.dir);
}

/** Checkouts `openCheckout` made in this process (not found existing): equal to their backing folder when made. */
const justMade = new WeakSet<Checkout>();

/** Opens (creating when missing) the checkout of one dir. */
export async function openCheckout(
  log: SessionLog,
  dir: PersistentDirSpec,
  turn?: number,
): Promise<Checkout> {
  const location = checkoutLocation(log.dir, dir.name);
  const existing = Checkout.existing(dir, location);
  if (existing) return existing;
  const started = Date.now();
  // A view's snapshot waits for the turn's first tool that can change files (takeViewBaselines), or any job needing it.
  const made = await Checkout.open(dir, location, {
    kind: readSettings(homeOf(log.dir)).checkouts.kind,
    deferBaseline: true,
  });
  justMade.add(made);
  // Which kind the checkout is, and why (a view asked for on a machine that cannot, says why not).
  trace(log, turn, 'checkout', started, {
    dir: dir.name,
    kind: made.kind,
    ...(made.kindReason === undefined ? {} : { reason: made.kindReason }),
  });
  return made;
}

/**
 * Mounts the session's copy-on-write views in this process (issue #36), so a box or preview opened outside a turn
 * (a terminal, an approval preview) reaches them through their holder; copies need nothing.
 */
export async function mountViews(dataDir: string): Promise<void> {
  const config = readPersistentConfig(dataDir);
  if (!config) return;
  for (const checkout of existingCheckouts(dataDir, config))
    if (checkout.kind === 'view') await checkout.mount();
}

/**
 * Issue #36: takes the baseline of every view of the session made without one (`Checkout.takeBaseline`): before the
 * turn's first tool that can change files, a hook's command, an MCP server's start. Nothing for copies.
 */
export async function takeViewBaselines(dataDir: string): Promise<void> {
  const config = readPersistentConfig(dataDir);
  if (!config) return;
  for (const checkout of existingCheckouts(dataDir, config))
    if (checkout.kind === 'view') {
      await checkout.takeBaseline();
      // A baseline taken before the watch started ahead had walked the folder is checked against it once it has.
      void checkout.confirmWatch().catch(() => false);
    }
}

/**
 * Issue #36: drops the git indexes of the session's quiet views (`Checkout.thin`: ~80 bytes a project file each, two
 * of them), so a session its host let go of holds only what it changed. Run as the views are let go (viewHolder.ts's
 * releaseIdleViews: a minute idle in a long-lived host, or the session ending for its host, harness.ts's
 * endSessions), not at each turn's end: between turns the next reset's snapshot starts from the private index
 * (its stat data and known tree; at 80,000 files a rebuilt one cost its seed copy and a `write-tree`, ~100 ms).
 */
export async function thinViews(dataDir: string): Promise<void> {
  const config = readPersistentConfig(dataDir);
  if (!config) return;
  for (const checkout of existingCheckouts(dataDir, config))
    if (checkout.kind === 'view') await checkout.thin();
}
onViewsLetGo((checkoutsDir) => thinViews(path.dirname(checkoutsDir)));

/** Checkouts that exist already, without creating any (for the box's read-only paths). */
export function existingCheckouts(dataDir: string, config: PersistentConfig): Checkout[] {
  return config.dirs.flatMap((dir) => Checkout.existing(dir, checkoutLocation(dataDir, dir.name)) ?? []);
}

/**
 * Before a turn: makes every checkout exist; for a new turn, first commits what auto dirs still hold
 * uncommitted, then resets every checkout from its backing folder (discarding uncommitted writes,
 * the host's included). Times each step into the trace.
 */
export async function prepareTurn(log: SessionLog, options: PrepareTurnOptions): Promise<TurnPreparation> {
  const config = persistentConfigOf(log);
  const preparation: TurnPreparation = { commits: [], reset: [] };
  // Normally done already when the session was opened (recoverCommits); cheap when there is no intent.
  await recoverCommits(log, options.onEvent);
  if (!config) {
    await prepareDirect(log, options.onEvent);
    return preparation;
  }
  const started = Date.now();
  for (const dir of config.dirs) {
    const checkout = await openCheckout(log, dir, options.turn);
    // A one-turn host watches a view's project from now on: the baseline its first tool takes is then marked, a reset
    // taken before the walk is done is checked once it is (the turn host's `confirmViews`, `takeViewBaselines`), and
    // the turn's later environment blocks read the view's status from its layers (a long-lived host watches anyway).
    if (checkout.kind === 'view') watchAhead(checkout.backing);
    if (!options.newTurn) continue;
    const owed =
      isTurnPending(log.dir, dir.name) ||
      approvedHeld(heldEvents(log), dir.name, false).length > 0 ||
      approvedHeld(heldEvents(log), dir.name, 'nested').length > 0;
    if (dir.commit === 'auto' && !config.readOnly.includes(dir.name) && owed) {
      const report = await commitCheckout(log, checkout, options.onEvent);
      clearTurnPending(log.dir, dir.name);
      if (report.status !== 'unchanged') preparation.commits.push(report);
    }
    // A checkout made just now is its backing folder already: a reset would take the same snapshot again.
    if (justMade.has(checkout) && !owed) await applyForkBase(log, checkout);
    else await resetCheckout(log, checkout);
    preparation.reset.push(dir.name);
  }
  // The turn's tools and box reach a view through its holder: mounted now, so the turn's layout finds it.
  for (const dir of config.dirs)
    await Checkout.existing(dir, checkoutLocation(log.dir, dir.name))?.mount({ baseline: 'later' });
  trace(log, options.turn, 'persistent_reset', started, {
    reset: preparation.reset,
    leftoverCommits: preparation.commits.length,
  });
  return preparation;
}

/** When a turn stops (it ended, paused for approval, or was interrupted): commits every writable auto dir. */
export async function finishTurn(log: SessionLog, options: CommitDirsOptions = {}): Promise<CommitReport[]> {
  const config = persistentConfigOf(log);
  if (!config) {
    await finishDirect(log, options.onEvent);
    return [];
  }
  const started = Date.now();
  const auto = config.dirs.filter((dir) => dir.commit === 'auto' && !config.readOnly.includes(dir.name));
  const reports = await commitEach(log, auto, options.onEvent);
  for (const dir of auto) clearTurnPending(log.dir, dir.name);
  // Issue #36: a view keeps its indexes between turns (the next reset's snapshot starts from the private one: its
  // stat data and known tree); they go when its views are let go (thinViews, below).
  trace(log, options.turn, 'persistent_commit', started, {
    dirs: auto.map((d) => d.name),
    reports: summarize(reports),
  });
  return reports;
}

/**
 * Commits the named dirs (default: every manual dir) now, e.g. `result.commitManual()` or `keel commit`.
 * Read-only dirs are never committed; naming one (or an unknown dir) is an error.
 */
export async function commitDirs(
  log: SessionLog,
  options: CommitDirsOptions & { dirs?: readonly string[] } = {},
): Promise<CommitReport[]> {
  const config = persistentConfigOf(log);
  if (!config) return [];
  await recoverCommits(log, options.onEvent);
  const chosen = chooseDirs(config, options.dirs, (dir) => dir.commit === 'manual');
  const started = Date.now();
  const reports = await commitEach(log, chosen, options.onEvent);
  trace(log, options.turn, 'persistent_commit', started, {
    dirs: chosen.map((d) => d.name),
    manual: true,
    reports: summarize(reports),
  });
  return reports;
}

/** Discards the uncommitted changes of the named dirs (default: every manual dir) by resetting their checkouts. */
export async function discardDirs(
  log: SessionLog,
  options: { dirs?: readonly string[] } = {},
): Promise<string[]> {
  const config = persistentConfigOf(log);
  if (!config) return [];
  const chosen = chooseDirs(config, options.dirs, (dir) => dir.commit === 'manual', true);
  for (const dir of chosen) await resetCheckout(log, await openCheckout(log, dir));
  return chosen.map((dir) => dir.name);
}

/** Every dir with changes not yet committed (only dirs whose checkout exists). Runs git; the lease is not needed. */
export async function uncommittedDirs(dataDir: string): Promise<UncommittedDir[]> {
  const config = readPersistentConfig(dataDir);
  if (!config) return [];
  const found: UncommittedDir[] = [];
  for (const checkout of existingCheckouts(dataDir, config)) {
    const files = await checkout.uncommitted();
    if (files.length === 0) continue;
    found.push({
      dir: checkout.spec.name,
      commit: checkout.spec.commit,
      readOnly: config.readOnly.includes(checkout.spec.name),
      files,
    });
  }
  return found;
}

async function commitEach(
  log: SessionLog,
  dirs: readonly PersistentDirSpec[],
  onEvent: ((event: SessionEvent) => void) | undefined,
): Promise<CommitReport[]> {
  const reports: CommitReport[] = [];
  for (const dir of dirs) reports.push(await commitCheckout(log, await openCheckout(log, dir), onEvent));
  return reports;
}

/**
 * Commits one checkout and records a `persistent_commit` event for what reached the backing folder. Held-back
 * protected files granted since are written first (their own persistent_commit, naming the request's patch);
 * those this commit held back become one approval_request (tool HELD_BACK_TOOL) showing their diff.
 */
async function commitCheckout(
  log: SessionLog,
  checkout: Checkout,
  onEvent: ((event: SessionEvent) => void) | undefined,
  resumed?: ApplyingCommit,
): Promise<CommitReport> {
  const name = checkout.spec.name;
  const intent = commitIntentFile(log.dir, name);
  const stem = `commits/${log.lastSeq() + 1}-${name}-${Date.now().toString(36)}`;
  const approved = approvedHeld(heldEvents(log), name, false);
  // Nested repositories' files granted since: written into the backing folder first (each only where
  // nothing is in the way), recorded as a persistent_commit naming the request's patch.
  for (const request of approvedHeld(heldEvents(log), name, 'nested')) {
    const applied = await applyDirect(checkout.backing, request.files, log.artifactsDir);
    recordCommitted(log, commitIntentFile(log.dir, name), checkout.backing, onEvent, [
      {
        kind: 'persistent_commit',
        dir: name,
        files: applied.files.map(({ path, preHash, postHash }) => ({ path, preHash, postHash })),
        diffArtifact: request.patchArtifact,
      },
    ]);
  }
  const report = await withFolderNamed(log, intent, checkout.backing, () =>
    checkout.commit({
      artifactsDir: log.artifactsDir,
      artifactStem: stem,
      keepStore: historyStoreOf(log.dir),
      approvedHeld: approved.flatMap((request) => request.files),
      // The intent holds the plan before the first file is written: a kill while writing is finished on open.
      beforeWrite: (files) =>
        writeCommitIntent(intent, checkout.backing, [], { diffArtifact: `${stem}.patch`, files: [...files] }),
      ...(resumed ? { resumed: resumed.files } : {}),
      afterEachWrite: () => crashPoint('during_commit_files'),
    }),
  );
  // Every event this commit owes the log, appended together once the commit intent holds them.
  const owed: NewEvent[] = [];
  const record = (event: NewEvent) => owed.push(event);
  for (const request of approved) {
    // A set per request: a held commit may carry up to COMMIT_MAX_FILES files, and a scan per file was quadratic.
    const paths = new Set(request.files.map((f) => f.path));
    const files = report.applied?.files.filter((file) => paths.has(file.path)) ?? [];
    record({
      kind: 'persistent_commit',
      dir: name,
      files: files.map(({ path, preHash, postHash }) => ({ path, preHash, postHash })),
      diffArtifact: request.patchArtifact,
    });
    // A file the backing folder changed since is not written (the report's applied.conflicts names it).
  }
  if (report.status === 'committed') {
    record({
      kind: 'persistent_commit',
      dir: name,
      files: report.files.map(changedFileOf),
      diffArtifact: report.diffArtifact,
    });
  } else if (resumed?.diffArtifact !== undefined && report.status === 'unchanged') {
    // Killed after its files were written and the checkout moved on, before the events: what landed is it.
    const files = landedFiles(checkout.backing, resumed);
    if (files.length > 0)
      record({ kind: 'persistent_commit', dir: name, files, diffArtifact: resumed.diffArtifact });
  }
  if (report.held) {
    const held: HeldRequest = { dir: name, patchArtifact: `${stem}.patch`, files: report.held.files };
    const reasons = [...new Set(report.held.files.map((file) => file.reason))];
    const paths = `${report.held.files
      .slice(0, 20)
      .map((file) => file.path)
      .join(', ')}${report.held.files.length > 20 ? ` and ${report.held.files.length - 20} more` : ''}`;
    const metadata = report.held.gitMetadataChanges;
    record({
      kind: 'approval_request',
      toolCallId: `held-${stem}`,
      tool: HELD_BACK_TOOL,
      arguments: JSON.stringify(held),
      reason:
        metadata === undefined
          ? `the turn changed protected files (${paths}): ` +
            `${reasons.join('; ')}. They reach ${name} only if you approve; denied, they are dropped`
          : `nothing was committed to ${name}: its git metadata changed since the turn began ` +
            `(${describeGitMetadataChanges(metadata)}); check these files in the project folder. ` +
            `The turn's changes (${paths}) reach ${name} only if you approve; denied, they are dropped`,
      diff: report.held.diff,
    });
  }
  if (report.nested && report.nested.repos.length > 0) {
    const request: NestedHeldRequest = {
      dir: name,
      patchArtifact: `${stem}-nested.patch`,
      files: report.nested.files,
      nested: true,
    };
    record(await nestedRequest(log, stem, request, report.nested, checkout.backing));
  }
  recordCommitted(log, intent, checkout.backing, onEvent, owed);
  // A plan recorded and nothing owed (nothing was left to write): the intent has no more to say.
  if (owed.length === 0) clearCommitIntent(intent);
  return report;
}

/**
 * Finishes every commit a process was killed in while writing its files (the intent's applying phase): a
 * checkout's commit is run again, which writes what is still missing and records the whole commit once, the
 * files written before with the sides they replaced; a direct session's granted files are written the same
 * way. Temp files of the killed writes are removed first. Returns one notice per commit finished.
 */
async function finishInterruptedCommits(
  log: SessionLog,
  onEvent: ((event: SessionEvent) => void) | undefined,
): Promise<string[]> {
  const config = persistentConfigOf(log);
  const notices: string[] = [];
  const dirs = config ? config.dirs.map((dir) => ({ dir, file: commitIntentFile(log.dir, dir.name) })) : [];
  for (const { dir, file } of dirs) {
    const interrupted = readApplyingIntent(file);
    if (!interrupted) continue;
    removeWriteLeftovers(interrupted.backing, interrupted.applying);
    await commitCheckout(log, await openCheckout(log, dir), onEvent, interrupted.applying);
    if (readApplyingIntent(file)) clearCommitIntent(file);
    notices.push(
      `${dir.name}: a commit interrupted (a crash, a full disk) before all its files were written was finished`,
    );
  }
  const direct = commitIntentFile(log.dir, DIRECT_DIR, false);
  const interrupted = config ? undefined : readApplyingIntent(direct);
  const root = projectFolderOf(log);
  if (interrupted && root !== undefined) {
    removeWriteLeftovers(interrupted.backing, interrupted.applying);
    await applyGrantedDirect(log, root, onEvent);
    if (readApplyingIntent(direct)) clearCommitIntent(direct);
    notices.push(
      `${DIRECT_DIR}: granted files interrupted (a crash, a full disk) while they were written were finished`,
    );
  }
  return notices;
}

/**
 * When a session is opened for a turn (or a commit): a commit a crash interrupted after its files reached
 * the folder is recorded now (commitIntent.ts). Returns one notice per such commit.
 */
export async function recoverCommits(
  log: SessionLog,
  onEvent?: (event: SessionEvent) => void,
): Promise<string[]> {
  const finished = await finishInterruptedCommits(log, onEvent);
  return [...finished, ...(await recoverCommitIntents(log, persistentConfigOf(log), onEvent))];
}

/**
 * The approval_request for the git repositories a turn made inside a checkout (its patch artifact written):
 * their files, kept as artifacts, reach the backing folder only if granted; their .git never does.
 */
async function nestedRequest(
  log: SessionLog,
  stem: string,
  request: NestedHeldRequest,
  nested: NestedHold,
  folder: string,
): Promise<NewEvent> {
  const file = path.join(log.artifactsDir, request.patchArtifact);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, nested.diff);
  // The files' text is the project's: redacted (their .env values too) before the log or anyone reads it.
  await redactPatchFile(file, folder);
  const diff = fs.readFileSync(file, 'utf8');
  const files = nested.files.map((held) => held.path);
  const skipped =
    nested.skipped.length === 0 ? '' : `; not kept (too large or too many): ${nested.skipped.join(', ')}`;
  return {
    kind: 'approval_request',
    toolCallId: `held-${stem}-nested`,
    tool: HELD_BACK_TOOL,
    arguments: JSON.stringify(request),
    reason:
      `the turn made a git repository inside the checkout (${nested.repos.join(', ')}): a commit cannot carry ` +
      `one, so its files (${files.length === 0 ? 'none' : files.join(', ')}) were not committed and its .git ` +
      `never is${skipped}. Approved, the files are written to ${request.dir}; denied, they are dropped`,
    diff,
  };
}
