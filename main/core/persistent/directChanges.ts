// What a `--commit direct` turn changed in the project folder, whichever tool changed it (commands too): the
// folder's files are snapshotted as a git tree (a private shadow repository in the session's folder, never the
// project's own .git) when a turn begins changing files (persistent/directTurn.ts: just before its first tool that
// can) and again when it stops; the trees' difference is the turn's change, both sides' bytes kept in the history
// store so it can be reverted. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { ChangedFile, FileMode } from '../../common/events.js';
import { LINKED_DEPENDENCY_DIRS } from './extras.js';
import { diffTrees, gitText, isZeroOid, runGit, streamBlob, type GitSide, type TreeChange } from './git.js';
import { heldReason } from './heldBack.js';
import { KEEP_MAX_BYTES, keepBytes } from './kept.js';
import { copyIndexFile, fileStamp, plain } from './state.js';
import { backingChanges, MAX_WATCHED_PATHS, outermost, type WatchMark } from './backingWatch.js';
import { linkedAmong, mappedForWriting } from './closeWrites.js';
import { detectSandbox } from '../../sandbox/box.js';
import { ignoreFiles, ignoreStamp } from './ignoreStamp.js';
import { addWatchedPaths } from './watchedStaging.js';
import { historyDir } from '../paths.js';

/** Folders the trees leave out (the exclude file below): a hard link there is no change of the tree. */
const DEPENDENCY_DIRS: ReadonlySet<string> = new Set(LINKED_DEPENDENCY_DIRS);

/** The turn start's tree, written when a turn (segment) starts and removed once its change is recorded. */
const START_FILE = 'turn-start.json';

/** Where a direct session's shadow repository, its private index and its start record live. */
export function directStateDir(dataDir: string): string {
  return path.join(historyDir(dataDir), 'direct');
}

/**
 * Where the folder's trees are made: a repository's top folder uses its own objects through a private index
 * (seeded from the repository's index, so only modified files are hashed; only objects are written into its
 * .git, as a checkout's snapshot does); any other folder a shadow repository in the session's folder (its first
 * tree hashes every file once).
 */
type Kind = 'repository' | 'shadow';

function sideOf(stateDir: string, project: string, kind: Kind): GitSide {
  const config = [`core.excludesFile=${path.join(stateDir, 'exclude')}`, 'core.untrackedCache=true'];
  const index = path.join(stateDir, kind === 'repository' ? 'repository.index' : 'index');
  if (kind === 'repository') return { cwd: project, env: { GIT_INDEX_FILE: index }, config };
  return {
    cwd: project,
    env: { GIT_DIR: path.join(stateDir, 'shadow.git'), GIT_WORK_TREE: project, GIT_INDEX_FILE: index },
    config,
  };
}

/** Which kind of tree-making suits the folder now (see Kind). */
async function kindOf(project: string): Promise<{ kind: Kind; gitDir?: string }> {
  if (!fs.existsSync(path.join(project, '.git'))) return { kind: 'shadow' };
  try {
    const [top, gitDir] = (
      await gitText(plain(project), ['rev-parse', '--show-toplevel', '--absolute-git-dir'])
    ).split('\n');
    if (top === undefined || gitDir === undefined) return { kind: 'shadow' };
    if (fs.realpathSync.native(top) !== fs.realpathSync.native(project)) return { kind: 'shadow' };
    return { kind: 'repository', gitDir };
  } catch {
    return { kind: 'shadow' };
  }
}

/** Whether the last `folderTree` of this process staged only the watched paths (tests). */
export let lastFolderTreeWatched = false;

/**
 * The folder's files now (tracked, untracked, not ignored; dependency folders left out) as a tree. Only files
 * whose stat changed since the last call are hashed (git's stat cache). `end`: the tree of a segment's end, what the
 * turn's own tools did: taken from the watcher only when it also sees writes through shared memory maps (files closed
 * after writing, closeWrites.ts), with the files a live box process maps for writing now added; else the full pass.
 */
