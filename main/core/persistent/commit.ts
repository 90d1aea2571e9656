// Commit: the session's changes in the checkout written back to the backing folder (three-way merged
// where both sides changed a file, nothing written on a conflict), and what is uncommitted. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { resolveInWorkspace, writeSymlinkConfined } from '../../sandbox/paths.js';
import {
  diffTrees,
  isZeroOid,
  runGit,
  splitNul,
  stageCommitAndDiff,
  streamBlob,
  type TreeChange,
} from './git.js';
import {
  backingEntry,
  BlobHasher,
  blobId,
  hashFile,
  readAll,
  SMALL_FILE_BYTES,
  type Entry,
} from './hashing.js';
import { applyHeld, holdBack } from './heldBack.js';
import { type HeldFile } from './types.js';
import { holdNestedRepos } from './nestedRepos.js';
import { keepFile } from './kept.js';
import { withBackingLock } from './lock.js';
import { planWrites, type PlannedWrite } from './merge.js';
import { expectedBacking, SNAPSHOT_MESSAGE } from './snapshot.js';
import {
  backingSide,
  checkoutRoot,
  checkoutSide,
  headIsBaseline,
  isIntact,
  isQuiet,
  keepReachable,
  markClean,
  setHead,
  snapshotParent,
  type CheckoutContext,
} from './state.js';
import { removeConfined, writeStreamConfined } from './streamWrite.js';
import { redactPatchFile } from '../../sandbox/redactFile.js';
import { realpathNative } from '../../sandbox/viewPath.js';
import { viewChangedPaths } from './viewChanges.js';
import { dropViewIndex, viewSessionTree } from './viewTree.js';
import { PersistentDirError, type CommitReport, type CommittedFile, type UncommittedFile } from './types.js';

/** Modes of the tree entries a checkout commits: regular, executable, symbolic link. */
const FILE_MODES = new Set(['100644', '100755', '120000']);

/**
 * Changed files a commit writes without asking. Each written file costs a confined write with fsync and
 * its kept copies (~1 ms, far more on a busy disk: a command making 60,000 files held a turn's end for
 * 60-80 s, silently); past this every change is held back for a person, with why.
 */
export const COMMIT_MAX_FILES = 2000;

/** Options of `Checkout.commit`. */
export type CommitOptions = {
  /** The session's artifacts folder; the diff (or the conflict patch) is written there. */
  artifactsDir: string;
  /** Artifact handle stem, e.g. `commits/12-project` (".patch" is added). */
  artifactStem: string;
  /** Held-back files a person granted since (heldBack.ts): written first, under the same lock. */
  approvedHeld?: readonly HeldFile[];
  /**
   * The history store (kept.ts): each written file's bytes before and after are kept there and its modes
   * reported, so the change can be reverted later.
   */
  keepStore?: string;
  /**
   * What changed in the repository's git metadata since the turn began (Checkout.commit fills it): then
   * nothing of the session's is written, every change is held back for a person to look at first.
   */
  gitMetadataChanges?: readonly string[];
  /**
   * Called once the writes are planned, before the first file is written: the commit intent records them, so
   * a process killed while writing leaves what the next open needs to finish this commit (commitIntent.ts).
   */
  beforeWrite?: (files: readonly PlannedFile[]) => void;
  /**
   * The files of an earlier run of this commit that was killed while writing them (its intent): one whose
   * backing file now holds the planned bytes was written by it, and is recorded with the side it replaced.
   */
  resumed?: readonly PlannedFile[];
  /** Called after each file is written (fault injection: the `during_commit_files` crash point). */
  afterEachWrite?: () => void;
  /** Changed files written without asking; default COMMIT_MAX_FILES (tests lower it). */
  maxFiles?: number;
};

/**
 * One file a commit is about to write: what it replaces (`preHash`, sha256; null: nothing there) and what it
 * writes (`post`: the git blob id of the bytes; null: the file is deleted).
 */
export type PlannedFile = { path: string; preHash: string | null; post: string | null };

