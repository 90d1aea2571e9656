import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CustomFiles, CustomFile } from './index.js';

/** Layout folders, in the order files are listed (precedence is `types.ts`'s, not this order). */
const LAYOUTS = [
  { layout: 'keel', folder: '.keel' },
  { layout: 'claude', folder: '.claude' },
  { layout: 'agents', folder: '.agents' },
] as const;

/** A definition file larger than this is not read (a prompt, not a data set). */
export const CUSTOM_FILE_MAX_BYTES = 256 * 1024;
/** Files of one kind read per folder at most (a walk never runs away in a huge tree). */
const MAX_FILES = 500;

export type ReadCustomOptions = {
  /** The user's home folder (`~`): its files are the user's own and trusted. */
  userHome?: string;
  /** The project folder. */
  project?: string;
  /**
   * Which project files may take effect: the project's trust (main/core/setup, by content hash). Absent:
   * none does; a project file never counts before the user approved it.
   */
  trusted?: (file: CustomFile) => boolean;
};

/**
 * Reads the skills, commands and agents of the user's home and the project in the `.claude/`, `.agents/` and
 * `.keel/` layouts: plain files only (a link is skipped, so a project cannot point a command at a file outside
 * it), at most CUSTOM_FILE_MAX_BYTES each. Project files are kept only when `trusted` says so.
 */
export function readCustomFiles(options: ReadCustomOptions): CustomFiles {
  const files: CustomFiles = { skills: [], commands: [], agents: [] };
  const roots: { scope: CustomFile['scope']; root: string; shownRoot: string }[] = [];
  if (options.userHome) roots.push({ scope: 'user', root: options.userHome, shownRoot: '~/' });
  if (options.project) roots.push({ scope: 'project', root: options.project, shownRoot: '' });
  for (const { scope, root, shownRoot } of roots) {
    for (const { layout, folder } of LAYOUTS) {
      for (const kind of ['skills', 'commands', 'agents'] as const) {
        const base = path.join(root, folder, kind);
        for (const relative of listKind(base, kind)) {
          const absolute = path.join(base, ...relative.split('/'));
          const bytes = readPlain(absolute);
          if (bytes === undefined) continue;
          const file: CustomFile = {
            scope,
            layout,
            shown: `${shownRoot}${folder}/${kind}/${relative}`,
            relative,
            absolute,
            text: bytes.toString('utf8'),
            sha256: createHash('sha256').update(bytes).digest('hex'),
          };
          if (scope === 'project' && !(options.trusted?.(file) ?? false)) continue;
          files[kind].push(file);
        }
      }
    }
  }
  return files;
}

/** Relative paths of a kind's files: `<name>/SKILL.md` for skills, `*.md` (in subfolders too) otherwise. */
function listKind(base: string, kind: keyof CustomFiles): string[] {
  if (kind === 'skills') {
    return entries(base)
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${entry.name}/SKILL.md`)
      .slice(0, MAX_FILES);
  }
  const found: string[] = [];
  const walk = (folder: string, prefix: string, depth: number) => {
    for (const entry of entries(folder)) {
      if (found.length >= MAX_FILES) return;
      if (entry.isDirectory() && depth < 4 && !entry.name.startsWith('.')) {
        walk(path.join(folder, entry.name), `${prefix}${entry.name}/`, depth + 1);
      } else if (entry.isFile() && entry.name.endsWith('.md')) {
        found.push(`${prefix}${entry.name}`);
      }
    }
  };
  walk(base, '', 0);
  return found;
}

function entries(folder: string): fs.Dirent[] {
  try {
    return fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/** A regular file's bytes (never through a link), or undefined. */
function readPlain(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > CUSTOM_FILE_MAX_BYTES) return undefined;
    return fs.readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