export async function folderTree(
  stateDir: string,
  project: string,
  kind: Kind,
  gitDir?: string,
  options: { end?: boolean } = {},
): Promise<string> {
  const side = sideOf(stateDir, project, kind);
  fs.mkdirSync(stateDir, { recursive: true });
  if (!fs.existsSync(path.join(stateDir, 'exclude')))
    fs.writeFileSync(
      path.join(stateDir, 'exclude'),
      LINKED_DEPENDENCY_DIRS.map((dir) => `${dir}/\n`).join(''),
    );
  const index = side.env['GIT_INDEX_FILE'] as string;
  if (kind === 'shadow' && !fs.existsSync(path.join(stateDir, 'shadow.git', 'HEAD')))
    await runGit(plain(stateDir), ['init', '--bare', '-q', path.join(stateDir, 'shadow.git')]);
  if (kind === 'repository' && gitDir !== undefined && !fs.existsSync(index)) {
    const real = path.join(gitDir, 'index');
    if (fs.existsSync(real)) copyIndexFile(real, index);
  }
  // A long-lived host watches the folder (backingWatch.ts): then only what changed since the last tree is staged.
  const record = readWatchRecord(stateDir, kind);
  const repository = kind === 'repository' ? (gitDir ?? record?.gitDir) : path.join(stateDir, 'shadow.git');
  const ignores =
    repository === undefined
      ? undefined
      : ignoreStamp(ignoreFiles(repository, path.join(stateDir, 'exclude')));
  const vouched = record !== undefined && record.stamp === fileStamp(index) ? record : undefined;
  const end = options.end === true;
  const watched =
    ignores === undefined
      ? undefined
      : await backingChanges(project, vouched?.mark, ignores, { mapped: end });
  if (end && watched?.paths !== undefined) watched.paths = await segmentEndPaths(project, watched.paths);
  let tree: string;
  lastFolderTreeWatched = watched?.paths !== undefined && vouched !== undefined;
  if (watched?.paths !== undefined && vouched !== undefined) {
    const { stdout, code } = await addWatchedPaths(side, project, watched.paths, vouched.tree);
    // Nothing staged: the index still holds the recorded tree.
    tree = stdout.length === 0 && code === 0 ? vouched.tree : await gitText(side, ['write-tree']);
  } else {
    // A file that cannot be read (permissions, gone meanwhile) is left out, not a failed turn.
    const add = () => runGit(side, ['add', '-A', '--ignore-errors', '--', '.'], { okCodes: [1] });
    try {
      await add();
    } catch (error) {
      // A seeded index git cannot use (a split or sparse index): hashed from nothing instead.
      if (kind !== 'repository') throw error;
      fs.rmSync(index, { force: true });
      await add();
    }
    tree = await gitText(side, ['write-tree']);
  }
  writeWatchRecord(
    stateDir,
    watched?.mark === undefined
      ? undefined
      : {
          kind,
          mark: watched.mark,
          stamp: fileStamp(index),
          tree,
          ...(repository ? { gitDir: repository } : {}),
        },
  );
  return tree;
}

/**
 * What a segment's commands changed, from the paths the watcher saw change (after its barrier, with files closed after
 * writing: `backingChanges`'s `mapped`), or undefined when only a full look can tell. Added: the files a live box
 * process maps for writing now (read after the barrier: a mapping released before it sent its close; one still held
 * may have written anything). Required: the commands ran in bwrap (the project its own mount: a hard link can only
 * join two of its names) and no file changed has a second name (a write through one sends no event naming the other).
 */
export async function segmentEndPaths(
  project: string,
  seen: readonly string[],
): Promise<string[] | undefined> {
  const paths = outermost([...seen, ...mappedForWriting(project)]);
  const exact =
    paths.length <= MAX_WATCHED_PATHS &&
    (await detectSandbox()).kind === 'bwrap' &&
    !linkedAmong(project, paths, DEPENDENCY_DIRS);
  return exact ? paths : undefined;
}