/** What the session changed in the checkout since its baseline and has not committed. */
export async function uncommittedFiles(context: CheckoutContext): Promise<UncommittedFile[]> {
  if (!isIntact(context.location) || isQuiet(context)) return [];
  const tree = await stageCheckout(context);
  const changes = await diffTrees(checkoutSide(context), context.state.baselineTree, tree);
  return changes.filter(isCommittable).map((change) => ({
    path: change.path,
    status: change.status === 'A' ? 'added' : change.status === 'D' ? 'deleted' : 'modified',
  }));
}

/**
 * Commits the session's changes to the backing folder under the backing lock: a file the backing folder
 * changed too is merged three-way; on any conflict nothing is written and the report names the files (the
 * patch artifact keeps the session's change). Afterwards the checkout's tree is its new baseline.
 */
export async function commitChanges(context: CheckoutContext, options: CommitOptions): Promise<CommitReport> {
  const approved = options.approvedHeld ?? [];
  const applied =
    approved.length === 0
      ? undefined
      : await withBackingLock(context.location.locksRoot, context.state.backing, () =>
          applyHeld(context, approved),
        );
  const report = await commitSession(context, options);
  return applied ? { ...report, applied } : report;
}

/**
 * The session's own changes, protected paths held back: they are reported with their diff (the patch
 * artifact's sections of them) and become part of the baseline, so they are held once, not at every commit.
 */
async function commitSession(context: CheckoutContext, options: CommitOptions): Promise<CommitReport> {
  const dir = context.spec.name;
  // A checkout the session replaced by a link is never read: nothing of it is committed.
  if (!isIntact(context.location) || isQuiet(context)) return { dir, status: 'unchanged' };
  const { paths, nested } = await changedPaths(context);
  // Repositories the session made inside the checkout: a commit cannot carry them, so they are asked for.
  const nestedPart =
    nested.length === 0 ? {} : { nested: await holdNestedRepos(checkoutRoot(context), nested, options) };
  return { ...(await commitPaths(context, options, paths)), ...nestedPart };
}

