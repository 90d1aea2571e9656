// Held back without a checkout: a `--commit direct` session's commands write the project folder itself, so
// its protected paths (heldBack.ts's rule) are photographed when a turn begins changing files and compared when
// it stops.
// What the turn changed there is put back as it was (the turn's versions kept in the session's artifacts)
// and asked for like a checkout's held-back files; granted, the turn's versions are written. See README.md.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { z } from 'zod';
import { writeSymlinkConfined } from '../../sandbox/paths.js';
import { protectedNameReason } from '../../sandbox/protectedPaths.js';
import { heldReason } from './heldBack.js';
import { lstatOrNone, removeConfined, writeStreamConfined } from './streamWrite.js';
import type { CommittedFile, DirectHeldFile } from './types.js';

/** Folders never walked: dependencies. The root's `.git` is read-only in the box and never walked either. */
const SKIP = new Set(['node_modules']);
/**
 * What of a nested `.git` folder is photographed: what makes a later git in that folder run code or look
 * elsewhere (a command can make one with `git init`; the box pins only the root's). Objects, refs and HEAD
 * run nothing and can be many; `hooks/*.sample` never run.
 */
const NESTED_GIT_WATCHED = new Set(['config', 'config.worktree', 'hooks', 'info', 'commondir', 'gitdir']);
const MAX_DIRS = 20_000;
const MAX_FILES = 200;
const MAX_BYTES = 1 << 20;

const entrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('dir') }),
  z.object({ kind: z.literal('link'), target: z.string() }),
  z.object({ kind: z.literal('file'), mode: z.number(), sha256: z.string(), content: z.string().optional() }),
]);
type Entry = z.infer<typeof entrySchema>;

/**
 * The protected entries of a folder: path (with `/`) → what is there; `complete` false when a bound cut the walk;
 * `topGit`: whether the folder had its own `.git` when photographed (absent in older photographs: it had). As kept in
 * the session's folder, with the watch mark it was taken after (directTurn.ts).
 */
export const protectedSnapshotSchema = z.object({
  complete: z.boolean(),
  entries: z.record(z.string(), entrySchema),
  topGit: z.boolean().optional(),
  mark: z.object({ id: z.string(), seq: z.number(), ignores: z.string() }).optional(),
});
export type ProtectedSnapshot = Omit<z.infer<typeof protectedSnapshotSchema>, 'mark'>;

/** A walk of protected entries under way: what it found, its bounds' counts, the folders left to list. */
type Folder = { rel: string; inside: boolean; nestedGit?: boolean };
type Walk = {
  entries: Record<string, Entry>;
  complete: boolean;
  dirs: number;
  files: number;
  stack: Folder[];
  watchTopGit: boolean;
};

/** Walks `root` (no link followed) and records every entry under a protected name. */
export function snapshotProtected(root: string, options: { watchTopGit?: boolean } = {}): ProtectedSnapshot {
  const topGit = fs.existsSync(path.join(root, '.git'));
  const walk: Walk = {
    entries: {},
    complete: true,
    dirs: 0,
    files: 0,
    stack: [{ rel: '', inside: false }],
    watchTopGit: options.watchTopGit === true,
  };
  listAll(root, walk);
  return { complete: walk.complete, entries: walk.entries, topGit };
}

/** Whether the last `holdDirect` photographed only the changed paths (tests). */
export let lastEndPhotoChanged = false;

/**
 * The photograph `before` brought up to date from the paths changed since it was taken (a watcher's: outermost, every
 * change below them included): entries at or below them dropped, then each photographed again as the walk would
 * (its parent's protection, a nested `.git`'s own rules). Undefined when only the whole walk can answer: `before` was
 * cut by a bound, or the result would be.
 */
export function updatedProtected(
  root: string,
  before: ProtectedSnapshot,
  seen: readonly string[],
  options: { watchTopGit?: boolean } = {},
): ProtectedSnapshot | undefined {
  if (!before.complete) return undefined;
  // A protected file with a second name may have been written through a name outside the project (a user's dotfiles
  // kept as hard links), which sends no event here: photographed again whatever changed.
  const linked = Object.keys(before.entries).filter(
    (rel) => before.entries[rel]?.kind === 'file' && (lstatOrNone(path.join(root, rel))?.nlink ?? 1) > 1,
  );
  const covered = (rel: string) => seen.some((done) => rel === done || rel.startsWith(`${done}/`));
  const changed = [...seen, ...linked.filter((rel) => !covered(rel))];
  const entries = { ...before.entries };
  for (const rel of changed)
    for (const key of Object.keys(entries)) if (key === rel || key.startsWith(`${rel}/`)) delete entries[key];
  const walk: Walk = {
    entries,
    complete: true,
    dirs: 0,
    files: Object.values(entries).filter((entry) => entry.kind !== 'dir').length,
    stack: [],
    watchTopGit: options.watchTopGit === true,
  };
  for (const rel of changed) {
    const segments = rel.split('/');
    if (segments.some((segment) => SKIP.has(segment))) continue;
    if (segments[0] === '.git' && !walk.watchTopGit) continue; // The folder's own repository: never walked.
    const name = segments.pop() as string;
    const parent = segments.join('/');
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(path.join(root, rel));
    } catch {
      continue; // Gone: its entries were dropped above.
    }
    // As the walk reaches it: inside a protected folder when any folder on its way is; a nested `.git`'s own rules.
    const inside = parent !== '' && heldReason(parent) !== null;
    visit(root, walk, { rel: parent, inside, nestedGit: path.posix.basename(parent) === '.git' }, name, stat);
  }
  listAll(root, walk);
  return walk.complete ? { complete: true, entries: walk.entries, topGit: before.topGit } : undefined;
}