/** The watch mark of the last tree made in `stateDir` (a segment's start: its protected paths' photograph's too). */
export function lastTreeMark(stateDir: string): WatchMark | undefined {
  return readWatchRecord(stateDir)?.mark;
}

/** Where the last tree's watch mark is kept (backingWatch.ts): its index's stamp and tree, the mark it left. */
const WATCH_FILE = 'watch.json';

type WatchRecord = { kind: Kind; mark: WatchMark; stamp: string; tree: string; gitDir?: string };

/** The last tree's record, when it was made for a folder of this kind (any, without one); else undefined. */
function readWatchRecord(stateDir: string, kind?: Kind): WatchRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(stateDir, WATCH_FILE), 'utf8')) as WatchRecord;
    if (
      (kind !== undefined && record.kind !== kind) ||
      typeof record.tree !== 'string' ||
      typeof record.stamp !== 'string'
    )
      return undefined;
    return record;
  } catch {
    return undefined;
  }
}

function writeWatchRecord(stateDir: string, record: WatchRecord | undefined): void {
  const file = path.join(stateDir, WATCH_FILE);
  if (record === undefined) {
    fs.rmSync(file, { force: true });
    return;
  }
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(record));
  fs.renameSync(temp, file);
}

/** Records the folder's tree as the start of a turn (segment); an unrecorded earlier start is kept. */
export async function startDirectTurn(stateDir: string, project: string): Promise<void> {
  const file = path.join(stateDir, START_FILE);
  if (readStart(stateDir) !== undefined) return;
  const { kind, gitDir } = await stickyKindOf(stateDir, project);
  const tree = await folderTree(stateDir, project, kind, gitDir);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify({ tree, kind }));
  fs.renameSync(temp, file);
}

/** Where the kind of a session's first start is kept. */
const FIRST_KIND_FILE = 'first-kind.json';

/**
 * The kind for a start: a repository only when the session's first start found the folder to be one. A
 * `.git` that appeared later may be a command's (config, filters, hooks: code a git outside the box would
 * run), so Keel's git never works in it (test/attacks/directCrashGitConfig.test.ts); the shadow serves.
 */
async function stickyKindOf(stateDir: string, project: string): Promise<{ kind: Kind; gitDir?: string }> {
  const file = path.join(stateDir, FIRST_KIND_FILE);
  let first: unknown;
  try {
    first = (JSON.parse(fs.readFileSync(file, 'utf8')) as { kind?: unknown }).kind;
  } catch {
    first = undefined;
  }
  if (first === 'shadow') return { kind: 'shadow' };
  const now = await kindOf(project);
  if (first === undefined) {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ kind: now.kind }));
  }
  return now;
}

function readStart(stateDir: string): { tree: string; kind: Kind } | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(stateDir, START_FILE), 'utf8')) as unknown;
    const { tree, kind } = parsed as { tree?: unknown; kind?: unknown };
    if (typeof tree !== 'string' || !/^[0-9a-f]{40,64}$/.test(tree)) return undefined;
    return { tree, kind: kind === 'repository' ? 'repository' : 'shadow' };
  } catch {
    return undefined;
  }
}

/** Forgets the start record once its change is in the log (or there was none). */
export function clearDirectTurn(stateDir: string): void {
  fs.rmSync(path.join(stateDir, START_FILE), { force: true });
}

/** What a direct turn changed: the files (both sides kept when ≤ 64 MiB) and the patch written, or nothing. */
export type DirectChange = { files: ChangedFile[]; patchFile?: string; problem?: string };

/**
 * What changed in the folder since the turn's start record (undefined when there is none): each file's
 * sha256 before and after, with its modes when both sides' bytes were kept in `store`. Protected paths
 * (held back by directHeld.ts) and nested repositories are left out. Writes the binary patch to `patchFile`
 * when something changed. The start record stays until `clearDirectTurn`.
 */