/** The commit of the paths `git status` found changed (commitSession's work once nested repositories are held). */
async function commitPaths(
  context: CheckoutContext,
  options: CommitOptions,
  paths: string[],
): Promise<CommitReport> {
  const { state } = context;
  const dir = context.spec.name;
  // HEAD is kept at the baseline, so a clean status means the checkout is exactly the baseline tree.
  if (paths.length === 0 && headIsBaseline(context)) {
    markClean(context);
    return { dir, status: 'unchanged' };
  }
  const artifactHandle = `${options.artifactStem}.patch`;
  const patchFile = path.join(options.artifactsDir, artifactHandle);
  // One process stages the paths, writes the session's tree, its snapshot commit (an object, no lock
  // needed) and the diff: the listing as soon as git prints it, the patch streamed behind it.
  // A view whose index is still its reset's: the session's tree from the changed paths, the index neither read nor
  // written (viewTree.ts); else git stages them into the checkout's index.
  const built = state.kind === 'view' ? await viewSessionTree(context, paths) : undefined;
  const staged = stageCommitAndDiff(checkoutSide(context), {
    paths: built === undefined ? paths : [],
    ...(built === undefined ? {} : { tree: built }),
    from: state.baselineTree,
    message: SNAPSHOT_MESSAGE,
    parent: snapshotParent(context),
    patchFile,
  });
  const sessionTree = await staged.tree;
  const allChanges = await staged.changes;
  const metadata = options.gitMetadataChanges ?? [];
  const committable = allChanges.filter(isCommittable);
  const maxFiles = options.maxFiles ?? COMMIT_MAX_FILES;
  const { commit: changes, held } = holdBack(
    committable,
    metadata.length > 0
      ? `the git metadata of ${dir} changed since the turn began`
      : committable.length > maxFiles
        ? `${committable.length} changed files are more than a commit writes to ${dir} without asking (${maxFiles})`
        : undefined,
  );
  if (changes.length === 0 && held.length === 0) {
    await Promise.allSettled([staged.written]);
    fs.rmSync(patchFile, { force: true });
    if (sessionTree === state.baselineTree) markClean(context);
    return { dir, status: 'unchanged' };
  }
  // The patch holds .env values (the session's on `+` lines, the old ones on `-` lines): redacted before
  // anyone (the Changes view, the CLI) reads it.
  const patch = staged.written.then(() => redactPatchFile(patchFile, checkoutRoot(context)));
  patch.catch(() => undefined);
  const snapshotCommit = staged.commit.then((commit) => {
    if (commit === undefined) throw new PersistentDirError('git wrote no snapshot commit');
    return commit;
  });
  snapshotCommit.catch(() => undefined);
  return withBackingLock(context.location.locksRoot, state.backing, async () => {
    // Hashing the backing side of each changed file is independent per file; merges stay one at a time.
    const theirs = await mapLimited(changes, 8, (change) => backingEntry(context, change.path));
    // What an earlier run of this commit, killed while writing, already wrote: recorded, not planned again.
    const finished = finishedEarlier(changes, theirs, options.resumed);
    const done = new Set(finished.map((file) => file.path));
    const rest = changes.flatMap((change, index) =>
      done.has(change.path) ? [] : [{ change, theirs: theirs[index] as Entry }],
    );
    const { plan, conflicts } = await planWrites(
      context,
      rest.map((entry) => entry.change),
      rest.map((entry) => entry.theirs),
    );
    if (conflicts.length > 0) {
      await Promise.allSettled([snapshotCommit]);
      await patch;
      return { dir, status: 'conflict', conflicts: conflicts.sort(), patchArtifact: artifactHandle };
    }
    // Every write goes to its own path and was planned above: they run side by side, fsyncs overlapping.
    // Deletions come after (they remove folders left empty, which a write may be filling).
    options.beforeWrite?.([
      ...(options.resumed ?? []).filter((file) => done.has(file.path)),
      ...plan.filter((write) => write.kind !== 'already').map((write) => plannedFile(context, write)),
    ]);
    const writes = plan.filter((write) => write.kind !== 'delete');
    const applyOne = async (write: PlannedWrite) => {
      const file = await applyKept(context, write, options.keepStore);
      if (write.kind !== 'already') options.afterEachWrite?.();
      return file;
    };
    const [written, commit] = await Promise.all([mapLimited(writes, 8, applyOne), snapshotCommit, patch]);
    const files = [...finished, ...written];
    for (const write of plan) if (write.kind === 'delete') files.push(await applyOne(write));
    if (options.keepStore !== undefined) {
      for (const file of finished)
        if (file.postHash !== null)
          keepFile(options.keepStore, path.join(state.backing, file.path), file.postHash);
    }
    const heldBack =
      held.length === 0
        ? {}
        : {
            held: {
              files: held,
              diff: heldDiff(patchFile, held),
              ...(metadata.length > 0 ? { gitMetadataChanges: [...metadata] } : {}),
            },
          };
    if (state.kind === 'shadow') keepReachable(context, commit);
    state.expected =
      changes.length === allChanges.length &&
      finished.length === 0 &&
      plan.every((write) => write.kind !== 'merged')
        ? expectedBacking(state.baselineTree, sessionTree, changes)
        : undefined;
    setHead(context, commit);
    state.baseline = commit;
    state.baselineTree = sessionTree;
    // The view's index still holds the old baseline: gone, so no git reads it against the new HEAD; the next reset
    // installs a new one, and whoever mounts the view before that gets it rebuilt (thin.ts's restoreViewIndex).
    if (built !== undefined) dropViewIndex(context);
    markClean(context);
    // Only held-back files changed: the patch stays, their approval request names it.
    if (files.length === 0) return { dir, status: 'unchanged', ...heldBack };
    return { dir, status: 'committed', files, diffArtifact: artifactHandle, ...heldBack };
  });
}

/** What a planned write replaces and writes, as the commit intent keeps it. */
function plannedFile(context: CheckoutContext, write: PlannedWrite): PlannedFile {
  const { before, change } = write;
  const preHash = before.kind === 'file' || before.kind === 'link' ? (before.sha256 ?? null) : null;
  if (write.kind === 'delete') return { path: change.path, preHash, post: null };
  const post = write.kind === 'merged' ? blobId(context.state.objectFormat, write.content) : change.newOid;
  return { path: change.path, preHash, post };
}

