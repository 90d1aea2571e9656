// What a checkout carries besides the tracked files: links to the backing folder's dependency folders and
// copies of its small ignored files (.env, local config), kept in step at every reset. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { resolveInWorkspace } from '../../sandbox/paths.js';
import { runGit, splitNul } from './git.js';
import { backingSide, isRealFolderBelow, type CheckoutContext, type CheckoutState } from './state.js';
import { lstatOrUndefined, removeConfined } from './streamWrite.js';

/**
 * Dependency folders a checkout links to (read-only use) instead of copying: ignored by the project and
 * often hundreds of megabytes. Every other ignored folder (build output, caches) starts empty in a checkout.
 */
export const LINKED_DEPENDENCY_DIRS: readonly string[] = [
  'node_modules',
  'bower_components',
  '.venv',
  'venv',
  '.tox',
  '__pypackages__',
];

/** Ignored single files (.env, local config) copied into a checkout, so the project still runs there. */
const IGNORED_COPY_MAX_BYTES = 1024 * 1024;
const IGNORED_COPY_MAX_FILES = 200;

/**
 * Links dependency folders and copies small ignored files from the backing folder (see
 * LINKED_DEPENDENCY_DIRS); with `relist` false the ignored files are not listed again, only the known
 * links and copies are checked (a link or copy the session removed comes back).
 */
export async function syncExtras(context: CheckoutContext, relist = true): Promise<void> {
  const { state } = context;
  const { backing, checkout } = state;
  const links: string[] = [];
  const files: string[] = [];
  if (relist) {
    const listing = await runGit(backingSide(context), [
      'ls-files',
      '-z',
      '--others',
      '--ignored',
      '--exclude-standard',
      '--directory',
    ]);
    for (const entry of splitNul(listing.stdout)) {
      if (entry.endsWith('/')) {
        const rel = entry.slice(0, -1);
        if (LINKED_DEPENDENCY_DIRS.includes(path.posix.basename(rel))) links.push(rel);
      } else if (files.length < IGNORED_COPY_MAX_FILES) files.push(entry);
    }
  } else {
    // The last listing, minus dependency folders the backing folder no longer has.
    links.push(...state.links.filter((rel) => lstatOrUndefined(path.join(backing, rel))?.isDirectory()));
    files.push(...Object.keys(state.copies));
  }
  for (const stale of state.links.filter((link) => !links.includes(link))) {
    const at = path.join(checkout, stale);
    if (lstatOrUndefined(at)?.isSymbolicLink()) fs.rmSync(at, { force: true });
  }
  const made: string[] = [];
  for (const rel of links) {
    const at = path.join(checkout, rel);
    const target = path.join(backing, rel);
    if (!isRealFolderBelow(checkout, path.dirname(at))) continue;
    const existing = lstatOrUndefined(at);
    if (existing?.isSymbolicLink() && fs.readlinkSync(at) === target) made.push(rel);
    else if (!existing) {
      fs.symlinkSync(target, at);
      made.push(rel);
    }
  }
  if (made.join('\0') !== state.links.join('\0')) {
    state.links = made;
    writeExcludes(context);
  }
  const copies: CheckoutState['copies'] = {};
  for (const rel of files) {
    const source = lstatOrUndefined(path.join(backing, rel));
    if (!source?.isFile() || source.size > IGNORED_COPY_MAX_BYTES) continue;
    copies[rel] = state.copies[rel] ?? { size: -1, mtimeMs: -1, copyMtimeMs: -1 };
  }
  for (const gone of Object.keys(state.copies).filter((rel) => !(rel in copies))) {
    try {
      removeConfined(checkout, gone);
    } catch {
      // Already gone or outside: nothing of ours to remove.
    }
  }
  state.copies = copies;
  refreshCopies(context);
}

/** Copies again the known ignored files whose backing file or copy changed (stat only, no git). */
export function refreshCopies(context: CheckoutContext): void {
  const { state } = context;
  const { backing, checkout } = state;
  for (const [rel, known] of Object.entries(state.copies)) {
    const source = lstatOrUndefined(path.join(backing, rel));
    const copy = lstatOrUndefined(path.join(checkout, rel));
    if (
      source?.isFile() &&
      copy?.isFile() &&
      known.size === source.size &&
      known.mtimeMs === source.mtimeMs &&
      known.copyMtimeMs === copy.mtimeMs
    ) {
      continue;
    }
    try {
      if (!source?.isFile()) {
        removeConfined(checkout, rel);
        delete state.copies[rel];
        continue;
      }
      const real = resolveInWorkspace(checkout, rel, { argName: 'path', forWrite: true });
      fs.mkdirSync(path.dirname(real), { recursive: true });
      fs.rmSync(real, { force: true });
      fs.copyFileSync(path.join(backing, rel), real, fs.constants.COPYFILE_EXCL);
      const copied = fs.statSync(real);
      state.copies[rel] = { size: source.size, mtimeMs: source.mtimeMs, copyMtimeMs: copied.mtimeMs };
    } catch {
      // A copy the checkout cannot take (a folder of that name, a link the model planted) is skipped.
      delete state.copies[rel];
    }
  }
}

/** Writes the excludes file git reads for the checkout: dependency folders and the links made. */
export function writeExcludes(context: CheckoutContext): void {
  const lines = [
    ...LINKED_DEPENDENCY_DIRS.map((name) => `${name}/`),
    ...context.state.links.map((link) => `/${escapeGlob(link)}`),
  ];
  fs.writeFileSync(path.join(context.location.stateDir, 'exclude'), lines.join('\n') + '\n');
}

function escapeGlob(text: string): string {
  return text.replace(/([*?[\]\\!#])/g, '\\$1');
}