export async function directTurnChanges(
  stateDir: string,
  project: string,
  store: string,
  patchFile: string,
): Promise<DirectChange | undefined> {
  const recorded = readStart(stateDir);
  if (recorded === undefined) return undefined;
  const start = recorded.tree;
  const side = sideOf(stateDir, project, recorded.kind);
  let tree: string;
  try {
    // What the turn's own tools did: a command can change a file with no event fs.watch sees (a write through a shared
    // memory map), and this tree is what the turn's change and its revert are made of: `end` (see folderTree).
    tree = await folderTree(stateDir, project, recorded.kind, undefined, { end: true });
  } catch (error) {
    // The repository the start was taken in is gone (its .git removed meanwhile): nothing can be compared.
    if (recorded.kind === 'repository') return { files: [], problem: String(error) };
    throw error;
  }
  const changes = (await diffTrees(side, start, tree)).filter(
    (change) => isFileMode(change.oldMode) && isFileMode(change.newMode) && heldReason(change.path) === null,
  );
  if (changes.length === 0) return { files: [] };
  const kept = await keepBlobs(side, store, changes);
  const files = changes.map((change): ChangedFile => {
    const before = isZeroOid(change.oldOid) ? null : kept.get(change.oldOid);
    const after = isZeroOid(change.newOid) ? null : kept.get(change.newOid);
    return {
      path: change.path,
      preHash: before === null ? null : (before?.sha256 ?? null),
      postHash: after === null ? null : (after?.sha256 ?? null),
      ...(before?.kept ? { preMode: change.oldMode as FileMode } : {}),
      ...(after?.kept ? { postMode: change.newMode as FileMode } : {}),
    };
  });
  fs.mkdirSync(path.dirname(patchFile), { recursive: true });
  const { stdout } = await runGit(side, ['diff-tree', '-r', '-p', '--binary', '--no-renames', start, tree]);
  fs.writeFileSync(patchFile, stdout);
  return { files, patchFile };
}

/** A mode a recorded change can carry (regular, executable, link), or git's "nothing here". */
function isFileMode(mode: string): boolean {
  return mode === '000000' || mode === '100644' || mode === '100755' || mode === '120000';
}

/**
 * Keeps the bytes of every blob the changes name in the history store; returns each blob's sha256 and
 * whether it was kept (not past KEEP_MAX_BYTES). One `cat-file --batch-check` and one `--batch` in all.
 */
async function keepBlobs(
  side: GitSide,
  store: string,
  changes: readonly TreeChange[],
): Promise<Map<string, { sha256: string; kept: boolean }>> {
  const oids = [...new Set(changes.flatMap((c) => [c.oldOid, c.newOid]).filter((oid) => !isZeroOid(oid)))];
  const sizes = new Map<string, number>();
  const { stdout: checked } = await runGit(side, ['cat-file', '--batch-check'], {
    input: `${oids.join('\n')}\n`,
  });
  for (const line of checked.toString('utf8').split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (oid !== undefined && type === 'blob' && size !== undefined) sizes.set(oid, Number(size));
  }
  const small = oids.filter((oid) => (sizes.get(oid) ?? Infinity) <= KEEP_MAX_BYTES);
  const found = new Map<string, { sha256: string; kept: boolean }>();
  if (small.length > 0) {
    const { stdout } = await runGit(side, ['cat-file', '--batch'], { input: `${small.join('\n')}\n` });
    let at = 0;
    for (const oid of small) {
      const headerEnd = stdout.indexOf(0x0a, at);
      const size = Number(stdout.subarray(at, headerEnd).toString('utf8').split(' ')[2]);
      const bytes = stdout.subarray(headerEnd + 1, headerEnd + 1 + size);
      found.set(oid, { sha256: keepBytes(store, Buffer.from(bytes)), kept: true });
      at = headerEnd + 1 + size + 1;
    }
  }
  for (const oid of oids.filter((o) => !found.has(o))) {
    // Too large to keep: its change is listed (by hash) but cannot be reverted.
    const hash = createHash('sha256');
    for await (const chunk of streamBlob(side, oid)) hash.update(chunk as Buffer);
    found.set(oid, { sha256: hash.digest('hex'), kept: false });
  }
  return found;
}
