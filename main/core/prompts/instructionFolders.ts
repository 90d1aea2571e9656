import fs from 'node:fs';

/*
 * The folder walk behind the project's instruction files, run at the start of every turn. Listing every folder
 * of the project each turn cost ~15 ms in Keel's own checkout and ~170 ms at the 2,000-folder cap, on every turn
 * of a long-lived host (the app, `keel serve`). What the walk takes from a folder (its instruction file's name,
 * its subfolders) changes only when its entries do, and any change of a folder's entries (a file added, removed,
 * renamed, a link replaced) moves the folder's mtime and ctime. So each listing is kept with the folder's
 * identity (device, inode, mtime, ctime), and a later walk stats the folder and lists it again only when that
 * identity moved: one stat per folder instead of one readdir.
 *
 * Timestamps come from a coarse clock, so two changes a few milliseconds apart can share an mtime: a folder whose
 * mtime is less than RACY_MS old when it is listed is not kept (as git treats a racily clean file), and any
 * later change then gives it a newer mtime. ctime is in the identity because mtime can be set back (tar, `cp
 * -p` and `rsync -t` restore a folder's time after filling it); ctime cannot.
 */

/** A folder whose mtime is this recent when listed may change again within the same timestamp: not kept. */
const RACY_MS = 2_000;

/** Listings kept in all, over every project this process walks; past it the cache starts again empty. */
const MAX_KEPT = 20_000;

/** What the walk takes from one folder's entries. */
export type FolderListing = {
  /** The first of the wanted names present as a file or a link, if any. */
  file: string | undefined;
  /** Its subfolders (no links), sorted; which of them a walk enters is the walk's rule, not kept here. */
  subfolders: string[];
};

/** How a walk got its listings: from the folder (`listed`) or kept from an earlier walk (`kept`). For tests. */
export const walkCounts = { listed: 0, kept: 0 };

const kept = new Map<string, { identity: string; listing: FolderListing }>();

function identityOf(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/**
 * The listing of `folder` (absolute): the first of `names` present as a file or a link, and its subfolders.
 * Throws what stat or readdir throws (a folder gone, unreadable, not a folder).
 */
export async function listFolder(folder: string, names: readonly string[]): Promise<FolderListing> {
  // stat, as readdir follows a link: the root may be one (a session's checkout); subfolders are listed as non-links.
  const before = fs.statSync(folder);
  if (!before.isDirectory()) throw new Error(`${folder} is not a folder`);
  const identity = identityOf(before);
  const key = `${names.join('\0')}\0${folder}`;
  const known = kept.get(key);
  if (known?.identity === identity) {
    walkCounts.kept += 1;
    return known.listing;
  }
  const entries = await fs.promises.readdir(folder, { withFileTypes: true });
  walkCounts.listed += 1;
  const files = new Set(
    entries.filter((entry) => entry.isFile() || entry.isSymbolicLink()).map((entry) => entry.name),
  );
  const listing: FolderListing = {
    file: names.find((name) => files.has(name)),
    subfolders: entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort(),
  };
  // Kept under the identity seen before the listing: a change while it was read moves it, and the next walk lists
  // the folder again.
  if (before.mtimeMs < Date.now() - RACY_MS) {
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(key, { identity, listing });
  } else {
    kept.delete(key);
  }
  return listing;
}