/**
 * The changes an earlier, interrupted run of this commit wrote already: the backing file holds the bytes its
 * intent planned (the same blob id; for a deletion, nothing). Each is recorded with the side it replaced.
 */
function finishedEarlier(
  changes: readonly TreeChange[],
  theirs: readonly Entry[],
  resumed: readonly PlannedFile[] | undefined,
): CommittedFile[] {
  if (resumed === undefined || resumed.length === 0) return [];
  const finished: CommittedFile[] = [];
  const byPath = new Map(resumed.map((file) => [file.path, file]));
  for (const [index, change] of changes.entries()) {
    const planned = byPath.get(change.path);
    const now = theirs[index] as Entry;
    if (planned === undefined) continue;
    if (planned.post === null && now.kind === 'none') {
      finished.push({ path: change.path, preHash: planned.preHash, postHash: null });
    } else if ((now.kind === 'file' || now.kind === 'link') && now.oid === planned.post && now.sha256) {
      finished.push({ path: change.path, preHash: planned.preHash, postHash: now.sha256 });
    }
  }
  return finished;
}

/** At most this much of the held-back files' diff goes into the approval request. */
const HELD_DIFF_MAX = 64 * 1024;

/** The sections of the (redacted) patch artifact for the held-back paths, cut at HELD_DIFF_MAX. */
function heldDiff(patchFile: string, held: readonly HeldFile[]): string {
  const paths = new Set(held.map((file) => file.path));
  let text: string;
  try {
    text = fs.readFileSync(patchFile, 'utf8');
  } catch {
    return '';
  }
  const sections = text.split(/^(?=diff --git )/m).filter((section) => {
    const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(section);
    return header !== null && (paths.has(header[1] as string) || paths.has(header[2] as string));
  });
  const diff = sections.join('');
  return diff.length > HELD_DIFF_MAX ? `${diff.slice(0, HELD_DIFF_MAX)}\n[diff cut at 64 KiB]\n` : diff;
}

/**
 * Applies one planned write; with a history store, the backing file's bytes are kept just before (when they
 * still hash to what the plan saw) and the written ones just after, and the modes reported.
 */
async function applyKept(
  context: CheckoutContext,
  write: PlannedWrite,
  store: string | undefined,
): Promise<CommittedFile> {
  if (store === undefined || write.kind === 'already') return apply(context, write);
  const target = path.join(context.state.backing, write.change.path);
  const before =
    write.before.kind === 'file' || write.before.kind === 'link' ? write.before.sha256 : undefined;
  const preMode = before === undefined ? undefined : keepFile(store, target, before);
  const file = await apply(context, write);
  const postMode = file.postHash === null ? undefined : keepFile(store, target, file.postHash);
  return {
    ...file,
    ...(preMode !== undefined ? { preMode } : {}),
    ...(postMode !== undefined ? { postMode } : {}),
  };
}

async function apply(context: CheckoutContext, write: PlannedWrite): Promise<CommittedFile> {
  const { backing } = context.state;
  const { change } = write;
  const target = path.join(backing, change.path);
  const preHash =
    write.before.kind === 'file' || write.before.kind === 'link' ? (write.before.sha256 ?? null) : null;
  if (write.kind === 'already') return { path: change.path, preHash, postHash: preHash };
  if (write.kind === 'delete') {
    removeConfined(backing, change.path);
    return { path: change.path, preHash, postHash: null };
  }
  const mode = change.newMode === '100755' ? 0o755 : 0o644;
  if (write.kind === 'merged') {
    const result = await writeStreamConfined(backing, change.path, write.content, { mode });
    return { path: change.path, preHash, postHash: result.sha256, merged: true };
  }
  if (change.newMode === '120000') {
    const { stdout } = await runGit(backingSide(context), ['cat-file', 'blob', change.newOid]);
    // The link itself is replaced (a link already at the name is never followed), in its pinned folder.
    writeSymlinkConfined(backing, change.path, stdout.toString('utf8'), {
      argName: 'path',
      allowProtected: true,
    });
    return { path: change.path, preHash, postHash: await hashFile(target) };
  }
  const copied = await copyFromCheckout(context, change, mode);
  if (copied !== undefined) return { path: change.path, preHash, postHash: copied };
  const source = streamBlob(backingSide(context), change.newOid);
  const result = await writeStreamConfined(backing, change.path, source, { mode });
  return { path: change.path, preHash, postHash: result.sha256 };
}

