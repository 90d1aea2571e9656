// Issue #36: a view's commit without its git index. `update-index` of the changed paths and `write-tree` each read the
// view's whole index (~80 bytes a file: 7 MB at 80,000 files) and write it again (~100 ms together at that size).
// While the view's index is the one its reset installed (nothing but the reset wrote it: its stamp), it holds exactly
// the baseline tree, so the session's tree is the baseline tree with the changed paths put in: their blobs hashed as
// `update-index` hashes them (`hash-object --stdin-paths`, in the view, so the project's attributes apply by path), the
// baseline's folders on their way read (`cat-file --batch`) and the changed ones written bottom-up (`mktree --batch`),
// each tree's id computed here first (its children name it) and checked against git's. See README.md.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ignoreFiles, ignoreStamp } from './ignoreStamp.js';
import { runGit } from './git.js';
import { boxesOnView } from './viewHolder.js';
import {
  checkoutRoot,
  checkoutSide,
  fileStamp,
  headIsBaseline,
  viewIndex,
  type CheckoutContext,
} from './state.js';
import { lstatOrNone } from './streamWrite.js';

/** One entry of a tree: its mode as git writes it, its name's bytes, its object id (raw bytes). */
export type TreeEntry = { mode: string; name: Buffer; oid: Buffer };

/** A folder of the session's tree being built: its baseline entries by name, then changed in place. */
export type Folder = Map<string, TreeEntry>;

const TREE_MODE = '40000';

/**
 * True while a view's own index is the one its reset installed: it holds the baseline tree (stat data aside), so what
 * `update-index` + `write-tree` would give can be computed from the baseline tree and the changed paths alone.
 */
export function viewIndexIsBaseline(context: CheckoutContext): boolean {
  const { state } = context;
  return (
    state.kind === 'view' &&
    state.viewIndexStamp !== undefined &&
    state.viewIndexStamp === fileStamp(viewIndex(context)) &&
    headIsBaseline(context)
  );
}

/** Removes a view's index (its HEAD moved past the tree it held) and forgets its stamp. */
export function dropViewIndex(context: CheckoutContext): void {
  fs.rmSync(viewIndex(context), { force: true });
  context.state.viewIndexStamp = undefined;
}

/**
 * The session's tree: the baseline tree with `paths` (each a file the view wrote, or one it deleted) as the view holds
 * them now; undefined when this way cannot answer exactly what the index would (then the caller stages as before): the
 * view's index or HEAD moved, a sha256 repository, a repository with `core.fileMode` off, a symbolic link or special
 * file among them, a name git refuses to stage, a gitlink on the way.
 */
export async function viewSessionTree(
  context: CheckoutContext,
  paths: readonly string[],
): Promise<string | undefined> {
  const { state } = context;
  if (!viewIndexIsBaseline(context) || state.objectFormat !== 'sha1' || state.baselineTree === '')
    return undefined;
  // A box still running on the view (a background command, a terminal) may run git there after the commit: its index
  // is kept in step (staged as before) rather than dropped.
  if (boxesOnView(context.location, state)) return undefined;
  if (paths.some((file) => !plainPath(file))) return undefined;
  const root = checkoutRoot(context);
  const written: { file: string; mode: string }[] = [];
  const deleted: string[] = [];
  for (const file of paths) {
    const stat = lstatOrNone(path.join(root, file));
    // Gone, or a folder now (a file replaced by a folder: its files come as paths of their own).
    if (stat === undefined || stat.isDirectory()) deleted.push(file);
    else if (stat.isFile()) written.push({ file, mode: (stat.mode & 0o100) !== 0 ? '100755' : '100644' });
    else return undefined;
  }
  const side = checkoutSide(context);
  if (written.length > 0 && (await fileModeOff(context))) return undefined;
  // The folders on the changed paths' way, from the top: each read from the baseline tree when it has it.
  const wanted = new Set<string>(['']);
  for (const file of paths)
    for (let at = file.indexOf('/'); at !== -1; at = file.indexOf('/', at + 1)) wanted.add(file.slice(0, at));
  const order = [...wanted].sort((a, b) => depth(a) - depth(b));
  // The baseline's folders and the written files' blobs (hashed and written as `update-index` would: clean filters
  // and attributes by path, in the view), side by side.
  const [read, hashed] = await Promise.all([
    baselineTrees(context, order),
    written.length === 0
      ? undefined
      : runGit(side, ['hash-object', '-w', '--stdin-paths'], {
          input: written.map(({ file }) => `${file}\n`).join(''),
        }),
  ]);
  if (read === undefined) return undefined;
  const folders = new Map<string, Folder>();
  for (const folder of order) folders.set(folder, read.get(folder) ?? new Map<string, TreeEntry>());
  const blobs = (hashed?.stdout.toString('utf8') ?? '').split('\n').filter((line) => line !== '');
  if (blobs.length !== written.length) return undefined;
  for (const file of deleted) folderOf(folders, file)?.delete(baseName(file));
  for (const [at, { file, mode }] of written.entries()) {
    const folder = folderOf(folders, file);
    if (folder === undefined) return undefined;
    const name = baseName(file);
    folder.set(name, { mode, name: Buffer.from(name, 'utf8'), oid: Buffer.from(blobs[at] as string, 'hex') });
  }
  return writeTrees(context, folders, order);
}

