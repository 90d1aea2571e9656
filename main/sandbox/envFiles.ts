// Where redaction's .env values come from: the workspace's .env* files, found without a window that decoys
// can fill, and what the search could not cover, said (issue #38).
import fs from 'node:fs';
import path from 'node:path';
import { readFileConfinedSync } from './confinedRead.js';

/** The bounds of the search: none is a count of .env files, so decoys cannot fill a window. */
export type EnvSearchLimits = {
  /** One .env file is read up to this much (a longer one: its start, and the cut is said). */
  fileBytes: number;
  /** All .env files together, read in order of priority (real before templates, shallow before deep). */
  totalBytes: number;
  /** Directory entries the search looks at before it stops (and says which folders it left). */
  walkEntries: number;
};

/** 1 MiB a file, 8 MiB in all, 500,000 directory entries (a large monorepo's tree, ~0.5 s). */
export const ENV_SEARCH_LIMITS: EnvSearchLimits = {
  fileBytes: 1024 * 1024,
  totalBytes: 8 * 1024 * 1024,
  walkEntries: 500_000,
};

/** The .env* files found and read (paths relative to the workspace, `/`-separated), and what was left out. */
export type EnvFiles = {
  files: { path: string; text: string }[];
  /** One line per file not read or read in part, and one for folders not searched; empty when all was read. */
  gaps: string[];
};

/** `.env`, `.env.local`, `.env.production`, … any name starting with `.env`. */
const ENV_FILE = /^\.env/i;
/** Templates (`.env.example`, `.env.sample`, …) usually hold no secrets: read after every other .env file. */
const ENV_TEMPLATE = /\.(?:examples?|samples?|templates?|tmpl|tpl|dist|defaults?)(?:\.|$)/i;
/** Folders never searched: installed packages and git's own. */
const ENV_SKIPPED_FOLDERS = new Set(['node_modules', '.git']);

/**
 * Finds and reads the workspace's .env* files. Not defeatable by count (issue #38: 200 decoy `.env.example`
 * files once filled a 200-file window ahead of the user's `.env`): the walk is breadth-first from the root
 * (the user's own files first), at any depth, bounded by the entries it looks at; the files are read real
 * ones before templates and shallow before deep, bounded by bytes. Whatever a bound leaves out is listed in
 * `gaps`, so it can be said. Never throws. Folders are listed through `cache` (FolderListings: a stat instead of a
 * readdir for a folder unchanged since an earlier search; a view's folders among them, by its layers, for the
 * `views` named: by default those the views' holders of this process mount); undefined lists every folder.
 */
