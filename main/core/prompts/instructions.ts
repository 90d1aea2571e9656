import { createHash } from 'node:crypto';
import path from 'node:path';
import type { InstructionFile } from '../../common/events.js';
import { LINKED_DEPENDENCY_DIRS } from '../persistent/extras.js';
import { truncateUtf8 } from '../subagents/result.js';
import { readFileConfined } from '../../sandbox/paths.js';
import { listFolder } from './instructionFolders.js';

/**
 * Project instructions: the AGENTS.md files of a project (CLAUDE.md in a folder without one), found at the
 * project root and in the folders under it, capped in size. A turn reads them when it starts and records
 * them as `instructions_loaded` when they differ from the newest such event (main/core/turn/instructions.ts).
 */

/** The names looked for in each folder, in order of preference: the first one present is taken. */
export const INSTRUCTION_FILE_NAMES: readonly string[] = ['AGENTS.md', 'CLAUDE.md'];

/** Bytes of instruction text the model gets in all, over every file: the rest is cut with a note. */
export const INSTRUCTIONS_CAP_BYTES = 32 * 1024;

/** Bytes read (and hashed) of one file at most; a change past this point goes unnoticed. */
const MAX_FILE_BYTES = 1024 * 1024;

/** Folders visited at most, breadth first, so a huge tree costs a bounded walk. */
const MAX_FOLDERS = 2_000;

/** Folders that never hold the project's own instructions: dependencies and build output. */
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([
  ...LINKED_DEPENDENCY_DIRS,
  'vendor',
  'dist',
  'build',
  'out',
  'target',
  '__pycache__',
]);

/** Where a turn looks for instructions and how their text is cleaned before the model sees it. */
export type InstructionsSource = {
  /** Real path of the tools' workspace: every read is confined to it (a link out of it is skipped). */
  workspace: string;
  /** The project's root, relative to the workspace ('.' when the workspace is the project). */
  projectRoot: string;
  /** Redacts secrets from the text, as tool output is redacted. */
  redact: (text: string) => string;
  /** Total cap in bytes (default INSTRUCTIONS_CAP_BYTES). */
  capBytes?: number;
};

/**
 * Finds and reads the project's instruction files: in each folder from the root down (breadth first, names
 * sorted; dot-folders, dependency and build folders and symbolic links to folders skipped) the first of
 * INSTRUCTION_FILE_NAMES that is a regular file inside the workspace. Paths are project-relative, root
 * first. Text beyond the cap is cut at a UTF-8 boundary (`truncated`); a file that does not fit at all is
 * listed with empty content. Unreadable files are left out. Throws only when the root cannot be listed.
 */
export async function readProjectInstructions(source: InstructionsSource): Promise<InstructionFile[]> {
  const found = await findInstructionFiles(path.resolve(source.workspace, source.projectRoot));
  let remaining = source.capBytes ?? INSTRUCTIONS_CAP_BYTES;
  const files: InstructionFile[] = [];
  for (const relative of found) {
    const inWorkspace = path.posix.join(source.projectRoot.split(path.sep).join('/'), relative);
    let read;
    try {
      read = await readFileConfined(source.workspace, inWorkspace, {
        argName: 'path',
        maxBytes: MAX_FILE_BYTES,
        truncate: true,
      });
    } catch {
      continue; // a link out of the workspace, a FIFO, a file gone meanwhile: not instructions
    }
    const sha256 = createHash('sha256').update(read.data).digest('hex');
    const text = source.redact(read.data.toString('utf8'));
    const cut = truncateUtf8(text, remaining);
    remaining -= Buffer.byteLength(cut.text, 'utf8');
    const truncated = cut.truncated || read.truncated;
    files.push({
      path: relative,
      sha256,
      size: read.size,
      content: cut.text,
      ...(truncated ? { truncated: true } : {}),
    });
  }
  return files;
}

/** True when both lists name the same files with the same bytes, in the same order. */
export function sameInstructionFiles(a: readonly InstructionFile[], b: readonly InstructionFile[]): boolean {
  return (
    a.length === b.length &&
    a.every((file, i) => file.path === b[i]?.path && file.sha256 === b[i]?.sha256 && file.size === b[i]?.size)
  );
}

/**
 * Project-relative paths (`/`-separated) of the instruction file of each folder, root first: breadth first, one
 * level's folders listed together (their readdirs overlap), each listing kept while its folder is unchanged
 * (instructionFolders.ts). The order is the one-folder-at-a-time queue's: a level is its parents' subfolders in
 * the parents' order.
 */
async function findInstructionFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const skip = (name: string) => name.startsWith('.') || SKIPPED_FOLDERS.has(name);
  let level: string[] = [''];
  let visited = 0;
  while (level.length > 0 && visited < MAX_FOLDERS) {
    const folders = level.slice(0, MAX_FOLDERS - visited);
    visited += folders.length;
    const listings = await Promise.all(
      folders.map((folder) =>
        listFolder(path.join(root, folder), INSTRUCTION_FILE_NAMES).catch((error: unknown) => {
          if (folder === '') throw error;
          return undefined; // a folder gone or unreadable meanwhile: nothing of it
        }),
      ),
    );
    level = [];
    folders.forEach((folder, i) => {
      const listing = listings[i];
      if (listing === undefined) return;
      if (listing.file !== undefined) found.push(folder === '' ? listing.file : `${folder}/${listing.file}`);
      for (const sub of listing.subfolders)
        if (!skip(sub)) level.push(folder === '' ? sub : `${folder}/${sub}`);
    });
  }
  return found;
}