/** The `core` flags a view's git reads that this way (and viewStatus.ts) cannot follow. */
export type CoreFlags = { fileModeOff: boolean; ignoreCase: boolean; symlinksOff: boolean };

/** The view's `core` flags, kept while the configuration files they come from are unchanged. */
const coreFlagsKnown = new Map<string, CoreFlags>();

/**
 * `core.fileMode` off (`update-index` then keeps each entry's recorded mode, which this way does not know),
 * `core.ignoreCase` on and `core.symlinks` off (git then matches names and reads links otherwise than a plain
 * comparison of the view's names and stats), as the view's git reads them: one `git config` while its files stay.
 */
export async function coreFlags(context: CheckoutContext): Promise<CoreFlags> {
  const { state } = context;
  const repository = state.repositoryIndex === undefined ? state.gitDir : path.dirname(state.repositoryIndex);
  const key = `${state.gitDir}\0${ignoreStamp([...ignoreFiles(repository, ''), path.join(state.gitDir, 'config.worktree')])}`;
  const known = coreFlagsKnown.get(key);
  if (known !== undefined) return known;
  const { stdout } = await runGit(
    checkoutSide(context),
    ['config', '-z', '--bool', '--get-regexp', '^core\\.(filemode|ignorecase|symlinks)$'],
    { okCodes: [1] },
  );
  // The last value of a key wins, as git reads it; `--bool` prints each as true or false.
  const values = new Map<string, string>();
  for (const record of stdout.toString('utf8').split('\0')) {
    const newline = record.indexOf('\n');
    if (newline > 0) values.set(record.slice(0, newline).toLowerCase(), record.slice(newline + 1));
  }
  const flags = {
    fileModeOff: values.get('core.filemode') === 'false',
    ignoreCase: values.get('core.ignorecase') === 'true',
    symlinksOff: values.get('core.symlinks') === 'false',
  };
  if (coreFlagsKnown.size > 100) coreFlagsKnown.clear();
  coreFlagsKnown.set(key, flags);
  return flags;
}

async function fileModeOff(context: CheckoutContext): Promise<boolean> {
  return (await coreFlags(context)).fileModeOff;
}

/** A path every git stages as it is: no `.git` component in any spelling git refuses, no odd bytes. */
export function plainPath(file: string): boolean {
  if (file === '' || file.includes('\uFFFD') || file.includes('\n')) return false;
  return file.split('/').every((part) => {
    const lower = part.toLowerCase();
    return (
      part !== '' && part !== '.' && part !== '..' && !lower.startsWith('.git') && !lower.startsWith('git~')
    );
  });
}

export const depth = (folder: string): number => (folder === '' ? 0 : folder.split('/').length);
export const baseName = (file: string): string => file.slice(file.lastIndexOf('/') + 1);
export const parentOf = (file: string): string =>
  file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';

/** The folder a path lies in (every folder on the changed paths' way is in `folders`). */
function folderOf(folders: Map<string, Folder>, file: string): Folder | undefined {
  return folders.get(parentOf(file));
}

/**
 * The baseline's trees of `folders` (those it has), by one `cat-file --batch`; undefined when a folder on the way is
 * not a tree there but something git could not replace in one step (a gitlink).
 */
