// Reset: the checkout made equal to the backing folder's current files again before a new turn, touching
// as little as the situation allows. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { refreshCopies, syncExtras } from './extras.js';
import { runGit } from './git.js';
import { snapshot, type Snapshot } from './snapshot.js';
import {
  backingIndex,
  checkoutSide,
  headIsBaseline,
  isQuiet,
  markClean,
  saveState,
  setHead,
  type CheckoutContext,
} from './state.js';
import { lstatOrUndefined } from './streamWrite.js';
import { clearLayers, removeIdleAside, setLayersAside } from '../../sandbox/overlayView.js';
import { mountStillUsed, viewLayers, withViewDown } from './viewHolder.js';

/**
 * Resets an intact checkout: when nothing marked it dirty and the snapshot equals the baseline, no file is
 * touched; an untouched checkout whose backing folder changed moves with a two-way `read-tree -m -u`; a
 * dirty one is rewritten (`moveTo`). Ignored files are listed again only when the backing tree moved.
 */
export async function resetIntact(context: CheckoutContext): Promise<void> {
  const { state } = context;
  if (state.kind === 'view') return resetView(context);
  const taken = await snapshot(context);
  const backingChanged = taken.tree !== state.baselineTree;
  if (isQuiet(context) && !backingChanged) {
    setHead(context, taken.commit);
    state.baseline = taken.commit;
    refreshCopies(context);
  } else {
    // Untouched since its baseline: only the paths the backing folder changed are rewritten.
    if (!(isQuiet(context) && (await advance(context, taken)))) await moveTo(context, taken);
    // The ignored files are listed again only when the backing tree moved; else the known ones are
    // checked (a link or copy the session removed comes back).
    await syncExtras(context, backingChanged);
  }
  saveState(context);
}

/**
 * Moves a checkout that holds exactly its baseline to a snapshot with a two-way `read-tree -m -u`: only
 * the paths that differ between the two trees are written or removed, nothing else is scanned. False
 * (nothing changed) when git refuses, e.g. an ignored file the session made is in the way; then `moveTo`.
 */
async function advance(context: CheckoutContext, taken: Snapshot): Promise<boolean> {
  const { state } = context;
  if (!headIsBaseline(context)) return false;
  if (state.kind === 'worktree') restoreGitFile(context);
  try {
    await runGit(checkoutSide(context), ['read-tree', '-m', '-u', state.baselineTree, taken.tree]);
  } catch {
    return false;
  }
  setHead(context, taken.commit);
  state.baseline = taken.commit;
  state.baselineTree = taken.tree;
  markClean(context);
  return true;
}

/** Rewrites the checkout to a snapshot: changed files rewritten, untracked ones removed, HEAD moved. */
export async function moveTo(context: CheckoutContext, taken: Snapshot): Promise<void> {
  const { state } = context;
  if (state.kind === 'worktree') restoreGitFile(context);
  await runGit(checkoutSide(context), ['reset', '-q', '--hard', taken.commit]);
  await runGit(checkoutSide(context), ['clean', '-fdq']);
  state.head = taken.commit;
  state.baseline = taken.commit;
  state.baselineTree = taken.tree;
  markClean(context);
}

/** The worktree's `.git` file, rewritten so the model's git keeps working even if it was edited. */
function restoreGitFile(context: CheckoutContext): void {
  const file = path.join(context.state.checkout, '.git');
  const text = `gitdir: ${context.state.gitDir}\n`;
  const stat = lstatOrUndefined(file);
  if (stat?.isFile() && fs.readFileSync(file, 'utf8') === text) return;
  fs.rmSync(file, { recursive: true, force: true });
  fs.writeFileSync(file, text);
}

/**
 * Resets a view checkout (issue #36): its holder ended (the next use mounts it again, so no lower file replaced by
 * rename keeps showing old bytes), its layers emptied but for its `.git` file, a new snapshot of the backing folder
 * taken and its private index made the view's index (the backing files' stat data: the view's `git status` is clean
 * at once). Nothing is copied. Ignored files the session made (build output) go with the layer. Marked clean only
 * once done: a crash midway leaves the checkout dirty and the next reset does it again.
 */
async function resetView(context: CheckoutContext): Promise<void> {
  const { state } = context;
  await withViewDown(context, async () => {
    const layers = viewLayers(context.location, state);
    // A box still running on the old mount (a background command lives across turns) keeps its layers, set
    // aside; the new turn gets fresh ones. Layers set aside earlier go once no mount uses them.
    const used = mountStillUsed(layers);
    if (used.dev !== undefined) setLayersAside(layers, [used.dev]);
    else clearLayers(layers, ['.git']);
    removeIdleAside(context.location.stateDir, used.live);
    await resetViewGit(context);
  });
}

/** The view's git made the new snapshot's: its `.git` file in upper, the private index copied in, HEAD moved. */
async function resetViewGit(context: CheckoutContext): Promise<void> {
  const { state } = context;
  const layers = viewLayers(context.location, state);
  const dotGit = path.join(layers.upper, '.git');
  const text = `gitdir: ${state.gitDir}\n`;
  const stat = lstatOrUndefined(dotGit);
  if (!(stat?.isFile() && fs.readFileSync(dotGit, 'utf8') === text)) {
    fs.rmSync(dotGit, { recursive: true, force: true });
    fs.writeFileSync(dotGit, text);
  }
  const taken = await snapshot(context);
  fs.copyFileSync(backingIndex(context), path.join(state.gitDir, 'index'));
  setHead(context, taken.commit);
  state.baseline = taken.commit;
  state.baselineTree = taken.tree;
  markClean(context);
}