/**
 * Copies a committed file straight from the checkout (no git process per file) and proves on the way that
 * the bytes are the staged blob: opened without following links, hashed as git does, and put in the
 * backing folder only when the id matches. Returns the sha256 written, or undefined to use git instead.
 */
async function copyFromCheckout(
  context: CheckoutContext,
  change: TreeChange,
  mode: number,
): Promise<string | undefined> {
  const { backing, objectFormat } = context.state;
  const checkout = checkoutRoot(context);
  let real: string;
  try {
    real = resolveInWorkspace(checkout, change.path, { argName: 'path' });
  } catch {
    return undefined;
  }
  if (real !== path.join(realpathNative(checkout), change.path)) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(real, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    return undefined;
  }
  if (stat.size <= SMALL_FILE_BYTES) {
    // Small files are read whole and checked before anything is written.
    let bytes: Buffer;
    try {
      bytes = readAll(fd, stat.size);
    } finally {
      fs.closeSync(fd);
    }
    if (blobId(objectFormat, bytes) !== change.newOid) return undefined;
    return (await writeStreamConfined(backing, change.path, bytes, { mode })).sha256;
  }
  const hasher = new BlobHasher(objectFormat, stat.size);
  const source = fs.createReadStream('', { fd, autoClose: true }).pipe(hasher);
  const result = await writeStreamConfined(backing, change.path, source, {
    mode,
    beforeCommit: () => hasher.digest() === change.newOid,
  });
  return result.written ? result.sha256 : undefined;
}

/**
 * Stages what changed in the checkout (found by `git status`, which reads stat data, not file bytes) in
 * the checkout's own index and returns the tree: the session's current state.
 */
async function stageCheckout(context: CheckoutContext): Promise<string> {
  const { paths } = await changedPaths(context);
  // HEAD is kept at the baseline, so a clean status means the checkout is exactly the baseline tree.
  if (paths.length === 0 && headIsBaseline(context)) return context.state.baselineTree;
  // A view whose index is still its reset's: the tree from the changed paths, the index untouched, so a listing stages
  // nothing the model would see and the turn's own commit can still build its tree this way (viewTree.ts).
  const built = context.state.kind === 'view' ? await viewSessionTree(context, paths) : undefined;
  if (built !== undefined) return built;
  return stageCommitAndDiff(checkoutSide(context), { paths, from: context.state.baselineTree }).tree;
}

/**
 * The paths `git status` finds changed in the checkout (stat data, not file bytes), against its HEAD, and
 * the repositories nested in it (git names one `dir/`: never part of a commit).
 */
async function changedPaths(context: CheckoutContext): Promise<{ paths: string[]; nested: string[] }> {
  // A view knows what it changed from its upper layer: work in proportion to the change, not the project.
  if (context.state.kind === 'view') return viewChangedPaths(context);
  // This status may save the checkout's index (git's "optional" lock, skipped when someone holds it):
  // files git wrote in the same second as its index stay "racily clean", and every later status would
  // hash them all again (a fresh worktree: the whole project) until the index is saved with their stat
  // data. Git saves only when its refresh changed something, so a steady turn writes nothing extra.
  const side = checkoutSide(context);
  const { stdout } = await runGit({ ...side, env: { ...side.env, GIT_OPTIONAL_LOCKS: '1' } }, [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--no-renames',
    '--ignore-submodules=all',
  ]);
  const entries = splitNul(stdout).map((entry) => entry.slice(3));
  return {
    paths: entries.filter((entry) => !entry.endsWith('/')),
    nested: entries.filter((entry) => entry.endsWith('/')),
  };
}

/** Maps with at most `limit` calls in flight, results in input order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function isCommittable(change: TreeChange): boolean {
  const modeOk = (mode: string, oid: string) => isZeroOid(oid) || FILE_MODES.has(mode);
  return modeOk(change.oldMode, change.oldOid) && modeOk(change.newMode, change.newOid);
}
