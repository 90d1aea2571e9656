// Issue #36: what a copy-on-write view (main/sandbox/overlayView.ts) changed, from its upper layer and the lower
// folders it touched, never a walk of the whole project. Not wired into checkouts yet: see README.md (#36).
import fs from 'node:fs';
import path from 'node:path';

/**
 * One file the view differs in from its lower folder: written (new, changed, or only copied up) or deleted; or, when
 * asked (`newFolders: 'list'`), a folder upper made where lower has nothing, not walked (`folder`).
 */
export type ViewChange = { path: string; change: 'written' | 'deleted' | 'folder' };

/**
 * The three sides of a view as Keel reads them: `view` is the merged folder through its holder (`hostPath`);
 * `own` names top-level entries the view placed itself (its `.git` file, viewGit.ts), which are no change.
 */
export type ViewSides = { lower: string; upper: string; view: string; own?: readonly string[] };

/**
 * The files (regular files and symbolic links; folders are not changes, as in git) the view wrote or deleted,
 * sorted by path. Written: every non-whiteout file in upper (a file only copied up, e.g. touched, is listed; its
 * bytes decide later). Deleted: each lower file the merged view no longer shows, found by listing, for each folder
 * upper holds, the lower folder against the merged one, so whiteouts and opaque folders (a folder removed and made
 * again) count the same without reading overlayfs's xattrs. Work: upper's entries, the lower folders they lie in,
 * and the deleted subtrees. The view must be mounted.
 */
export function overlayChanges(
  sides: ViewSides,
  options: { newFolders?: 'walk' | 'list' } = {},
): ViewChange[] {
  const changes: ViewChange[] = [];
  walkFolder({ ...sides, listNew: options.newFolders === 'list' }, '', changes);
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walkFolder(sides: ViewSides & { listNew: boolean }, rel: string, changes: ViewChange[]): void {
  const upperEntries = fs.readdirSync(path.join(sides.upper, rel), { withFileTypes: true });
  const lowerFolder = lstat(path.join(sides.lower, rel))?.isDirectory() === true;
  if (lowerFolder) {
    const shown = new Set(fs.readdirSync(path.join(sides.view, rel)));
    for (const name of fs.readdirSync(path.join(sides.lower, rel)))
      if (!shown.has(name) && !isOwn(sides, rel, name))
        filesBelow(sides.lower, path.join(rel, name), 'deleted', changes);
  }
  for (const entry of upperEntries) {
    const child = path.join(rel, entry.name);
    if (isOwn(sides, rel, entry.name)) continue;
    const stat = lstat(path.join(sides.upper, child));
    if (stat === undefined || isWhiteout(stat)) continue;
    const below = lowerFolder ? lstat(path.join(sides.lower, child)) : undefined;
    if (stat.isDirectory()) {
      // A folder over a lower file hides that file; over a lower folder it merges (or is opaque: the walk's
      // listing of the merged folder tells).
      if (below !== undefined && !below.isDirectory()) changes.push({ path: child, change: 'deleted' });
      if (below?.isDirectory() === true) walkFolder(sides, child, changes);
      else if (sides.listNew) changes.push({ path: child, change: 'folder' });
      else filesBelow(sides.upper, child, 'written', changes);
    } else if (stat.isFile() || stat.isSymbolicLink()) {
      if (below?.isDirectory() === true) filesBelow(sides.lower, child, 'deleted', changes);
      changes.push({ path: child, change: 'written' });
    }
  }
}

/** Every file at or below `rel` in `root`, recorded as `change` (links are files; special files are skipped). */
function filesBelow(root: string, rel: string, change: ViewChange['change'], changes: ViewChange[]): void {
  const stat = lstat(path.join(root, rel));
  if (stat === undefined || isWhiteout(stat)) return;
  if (stat.isDirectory()) {
    for (const name of fs.readdirSync(path.join(root, rel)))
      filesBelow(root, path.join(rel, name), change, changes);
  } else if (stat.isFile() || stat.isSymbolicLink()) {
    changes.push({ path: rel, change });
  }
}

function isOwn(sides: ViewSides, rel: string, name: string): boolean {
  return rel === '' && (sides.own?.includes(name) ?? false);
}

/** An overlayfs whiteout: a character device 0:0 in upper. */
function isWhiteout(stat: fs.Stats): boolean {
  return stat.isCharacterDevice() && stat.rdev === 0;
}

function lstat(target: string): fs.Stats | undefined {
  return fs.lstatSync(target, { throwIfNoEntry: false });
}