/** Lists the walk's folders until none is left (or a bound cuts it). */
function listAll(root: string, walk: Walk): void {
  while (walk.stack.length > 0) {
    const folder = walk.stack.pop() as Folder;
    if (++walk.dirs > MAX_DIRS) {
      walk.complete = false;
      return;
    }
    let listing: fs.Dirent[];
    try {
      listing = fs.readdirSync(path.join(root, folder.rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const dirent of listing) visit(root, walk, folder, dirent.name, dirent);
  }
}

/** One entry of `folder`: recorded when protected, a folder queued to be listed. */
function visit(
  root: string,
  walk: Walk,
  folder: Folder,
  name: string,
  kind: { isDirectory(): boolean; isSymbolicLink(): boolean; isFile(): boolean },
): void {
  const { rel, inside, nestedGit } = folder;
  if (SKIP.has(name)) return;
  if (nestedGit === true && !NESTED_GIT_WATCHED.has(name)) return;
  if (name.endsWith('.sample') && rel.endsWith('.git/hooks')) return;
  const child = rel === '' ? name : `${rel}/${name}`;
  // The folder being walked is not protected (else `inside`): only this name can make the child so (heldReason's
  // rule, one segment at a time: at 80,000 files the whole path's check per entry was most of the walk).
  const held = inside || protectedNameReason(name) !== null;
  if (kind.isDirectory()) {
    // The folder's own repository is read-only in the box; one a turn made is watched like a nested one.
    if (name === '.git' && rel === '' && !walk.watchTopGit) return;
    if (held) walk.entries[child] = { kind: 'dir' };
    walk.stack.push({ rel: child, inside: held, ...(name === '.git' ? { nestedGit: true } : {}) });
    return;
  }
  if (!held) return;
  if (++walk.files > MAX_FILES) {
    walk.complete = false;
    return;
  }
  const full = path.join(root, child);
  if (kind.isSymbolicLink()) {
    walk.entries[child] = { kind: 'link', target: fs.readlinkSync(full) };
  } else if (kind.isFile()) {
    const stat = fs.lstatSync(full);
    const bytes = stat.size <= MAX_BYTES ? fs.readFileSync(full) : undefined;
    const sha256 = createHash('sha256')
      .update(bytes ?? `${stat.size}:${stat.mtimeMs}`)
      .digest('hex');
    walk.entries[child] = {
      kind: 'file',
      mode: stat.mode & 0o777,
      sha256,
      ...(bytes ? { content: bytes.toString('base64') } : {}),
    };
  }
}

const same = (a: Entry | undefined, b: Entry | undefined): boolean => {
  if (a === undefined || b === undefined) return a === b;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'link' && b.kind === 'link') return a.target === b.target;
  if (a.kind === 'file' && b.kind === 'file') return a.sha256 === b.sha256 && a.mode === b.mode;
  return true;
};

const textOf = (entry: Entry | undefined): string =>
  entry?.kind === 'file'
    ? entry.content !== undefined
      ? Buffer.from(entry.content, 'base64').toString('utf8')
      : '[larger than 1 MiB]\n'
    : entry?.kind === 'link'
      ? `[link to ${entry.target}]\n`
      : '';

/**
 * Puts back every protected file or link that differs between `before` and the folder now, keeping the
 * turn's version as an artifact (`<artifactStem>/<path>`); returns what was held and its diff. A file too
 * big to have been photographed is left as the turn made it and named in the diff only.
 */
export async function holdDirect(
  root: string,
  before: ProtectedSnapshot,
  options: { artifactsDir: string; artifactStem: string; changed?: readonly string[] },
): Promise<{ files: DirectHeldFile[]; diff: string; after: ProtectedSnapshot }> {
  const watchTopGit = before.topGit === false;
  // The paths changed since `before` (the watcher's, when it can vouch for the segment: directChanges.ts
  // `segmentEndPaths`): only they are photographed again; else the whole walk.
  const updated =
    options.changed === undefined
      ? undefined
      : updatedProtected(root, before, options.changed, { watchTopGit });
  lastEndPhotoChanged = updated !== undefined;
  const after = updated ?? snapshotProtected(root, { watchTopGit });
  const paths = [...new Set([...Object.keys(before.entries), ...Object.keys(after.entries)])].sort();
  const files: DirectHeldFile[] = [];
  let diff = '';
  for (const rel of paths) {
    const was = before.entries[rel];
    const now = after.entries[rel];
    if (same(was, now) || was?.kind === 'dir' || now?.kind === 'dir') continue;
    diff += createTwoFilesPatch(`a/${rel}`, `b/${rel}`, textOf(was), textOf(now));
    if (
      (was?.kind === 'file' && was.content === undefined) ||
      (now?.kind === 'file' && now.content === undefined)
    )
      continue;
    const held: DirectHeldFile = {
      path: rel,
      reason: heldReason(rel) ?? 'it is protected',
      status: was === undefined ? 'added' : now === undefined ? 'deleted' : 'modified',
      beforeSha256: was?.kind === 'file' ? was.sha256 : null,
    };
    if (now?.kind === 'file') {
      const artifact = `${options.artifactStem}/${rel}`;
      await writeStreamConfined(options.artifactsDir, artifact, Buffer.from(now.content as string, 'base64'));
      held.after = { kind: 'file', mode: now.mode, sha256: now.sha256, artifact };
    } else if (now?.kind === 'link') {
      held.after = { kind: 'link', target: now.target };
    }
    await restore(root, rel, was);
    files.push(held);
  }
  // Folders the turn made under protected names and left empty now go too.
  for (const rel of paths.filter((p) => after.entries[p]?.kind === 'dir' && !before.entries[p]).reverse()) {
    try {
      fs.rmdirSync(path.join(root, rel));
    } catch {
      // Not empty (a file too big to hold, or one made meanwhile): it stays.
    }
  }
  return { files, diff, after };
}

async function restore(root: string, rel: string, was: Entry | undefined): Promise<void> {
  if (was === undefined) return removeConfined(root, rel);
  if (was.kind === 'link') {
    writeSymlinkConfined(root, rel, was.target, { argName: 'path', allowProtected: true });
  } else if (was.kind === 'file') {
    await writeStreamConfined(root, rel, Buffer.from(was.content as string, 'base64'), { mode: was.mode });
  }
}

/**
 * Writes granted direct held files: each only when the folder still holds what was put back. A file that
 * already holds the granted version (a run of this killed while writing: the commit intent) counts as written,
 * with the side it replaced. `afterEachWrite` runs after each file written (a crash point).
 */
export async function applyDirect(
  root: string,
  files: readonly DirectHeldFile[],
  artifactsDir: string,
  afterEachWrite: () => void = () => undefined,
): Promise<{ files: CommittedFile[]; conflicts: string[] }> {
  const written: CommittedFile[] = [];
  const conflicts: string[] = [];
  for (const file of files) {
    const current = snapshotEntry(root, file.path);
    const currentSha = current?.kind === 'file' ? current.sha256 : null;
    const before = file.beforeSha256 ?? null;
    const wanted =
      file.after === undefined ? null : file.after.kind === 'file' ? file.after.sha256 : undefined;
    if (current?.kind !== 'link' && currentSha !== before && wanted !== undefined && currentSha === wanted) {
      written.push({ path: file.path, preHash: before, postHash: wanted });
      continue;
    }
    if (current?.kind === 'link' || currentSha !== before) {
      conflicts.push(file.path);
      continue;
    }
    if (file.after === undefined) {
      removeConfined(root, file.path);
      written.push({ path: file.path, preHash: currentSha, postHash: null });
    } else if (file.after.kind === 'link') {
      writeSymlinkConfined(root, file.path, file.after.target, { argName: 'path', allowProtected: true });
      written.push({ path: file.path, preHash: currentSha, postHash: null });
    } else {
      const bytes = fs.readFileSync(path.join(artifactsDir, file.after.artifact));
      const result = await writeStreamConfined(root, file.path, bytes, { mode: file.after.mode });
      written.push({ path: file.path, preHash: currentSha, postHash: result.sha256 });
    }
    afterEachWrite();
  }
  return { files: written, conflicts };
}

function snapshotEntry(root: string, rel: string): Entry | undefined {
  const full = path.join(root, rel);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(full);
  } catch {
    return undefined;
  }
  if (stat.isSymbolicLink()) return { kind: 'link', target: fs.readlinkSync(full) };
  if (!stat.isFile()) return { kind: 'dir' };
  const sha256 = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
  return { kind: 'file', mode: stat.mode & 0o777, sha256 };
}
