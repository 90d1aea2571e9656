// Reset: the checkout made equal to the backing folder's current files again before a new turn, touching
// as little as the situation allows. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { LINKED_DEPENDENCY_DIRS, refreshCopies, syncExtras } from './extras.js';
import { runGit, splitNul } from './git.js';
import { snapshot, type Snapshot } from './snapshot.js';
import {
  backingIndex,
  fileStamp,
  viewIndex,
  backingSide,
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
import { placeSharedPart } from './sharedIndex.js';
import { installViewIndex } from './viewGit.js';
import { checkGitlinksAhead } from './viewStatus.js';

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
  // A watched view's later statuses come from its layers (viewStatus.ts): the check they need runs while the turn starts.
  if (state.watch !== undefined) checkGitlinksAhead(context);
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
 * rename keeps showing old bytes), its layers emptied but for its `.git` file and the ignored files the session made
 * (build output: a copy's `clean -fd` keeps them too), a new snapshot of the backing folder taken and its private
 * index made the view's index (the backing files' stat data: the view's `git status` is clean at once). Nothing is
 * copied. Marked clean only once done: a crash midway leaves the checkout dirty and the next reset does it again.
 */
async function resetView(context: CheckoutContext): Promise<void> {
  const { state } = context;
  await withViewDown(context, async () => {
    const layers = viewLayers(context.location, state);
    // A box still running on the old mount (a background command lives across turns) keeps its layers, set
    // aside (the build output the session made stays there with it); the new turn gets fresh ones. Otherwise the
    // layers are emptied but for the view's .git file and the ignored files the session made (build output, as a
    // copy's clean keeps them). Layers set aside earlier go once no mount uses them.
    const used = mountStillUsed(layers);
    if (used.dev !== undefined) setLayersAside(layers, [used.dev]);
    else clearLayers(layers, ['.git'], await sessionIgnoredFiles(context, layers.upper));
    removeIdleAside(context.location.stateDir, used.live);
    await resetViewGit(context);
  });
}

/**
 * What of a view's upper layer a copy's reset keeps: files, links and folders the session made (no lower entry of that
 * path: a file over a backing file goes, the backing's shows again, as a copy's kept copies are refreshed) that the
 * project ignores as the backing folder's ignore files say now (what the reset's snapshot brings back), the checkout's
 * excludes included. A new folder that is ignored as a whole (`dist/`) is kept as one entry, not walked: the reset's
 * cost stays in proportion to what the session changed outside its build output. Not kept: whiteouts, anything below
 * a dependency folder the backing folder has (a copy links it read-only: nothing the session wrote there survives),
 * the view's own `.git`. Listed from upper alone, relative paths.
 */
async function sessionIgnoredFiles(context: CheckoutContext, upper: string): Promise<string[]> {
  const { backing } = context.state;
  const files: string[] = [];
  let fresh: string[] = [];
  const entriesOf = (rel: string): fs.Dirent[] => {
    try {
      return fs.readdirSync(path.join(upper, rel), { withFileTypes: true });
    } catch {
      return [];
    }
  };
  // Folders lower has too (a merged folder): walked, their new files and new folders collected.
  const walk = (rel: string): void => {
    for (const entry of entriesOf(rel)) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (child === '.git') continue;
      const below = lstatOrUndefined(path.join(backing, child));
      if (entry.isDirectory()) {
        if (below === undefined) fresh.push(child);
        else if (below.isDirectory() && !LINKED_DEPENDENCY_DIRS.includes(entry.name)) walk(child);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && below === undefined) files.push(child);
    }
  };
  walk('');
  const kept: string[] = [];
  // New folders, a level at a time: one ignored as a whole is kept; another is looked into.
  while (fresh.length > 0) {
    const ignored = new Set(
      await ignoredOf(
        context,
        fresh.map((folder) => `${folder}/`),
      ),
    );
    const next: string[] = [];
    for (const folder of fresh) {
      if (ignored.has(`${folder}/`)) {
        kept.push(folder);
        continue;
      }
      for (const entry of entriesOf(folder)) {
        const child = `${folder}/${entry.name}`;
        if (entry.isDirectory()) next.push(child);
        else if (entry.isFile() || entry.isSymbolicLink()) files.push(child);
      }
    }
    fresh = next;
  }
  kept.push(...(await ignoredOf(context, files)));
  return kept;
}

/** Which of `paths` (a folder with a trailing `/`) the backing folder's ignore rules ignore, by pattern alone. */
async function ignoredOf(context: CheckoutContext, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const { stdout } = await runGit(backingSide(context), ['check-ignore', '--no-index', '-z', '--stdin'], {
    input: paths.map((one) => `${one}\0`).join(''),
    okCodes: [1],
  });
  return splitNul(stdout);
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
  placeSharedPart(context);
  await installViewIndex(backingIndex(context), state.gitDir);
  state.viewIndexStamp = fileStamp(viewIndex(context));
  setHead(context, taken.commit);
  state.baseline = taken.commit;
  state.baselineTree = taken.tree;
  markClean(context);
  // A watched view's later statuses come from its layers (viewStatus.ts): the check they need runs while the turn starts.
  if (state.watch !== undefined) checkGitlinksAhead(context);
}