export function findEnvFiles(
  root: string,
  limits: EnvSearchLimits = ENV_SEARCH_LIMITS,
  cache: FolderListings | undefined = sharedListings,
  views: Iterable<LayeredFolder> = mountedViews.values(),
): EnvFiles {
  const found: { file: string; depth: number; template: boolean }[] = [];
  const listings = cache?.usableFor(root, views);
  const gaps: string[] = [];
  const queue: { dir: string; depth: number }[] = [{ dir: '', depth: 0 }];
  let entries = 0;
  let unsearched: string[] = [];
  const unreadable: string[] = [];
  for (let next = 0; next < queue.length; next++) {
    const { dir, depth } = queue[next] as { dir: string; depth: number };
    if (entries >= limits.walkEntries) {
      unsearched = queue.slice(next).map((item) => item.dir);
      break;
    }
    let listing: Listing;
    try {
      listing = listings?.list(path.join(root, dir)) ?? listFolder(path.join(root, dir));
    } catch (error) {
      unreadable.push(`${dir || '.'} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      continue;
    }
    entries += listing.count;
    for (const name of listing.folders)
      queue.push({ dir: dir === '' ? name : `${dir}/${name}`, depth: depth + 1 });
    for (const name of listing.envFiles)
      found.push({
        file: dir === '' ? name : `${dir}/${name}`,
        depth,
        template: ENV_TEMPLATE.test(name.slice(4)),
      });
  }
  found.sort(
    (a, b) =>
      Number(a.template) - Number(b.template) ||
      a.depth - b.depth ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
  );
  const files: { path: string; text: string }[] = [];
  let budget = limits.totalBytes;
  const unread: string[] = [];
  const partial: string[] = [];
  const failed: string[] = [];
  for (const { file } of found) {
    if (budget <= 0) {
      unread.push(file);
      continue;
    }
    let text: string;
    try {
      // Confined: a .env that is a FIFO, a device or a link outside the workspace is skipped, never read.
      const result = readFileConfinedSync(root, file, {
        argName: 'envFile',
        maxBytes: Math.min(limits.fileBytes, budget),
        truncate: true,
      });
      text = result.data.toString('utf8');
      budget -= result.data.length;
      if (result.truncated) partial.push(`${file} (its first ${result.data.length} bytes)`);
    } catch (error) {
      failed.push(`${file} (${(error as { code?: string }).code ?? describe(error)})`);
      continue;
    }
    files.push({ path: file, text });
  }
  if (partial.length > 0)
    gaps.push(
      `${partial.length} .env file(s) read in part (${limits.fileBytes} bytes a file, ${limits.totalBytes} in all): ${listSome(partial)}`,
    );
  if (failed.length > 0) gaps.push(`${failed.length} .env file(s) could not be read: ${listSome(failed)}`);
  if (unread.length > 0)
    gaps.push(
      `${unread.length} .env file(s) not read, the ${limits.totalBytes}-byte budget for .env files ran out: ${listSome(unread)}`,
    );
  if (unsearched.length > 0)
    gaps.push(
      `${unsearched.length} folder(s) not searched for .env files, the search stopped after ${limits.walkEntries} entries: ${listSome(unsearched)}`,
    );
  if (unreadable.length > 0)
    gaps.push(`${unreadable.length} folder(s) could not be searched for .env files: ${listSome(unreadable)}`);
  return { files, gaps };
}

/** What the search keeps of one folder: how many entries it has, its folders to search and its .env* files, by name. */
type Listing = { count: number; folders: string[]; envFiles: string[] };

/** Lists one folder for the search. By name, so what a bound leaves out is the same on every run and every filesystem. */
function listFolder(folder: string): Listing {
  const entries = fs.readdirSync(folder, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const folders: string[] = [];
  const envFiles: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (!ENV_SKIPPED_FOLDERS.has(entry.name)) folders.push(entry.name);
    } else if (ENV_FILE.test(entry.name) && (entry.isFile() || entry.isSymbolicLink())) {
      envFiles.push(entry.name);
    }
  }
  return { count: entries.length, folders, envFiles };
}

/**
 * Linux filesystems whose folders' change times Keel trusts to say a folder's entries are unchanged (statfs
 * magic numbers): ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs. Not overlayfs (a merged folder shows its upper folder's
 * times, so an entry added below it does not move them), FUSE or network filesystems (their times are the server's
 * or cached): their folders are listed every time, but for the copy-on-write views the caller names (LayeredFolder).
 */
const TRUSTED_FILESYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1]);

/**
 * True when `folder` lies on one of those filesystems (Linux only): its local changes are all seen by the kernel
 * that reports them (its times, its inotify events), unlike a network or FUSE filesystem's.
 */
export function onTrustedFilesystem(folder: string): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return TRUSTED_FILESYSTEMS.has(fs.statfsSync(folder).type);
  } catch {
    return false;
  }
}

/** Cached listings at most; past it the cache starts again (a bound on memory, ~1 KB a folder). */
const MAX_CACHED_FOLDERS = 200_000;

/**
 * A copy-on-write view (sandbox/overlayView.ts) as the search reaches it: mounted at `mount`, over `lower`, its
 * changes in `upper`. Each of its folders is the merge of the two layers' folders of the same path, so it is
 * unchanged while both are (a whiteout or an opaque folder is an entry or an xattr of upper's folder: its ctime).
 */
export type LayeredFolder = { mount: string; lower: string; upper: string };

/** The views mounted in this process, by the path the search reaches each at (a holder's root): viewHolder.ts. */
const mountedViews = new Map<string, LayeredFolder>();

/** Tells the search that the folders at and below `view.mount` are a view over its layers. */
export function noteLayeredFolder(view: LayeredFolder): void {
  mountedViews.set(view.mount, view);
}

/** Forgets the views whose mount lies at or below `prefix` (a holder's root, as the holder ends). */
export function forgetLayeredFolders(prefix: string): void {
  for (const mount of mountedViews.keys())
    if (mount === prefix || mount.startsWith(`${prefix}/`)) mountedViews.delete(mount);
}

/** What says a folder is unchanged: its identity and times, or undefined for no folder there. */
type Signature = { dev: number; ino: number; ctimeMs: number; mtimeMs: number } | undefined;

/**
 * The folders' listings of earlier searches, each kept with what says its entries are unchanged (issue #36: a
 * search of an 80,000-file project took ~95 ms, and ran for every turn's redactor and every commit's patch).
 * Adding, removing or renaming an entry sets the folder's ctime to now, and no call can set a ctime back (unlike
 * mtime), so a folder whose device, inode, ctime and mtime are those of its listing has the same entries: it costs
 * a stat, not a readdir. A view's folder is kept by its two layers' folders (keyed by them, not by the mount, which
 * moves when the view is mounted again). The .env files themselves are read again at every search. ctime comes
 * from a clock that moves in ticks (a few ms): a change in the same tick as the listing leaves it equal, so a folder
 * changed less than `racyMs` before it was listed is not kept (listed again next time), as git treats a racily
 * clean file.
 */
export class FolderListings {
  private readonly cached = new Map<string, Listing & { signatures: Signature[] }>();

  constructor(private readonly racyMs = 2000) {}

  /**
   * This cache for a search of `root`, when its filesystem's change times can be trusted (or it holds `views`);
   * else undefined.
   */
  usableFor(
    root: string,
    mounted: Iterable<LayeredFolder> = [],
  ): { list: (folder: string) => Listing } | undefined {
    const views = [...mounted];
    if (process.platform !== 'linux') return undefined;
    const within = (folder: string) =>
      views.find((one) => folder === one.mount || folder.startsWith(`${one.mount}/`));
    let dev: number;
    try {
      // A root inside a view (a checkout's own root) is searched by its layers alone.
      if (within(root) === undefined && !onTrustedFilesystem(root)) return undefined;
      dev = fs.statSync(root).dev;
    } catch {
      return undefined;
    }
    // A view's upper layer holds only the folders the session wrote in: below one upper lacks, upper lacks every
    // folder, so the search (which lists a folder before its subfolders) stats none of them (~800 stats at 80,000 files);
    // below one upper has, the names it holds say which it lacks (one listing of a small folder instead of a stat of
    // each of a wide folder's: 800 in the generated 80,000-file project, ~13 -> ~10 ms a commit's search).
    const upperMissing = new Set<string>();
    const upperNames = new Map<string, Set<string> | undefined>();
    const knownMissingInUpper = (upper: string, rel: string): boolean => {
      const parent = path.dirname(upper);
      if (upperMissing.has(parent)) return true;
      if (rel === '' || rel === path.sep) return false;
      if (!upperNames.has(parent)) {
        let names: Set<string> | undefined;
        try {
          names = new Set(fs.readdirSync(parent));
        } catch {
          names = undefined;
        }
        upperNames.set(parent, names);
      }
      const names = upperNames.get(parent);
      return names !== undefined && !names.has(path.basename(upper));
    };
    return {
      list: (folder) => {
        const view = within(folder);
        if (view !== undefined) {
          const rel = folder.slice(view.mount.length);
          const upper = path.join(view.upper, rel);
          const listing = this.list(
            folder,
            `${view.lower}\0${view.upper}\0${rel}`,
            [path.join(view.lower, rel), upper],
            undefined,
            knownMissingInUpper(upper, rel) ? [1] : [],
          );
          if (listing.missing?.includes(1) === true) upperMissing.add(upper);
          return listing;
        }
        return this.list(folder, folder, [folder], dev);
      },
    };
  }

  /**
   * `folder`'s listing, kept under `key` while the folders `judges` keep their signatures. With `rootDev`, a folder
   * on another device (another filesystem mounted inside the root, not known to keep its times) is not kept.
   */
  private list(
    folder: string,
    key: string,
    judges: readonly string[],
    rootDev?: number,
    knownMissing: readonly number[] = [],
  ): Listing & { missing?: number[] } {
    const now = Date.now();
    const signatures = judges.map((judge, i) => (knownMissing.includes(i) ? undefined : signatureOf(judge)));
    const missing = signatures.flatMap((one, i) => (one === undefined ? [i] : []));
    const known = this.cached.get(key);
    if (known !== undefined && signatures.every((one, i) => sameSignature(one, known.signatures[i])))
      return { ...known, missing };
    const listing = { ...listFolder(folder), missing };
    const settled = signatures.every(
      (one) => one === undefined || (one.ctimeMs < now - this.racyMs && one.mtimeMs < now - this.racyMs),
    );
    const mounted = rootDev !== undefined && signatures[0]?.dev !== rootDev;
    if (settled && !mounted && signatures.some((one) => one !== undefined)) {
      if (this.cached.size >= MAX_CACHED_FOLDERS) this.cached.clear();
      this.cached.set(key, { ...listing, signatures });
    } else {
      this.cached.delete(key);
    }
    return listing;
  }
}

function signatureOf(folder: string): Signature {
  const stat = fs.statSync(folder, { throwIfNoEntry: false });
  return stat === undefined
    ? undefined
    : { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs, mtimeMs: stat.mtimeMs };
}

function sameSignature(a: Signature, b: Signature): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.dev === b.dev && a.ino === b.ino && a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs;
}

/** The process's cache, shared by every search (folders are keyed by their absolute path). */
const sharedListings = new FolderListings();

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 120);
}

function listSome(items: readonly string[], shown = 10, separator = ', '): string {
  const head = items.slice(0, shown).join(separator);
  return items.length > shown ? `${head}${separator}and ${items.length - shown} more` : head;
}

/**
 * One sentence for the user when the .env search left something out (a notice), else undefined: redaction
 * does not know the values of what it could not read.
 */
export function describeEnvGaps(gaps: readonly string[]): string | undefined {
  if (gaps.length === 0) return undefined;
  return `Redaction may miss secrets it was not shown: ${listSome(gaps, 5, '; ')}`;
}
