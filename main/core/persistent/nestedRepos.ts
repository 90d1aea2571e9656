// A git repository the session made inside its checkout (`cd sub && git init`): git's status names it
// `sub/` and a commit cannot carry it (git would stage a gitlink, or nothing). Its files are not dropped
// silently: they are kept as artifacts and asked for like protected files (the request shows them and what
// the repository's config held); its `.git` never reaches the backing folder. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { writeStreamConfined } from './streamWrite.js';
import type { NestedHold } from './types.js';

const MAX_FILES = 200;
const MAX_BYTES = 1 << 20;
/** At most this much of a nested repository's config is shown in the request. */
const MAX_CONFIG_SHOWN = 16 * 1024;

/**
 * Keeps the files of each nested repository `repos` (relative folders of `checkout`, no link followed; its
 * `.git` and any `.git` below it left out) as artifacts under `<artifactStem>/nested/`, then removes the
 * repository from the checkout so it is asked for once. Returns what was kept and the diff to show.
 */
export async function holdNestedRepos(
  checkout: string,
  repos: readonly string[],
  options: { artifactsDir: string; artifactStem: string },
): Promise<NestedHold> {
  const hold: NestedHold = { repos: [], files: [], skipped: [], diff: '' };
  for (const repo of repos) {
    const rel = repo.replace(/\/+$/, '');
    const full = path.join(checkout, rel);
    if (!isRealFolderBelow(checkout, rel)) continue;
    hold.repos.push(`${rel}/`);
    hold.diff += configShown(full, rel);
    const stack = [rel];
    while (stack.length > 0) {
      const folder = stack.pop() as string;
      let listing: fs.Dirent[];
      try {
        listing = fs.readdirSync(path.join(checkout, folder), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const dirent of listing.sort((a, b) => a.name.localeCompare(b.name))) {
        const child = `${folder}/${dirent.name}`;
        if (dirent.name === '.git') continue;
        if (dirent.isDirectory()) {
          stack.push(child);
          continue;
        }
        await keep(checkout, child, dirent, hold, options);
      }
    }
    fs.rmSync(full, { recursive: true, force: true });
  }
  return hold;
}

async function keep(
  checkout: string,
  rel: string,
  dirent: fs.Dirent,
  hold: NestedHold,
  options: { artifactsDir: string; artifactStem: string },
): Promise<void> {
  const full = path.join(checkout, rel);
  const reason = 'it was in a git repository the turn made inside the checkout, which a commit cannot carry';
  if (hold.files.length >= MAX_FILES) {
    hold.skipped.push(rel);
    return;
  }
  if (dirent.isSymbolicLink()) {
    const target = fs.readlinkSync(full);
    hold.files.push({
      path: rel,
      reason,
      status: 'added',
      after: { kind: 'link', target },
      beforeSha256: null,
    });
    hold.diff += section(rel, '', `[link to ${target}]\n`);
    return;
  }
  const stat = fs.lstatSync(full);
  if (!dirent.isFile() || stat.size > MAX_BYTES) {
    hold.skipped.push(rel);
    return;
  }
  const bytes = fs.readFileSync(full);
  const artifact = `${options.artifactStem}/nested/${rel}`;
  const written = await writeStreamConfined(options.artifactsDir, artifact, bytes);
  hold.files.push({
    path: rel,
    reason,
    status: 'added',
    after: { kind: 'file', mode: stat.mode & 0o777, sha256: written.sha256, artifact },
    beforeSha256: null,
  });
  hold.diff += section(rel, '', bytes.toString('utf8'));
}

/** The nested repository's config as a note in the diff: what it would run, never written anywhere. */
function configShown(repo: string, rel: string): string {
  try {
    const file = path.join(repo, '.git', 'config');
    if (!fs.lstatSync(file).isFile()) return '';
    const text = fs.readFileSync(file, 'utf8').slice(0, MAX_CONFIG_SHOWN);
    return section(`${rel}/.git/config (never written)`, '', text);
  } catch {
    return '';
  }
}

/** One file's section of the diff, headed like git's so the patch redactor finds `.env` files' values. */
function section(rel: string, before: string, after: string): string {
  return `diff --git a/${rel} b/${rel}\n${createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before, after)}`;
}

/** True when every part of `rel` below `root` is a real folder (no link), so removing it stays inside. */
function isRealFolderBelow(root: string, rel: string): boolean {
  let at = root;
  for (const part of rel.split('/')) {
    if (part === '' || part === '.' || part === '..') return false;
    at = path.join(at, part);
    try {
      const stat = fs.lstatSync(at);
      if (!stat.isDirectory() || stat.isSymbolicLink()) return false;
    } catch {
      return false;
    }
  }
  return true;
}
