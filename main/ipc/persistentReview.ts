import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { existingCheckouts, uncommittedDirs } from '../core/sessions/checkouts.js';
import { readPersistentConfig } from '../core/sessions/layout.js';

/** Files larger than this are listed but not diffed. */
const MAX_DIFF_FILE_BYTES = 1024 * 1024;

/** One dir's uncommitted changes for review. */
export type PersistentDirReview = {
  dir: string;
  commit: 'auto' | 'manual';
  files: { path: string; change: 'added' | 'modified' | 'deleted' }[];
  diff: string;
};

function readText(file: string): string | undefined {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return '';
    if (stat.size > MAX_DIFF_FILE_BYTES) return undefined;
    const buffer = fs.readFileSync(file);
    return buffer.includes(0) ? undefined : buffer.toString('utf8');
  } catch {
    return '';
  }
}

/**
 * The uncommitted changes of a session's Persistent Dir checkouts, each file diffed against the project
 * folder's current version (what applying would change; binary and large files are named, not diffed).
 * Reads only: no lease needed. Undefined for a session without checkouts.
 */
export async function reviewPersistentDirs(
  dataDir: string,
  onlyDir?: string,
): Promise<PersistentDirReview[] | undefined> {
  const config = readPersistentConfig(dataDir);
  if (!config) return undefined;
  const checkouts = new Map(
    existingCheckouts(dataDir, config).map((checkout) => [checkout.spec.name, checkout]),
  );
  const reviews: PersistentDirReview[] = [];
  for (const dir of await uncommittedDirs(dataDir)) {
    if (onlyDir !== undefined && dir.dir !== onlyDir) continue;
    const checkout = checkouts.get(dir.dir);
    const parts: string[] = [];
    for (const file of dir.files) {
      const ours =
        file.status === 'deleted' ? '' : readText(path.join(checkout?.location.checkout ?? '', file.path));
      const theirs = file.status === 'added' ? '' : readText(path.join(checkout?.backing ?? '', file.path));
      if (ours === undefined || theirs === undefined) {
        parts.push(`Binary or large file ${file.path} ${file.status}\n`);
        continue;
      }
      parts.push(
        createTwoFilesPatch(
          file.status === 'added' ? '/dev/null' : `a/${file.path}`,
          file.status === 'deleted' ? '/dev/null' : `b/${file.path}`,
          theirs,
          ours,
          undefined,
          undefined,
          { context: 3 },
        ),
      );
    }
    reviews.push({
      dir: dir.dir,
      commit: dir.commit,
      files: dir.files.map((file) => ({ path: file.path, change: file.status })),
      diff: parts.join(''),
    });
  }
  return reviews;
}
