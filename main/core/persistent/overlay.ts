// A checkout whose baseline is not exactly the backing folder: a fork's checkout shows the project as it was at
// the fork's point (its parent's later changes taken out, main/core/persistent/forkBase.ts). The files are written
// into the checkout just after a reset and become its baseline, so a commit carries only the session's own
// changes, never the taking out. See README.md.
import type { FileMode } from '../../common/events.js';
import { writeSymlinkConfined } from '../../sandbox/paths.js';
import { gitText, runGit } from './git.js';
import {
  checkoutRoot,
  checkoutSide,
  keepReachable,
  markClean,
  markDirty,
  saveState,
  setHead,
  type CheckoutContext,
} from './state.js';
import { removeConfined, writeStreamConfined } from './streamWrite.js';

/** One file of an overlay: what the checkout holds at `path` instead of the backing folder's version (null: nothing). */
export type OverlayFile = { path: string; to: { mode: FileMode; bytes: Buffer } | null };

/** Message of the baseline commit an overlay makes. */
const OVERLAY_MESSAGE = 'keel: the checkout as of the fork point';

/**
 * Writes `files` into a checkout that was just reset and makes the result its baseline (the checkout's index
 * staged, a commit on the old baseline, HEAD moved to it). Marked dirty while writing, so a crash midway leaves
 * a checkout the next reset rewrites whole.
 */
export async function overlayBaseline(
  context: CheckoutContext,
  files: readonly OverlayFile[],
): Promise<void> {
  if (files.length === 0) return;
  const { state, location } = context;
  // A view's files are written through its holder (into its upper layer).
  const root = checkoutRoot(context);
  markDirty(location);
  for (const file of files) {
    removeConfined(root, file.path);
    if (file.to === null) continue;
    if (file.to.mode === '120000') {
      writeSymlinkConfined(root, file.path, file.to.bytes.toString('utf8'), {
        argName: 'path',
        allowProtected: true,
      });
    } else {
      await writeStreamConfined(root, file.path, file.to.bytes, {
        mode: file.to.mode === '100755' ? 0o755 : 0o644,
      });
    }
  }
  const side = checkoutSide(context);
  await runGit(side, ['update-index', '--add', '--remove', '-z', '--stdin'], {
    input: files.map((file) => `${file.path}\0`).join(''),
  });
  const tree = await gitText(side, ['write-tree']);
  const commit = await gitText(side, ['commit-tree', tree, '-p', state.baseline, '-m', OVERLAY_MESSAGE]);
  setHead(context, commit);
  state.baseline = commit;
  state.baselineTree = tree;
  if (state.kind === 'shadow') keepReachable(context, commit);
  saveState(context);
  markClean(context);
}