export async function baselineTrees(
  context: CheckoutContext,
  folders: readonly string[],
): Promise<Map<string, Folder> | undefined> {
  const { state } = context;
  const { stdout } = await runGit(
    { cwd: state.gitDir, env: { GIT_DIR: state.gitDir } },
    ['cat-file', '--batch'],
    {
      input: folders.map((folder) => `${state.baselineTree}:${folder}\n`).join(''),
    },
  );
  const trees = new Map<string, Folder>();
  let at = 0;
  for (const folder of folders) {
    const newline = stdout.indexOf(10, at);
    if (newline < 0) return undefined;
    const header = stdout.subarray(at, newline).toString('utf8');
    at = newline + 1;
    if (header.endsWith(' missing')) continue;
    const [, type, sizeText] = header.split(' ');
    const size = Number(sizeText);
    const body = stdout.subarray(at, at + size);
    at += size + 1;
    if (type === 'tree') trees.set(folder, parseTree(body));
    else if (type === 'commit') return undefined;
  }
  return trees;
}

/** A tree object's entries by name. */
function parseTree(body: Buffer): Folder {
  const entries: Folder = new Map();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(32, at);
    const nul = body.indexOf(0, space);
    const mode = body.subarray(at, space).toString('latin1');
    const name = Buffer.from(body.subarray(space + 1, nul));
    const oid = Buffer.from(body.subarray(nul + 1, nul + 21));
    // A name that is not UTF-8 is never a changed path's (those are): kept under a key no UTF-8 name has.
    const text = name.toString('utf8');
    entries.set(Buffer.from(text, 'utf8').equals(name) ? text : `\0${name.toString('hex')}`, {
      mode,
      name,
      oid,
    });
    at = nul + 21;
  }
  return entries;
}

/**
 * Writes the changed folders bottom-up: each tree's id computed here (its parent's entry names it), all written by one
 * `mktree --batch`, whose ids must be the computed ones. Folders left empty are dropped from their parents, as git
 * never writes an empty folder. The root tree's id.
 */
async function writeTrees(
  context: CheckoutContext,
  folders: Map<string, Folder>,
  order: readonly string[],
): Promise<string | undefined> {
  const { state } = context;
  const bottomUp = [...order].reverse();
  const ids = new Map<string, string>();
  const input: Buffer[] = [];
  for (const folder of bottomUp) {
    const entries = folders.get(folder) as Folder;
    if (folder !== '') {
      const parent = folders.get(parentOf(folder)) as Folder;
      const name = baseName(folder);
      const there = parent.get(name);
      if (entries.size === 0) {
        // A folder emptied goes; a file written at its name (a folder replaced by a file) stays.
        if (there?.mode === TREE_MODE) parent.delete(name);
        continue;
      }
      // A file and a folder of one name: no view holds both, so the changed paths are not what this way expects.
      if (there !== undefined && there.mode !== TREE_MODE) return undefined;
      const content = treeContent(entries);
      const id = objectId('tree', content);
      ids.set(folder, id);
      parent.set(name, { mode: TREE_MODE, name: Buffer.from(name, 'utf8'), oid: Buffer.from(id, 'hex') });
      input.push(mktreeInput(entries));
    } else {
      ids.set('', objectId('tree', treeContent(entries)));
      input.push(mktreeInput(entries));
    }
  }
  const { stdout } = await runGit(
    { cwd: state.gitDir, env: { GIT_DIR: state.gitDir } },
    ['mktree', '-z', '--missing', '--batch'],
    { input: Buffer.concat(input) },
  );
  const made = stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
  const expected = bottomUp.filter((folder) => ids.has(folder)).map((folder) => ids.get(folder));
  if (made.join('\n') !== expected.join('\n')) return undefined;
  return ids.get('');
}

/** A tree object's content: its entries in git's order (a folder sorts as its name followed by `/`). */
function treeContent(entries: Folder): Buffer {
  const sorted = [...entries.values()].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)));
  return Buffer.concat(
    sorted.flatMap((entry) => [
      Buffer.from(`${entry.mode} `, 'latin1'),
      entry.name,
      Buffer.from([0]),
      entry.oid,
    ]),
  );
}

const sortKey = (entry: TreeEntry): Buffer =>
  entry.mode === TREE_MODE ? Buffer.concat([entry.name, Buffer.from('/')]) : entry.name;

/** One tree for `mktree -z --batch`: its entries as `ls-tree -z` prints them, then an empty record. */
function mktreeInput(entries: Folder): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries.values()) {
    const mode = entry.mode === TREE_MODE ? '040000' : entry.mode;
    const type = entry.mode === TREE_MODE ? 'tree' : entry.mode === '160000' ? 'commit' : 'blob';
    parts.push(
      Buffer.from(`${mode} ${type} ${entry.oid.toString('hex')}\t`, 'latin1'),
      entry.name,
      Buffer.from([0]),
    );
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** A git object's sha1 id. */
function objectId(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}
