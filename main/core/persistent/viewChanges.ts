// Issue #36: what a view checkout changed, as a commit stages it: overlayChanges.ts's list (from the upper layer,
// never a walk of the project) less what the checkout's git ignores, with the repositories the session made in it
// named apart (a commit cannot carry them: nestedRepos.ts). The same answer `git status` gives a worktree checkout.
import { overlayChanges } from './overlayChanges.js';
import { runGit, splitNul } from './git.js';
import { checkoutRoot, checkoutSide, type CheckoutContext } from './state.js';

/**
 * The paths a view changed that its git would commit (written, deleted; ignored ones left out: build output and
 * dependency folders stay the session's), and the nested repositories (`dir/`, as `git status` names them).
 */
export async function viewChangedPaths(
  context: CheckoutContext,
): Promise<{ paths: string[]; nested: string[] }> {
  const { state } = context;
  const changes = overlayChanges({
    lower: state.backing,
    upper: state.upper as string,
    view: checkoutRoot(context),
    own: ['.git'],
  });
  const nested = new Set<string>();
  for (const change of changes) {
    const parts = change.path.split('/');
    const at = parts.indexOf('.git');
    if (at > 0) nested.add(`${parts.slice(0, at).join('/')}/`);
  }
  const inNested = (file: string) => [...nested].some((folder) => file.startsWith(folder));
  const candidates = changes.map((change) => change.path).filter((file) => !inNested(file));
  if (candidates.length === 0) return { paths: [], nested: [...nested] };
  // Tracked files are never reported ignored (check-ignore reads the index): a change to one is committed.
  const { stdout } = await runGit(checkoutSide(context), ['check-ignore', '-z', '--stdin'], {
    input: candidates.map((file) => `${file}\0`).join(''),
    okCodes: [1],
  });
  const ignored = new Set(splitNul(stdout));
  return { paths: candidates.filter((file) => !ignored.has(file)), nested: [...nested] };
}
