// Issue #36: a watched snapshot's staging: the paths the watcher saw change (backingWatch.ts) staged into the
// snapshot's index as `add -A` over the whole folder would stage them, by `update-index` when they are files and links
// alone, else by `add -A` of just those paths. See README.md, "The watcher".
import path from 'node:path';
import { runGit, splitNul, type GitSide } from './git.js';
import { lstatOrNone } from './streamWrite.js';

/**
 * `add -A -v` of just these paths of `root` through `side`'s index (as a full pass would stage them), for a snapshot
 * the watcher vouched for. A path that no longer exists is passed only when the index has it or files below it (git
 * refuses a path that matches nothing): the index holds `tree` (its caller checked the index's stamp), so one
 * `cat-file --batch-check` of `<tree>:<path>` answers without reading the index (~15 ms at 80,000 files). A path the
 * ignore rules cover makes git say so and exit 1 having staged the rest (what the full pass stages, silently): that
 * exit counts as success.
 */
export async function addWatchedPaths(
  side: GitSide,
  root: string,
  paths: readonly string[],
  tree: string | undefined,
): Promise<{ stdout: Buffer; code: number }> {
  if (paths.length === 0) return { stdout: Buffer.alloc(0), code: 0 };
  const existing: string[] = [];
  const missing: string[] = [];
  // Only files and links (no folder, no odd name): `update-index` can take them one by one.
  let filesOnly = tree !== undefined;
  for (const file of paths) {
    const stat = lstatOrNone(path.join(root, file));
    (stat === undefined ? missing : existing).push(file);
    if ((stat !== undefined && !stat.isFile() && !stat.isSymbolicLink()) || file.includes('\n'))
      filesOnly = false;
  }
  if (filesOnly && tree !== undefined) {
    const updated = await updateWatchedFiles(side, tree, existing, missing);
    lastWatchedStaging = updated === undefined ? 'add' : 'update-index';
    if (updated !== undefined) return updated;
  } else lastWatchedStaging = 'add';
  if (missing.length > 0) existing.push(...(await inIndex(side, tree, missing)));
  if (existing.length === 0) return { stdout: Buffer.alloc(0), code: 0 };
  const { stdout, stderr, code } = await runGit(
    side,
    [
      '-c',
      'advice.addIgnoredFile=false',
      // A few paths: preloading the index's stat data spreads a pass over every entry on threads for nothing.
      '-c',
      'core.preloadIndex=false',
      '--literal-pathspecs',
      'add',
      '-A',
      '-v',
      '--ignore-errors',
      '--pathspec-from-file=-',
      '--pathspec-file-nul',
    ],
    { input: existing.map((file) => `${file}\0`).join(''), okCodes: [1] },
  );
  return { stdout, code: code === 1 && onlyIgnoredNotice(stderr) ? 0 : code };
}

/** How the last watched snapshot of this process staged its paths (tests). */
export let lastWatchedStaging: 'update-index' | 'add' | undefined;

/**
 * The watched paths staged by `update-index` instead of `add -A` when every one is a file, a link or gone: `add` with a
 * pathspec matches it against every entry of the index (~40 ms at 80,000 files against ~15 for `update-index`). What
 * `add -A` would decide is decided here: each path's kind in the index (which holds `tree`) by one `cat-file
 * --batch-check`; a new file staged unless the ignore rules cover it (`check-ignore --no-index`: it is not in the
 * index), a tracked one whatever they say, a gone one removed if tracked. Undefined (the caller runs `add -A`) for a
 * path the index holds as a folder or a gitlink, or when `update-index` fails (a file that cannot be read: `add
 * --ignore-errors` skips it; git left the index as it was). Its output is `add -v`'s: `add '<path>'` for each file
 * staged (changed or not), `remove '<path>'` for each removed.
 */
async function updateWatchedFiles(
  side: GitSide,
  tree: string,
  existing: readonly string[],
  missing: readonly string[],
): Promise<{ stdout: Buffer; code: number } | undefined> {
  const all = [...existing, ...missing];
  const { stdout } = await runGit(side, ['cat-file', '--batch-check=%(objecttype)'], {
    input: all.map((file) => `${tree}:${file}\n`).join(''),
  });
  const kinds = stdout.toString('utf8').split('\n');
  const kindOf = new Map(all.map((file, at) => [file, kinds[at]?.endsWith(' missing') ? 'none' : kinds[at]]));
  if ([...kindOf.values()].some((kind) => kind !== 'blob' && kind !== 'none')) return undefined;
  const removed = missing.filter((file) => kindOf.get(file) === 'blob');
  const tracked = existing.filter((file) => kindOf.get(file) === 'blob');
  let fresh = existing.filter((file) => kindOf.get(file) === 'none');
  if (fresh.length > 0) {
    const ignored = await runGit(side, ['check-ignore', '-z', '--stdin', '--no-index'], {
      input: fresh.map((file) => `${file}\0`).join(''),
      okCodes: [1],
    });
    const skip = new Set(splitNul(ignored.stdout));
    fresh = fresh.filter((file) => !skip.has(file));
  }
  const staged = [...tracked, ...fresh, ...removed];
  if (staged.length === 0) return { stdout: Buffer.alloc(0), code: 0 };
  try {
    await runGit(
      side,
      ['-c', 'core.preloadIndex=false', 'update-index', '--add', '--remove', '-z', '--stdin'],
      {
        input: staged.map((file) => `${file}\0`).join(''),
      },
    );
  } catch {
    return undefined;
  }
  const lines = [
    ...[...tracked, ...fresh].map((file) => `add '${file}'\n`),
    ...removed.map((file) => `remove '${file}'\n`),
  ];
  return { stdout: Buffer.from(lines.join(''), 'utf8'), code: 0 };
}

/** The paths the index (holding `tree`, when known) has: a file, or files below a folder's path. */
async function inIndex(side: GitSide, tree: string | undefined, paths: readonly string[]): Promise<string[]> {
  if (tree === undefined || paths.some((file) => file.includes('\n'))) {
    const { stdout } = await runGit(side, ['--literal-pathspecs', 'ls-files', '-z', '--', ...paths]);
    const tracked = splitNul(stdout);
    return paths.filter((file) => tracked.some((one) => one === file || one.startsWith(`${file}/`)));
  }
  const { stdout } = await runGit(side, ['cat-file', '--batch-check'], {
    input: paths.map((file) => `${tree}:${file}\n`).join(''),
  });
  const answers = stdout.toString('utf8').split('\n');
  return paths.filter((_, at) => !(answers[at] ?? 'missing').endsWith(' missing'));
}

/** git's stderr names only paths its ignore rules cover (nothing failed). */
function onlyIgnoredNotice(stderr: Buffer): boolean {
  const lines = stderr
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
  return (
    lines[0] === 'The following paths are ignored by one of your .gitignore files:' &&
    !lines.some(
      (line) =>
        /^(error|warning|fatal|hint):/.test(line) &&
        // A split private index's gits look for its shared part in the repository's .git first (sharedIndex.ts).
        !line.startsWith('warning: could not freshen shared index '),
    )
  );
}
