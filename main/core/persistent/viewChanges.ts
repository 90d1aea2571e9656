// Issue #36: what a view checkout changed, as a commit stages it: overlayChanges.ts's list (from the upper layer,
// never a walk of the project) less what the checkout's git ignores, with the repositories the session made in it
// named apart (a commit cannot carry them: nestedRepos.ts). The same answer `git status` gives a worktree checkout.
import { overlayChanges } from './overlayChanges.js';
import { runGit, splitNul } from './git.js';
import { checkoutRoot, checkoutSide, type CheckoutContext } from './state.js';
import { viewIndexIsBaseline } from './viewTree.js';

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
  const ignored = await ignoredPaths(context, candidates);
  return { paths: candidates.filter((file) => !ignored.has(file)), nested: [...nested] };
}

/**
 * The paths the view's git ignores. Tracked files are never ignored (a change to one is committed): check-ignore reads
 * the index for that, ~15-30 ms at 80,000 files. While the view's index is its reset's, it holds the baseline tree, so
 * the rules alone are asked (`--no-index`) and a path they ignore is kept when the baseline tree has it.
 */
async function ignoredPaths(context: CheckoutContext, candidates: readonly string[]): Promise<Set<string>> {
  const byIndex = !viewIndexIsBaseline(context) || candidates.some((file) => file.includes('\n'));
  const { stdout } = await runGit(
    checkoutSide(context),
    ['check-ignore', '-z', '--stdin', ...(byIndex ? [] : ['--no-index'])],
    { input: candidates.map((file) => `${file}\0`).join(''), okCodes: [1] },
  );
  const ignored = splitNul(stdout);
  if (byIndex || ignored.length === 0) return new Set(ignored);
  const { state } = context;
  const tracked = await runGit(
    { cwd: state.gitDir, env: { GIT_DIR: state.gitDir } },
    ['cat-file', '--batch-check'],
    {
      input: ignored.map((file) => `${state.baselineTree}:${file}\n`).join(''),
    },
  );
  const answers = tracked.stdout.toString('utf8').split('\n');
  return new Set(ignored.filter((_, at) => (answers[at] ?? ' missing').endsWith(' missing')));
}
