import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SetupKind, SetupLayout, SetupProblem, SetupScope } from '../../common/setup.js';

/*
 * Where each layout keeps each kind of file, and the walk that finds them under one root (the user's home or
 * a project folder). Files are read as bytes and hashed here; what they mean is parse.ts's job.
 */

/** A file found under a root, read whole. */
export type FoundFile = {
  scope: SetupScope;
  layout: SetupLayout;
  kind: SetupKind;
  /** Absolute path as found (under the root). */
  path: string;
  /** Path relative to the root, `/`-separated: what approvals name. */
  relativePath: string;
  /** The name it is used by: a command's file stem, an agent's file stem, a skill's folder name. */
  name: string;
  /** A command's subfolders under `commands/` (`frontend/ui` for `commands/frontend/ui/x.md`), else ''. */
  namespace: string;
  bytes: Buffer;
  hash: string;
  /** For a skill: the other files of its folder, each hashed (approved with the SKILL.md). */
  resources: FoundFile[];
};

type Location = {
  layout: SetupLayout;
  kind: SetupKind;
  /** Folder under the root. */
  dir: string;
  /** `file`: exactly `dir/<name>`; `tree`: `*.md` at any depth; `flat`: `*.md` in `dir`; `skills`: `dir/<n>/SKILL.md`. */
  shape: 'file' | 'tree' | 'flat' | 'skills';
  name?: string;
  /** Read only in a project (`settings.local.json` is a project's personal file in Claude Code). */
  projectOnly?: boolean;
};

/** Every location read, in the order files are reported (user before project, then this order). */
export const LOCATIONS: readonly Location[] = [
  { layout: 'claude', kind: 'settings', dir: '.claude', shape: 'file', name: 'settings.json' },
  {
    layout: 'claude',
    kind: 'settings',
    dir: '.claude',
    shape: 'file',
    name: 'settings.local.json',
    projectOnly: true,
  },
  { layout: 'claude', kind: 'command', dir: '.claude/commands', shape: 'tree' },
  { layout: 'claude', kind: 'agent', dir: '.claude/agents', shape: 'flat' },
  { layout: 'claude', kind: 'skill', dir: '.claude/skills', shape: 'skills' },
  { layout: 'agents', kind: 'command', dir: '.agents/commands', shape: 'tree' },
  { layout: 'agents', kind: 'agent', dir: '.agents/agents', shape: 'flat' },
  { layout: 'agents', kind: 'skill', dir: '.agents/skills', shape: 'skills' },
  { layout: 'keel', kind: 'settings', dir: '.keel', shape: 'file', name: 'settings.json' },
  { layout: 'keel', kind: 'command', dir: '.keel/commands', shape: 'tree' },
  { layout: 'keel', kind: 'agent', dir: '.keel/agents', shape: 'flat' },
  { layout: 'keel', kind: 'skill', dir: '.keel/skills', shape: 'skills' },
  { layout: 'codex', kind: 'hooks', dir: '.codex', shape: 'file', name: 'hooks.json' },
];

/** A settings, command, agent or SKILL.md file bigger than this is refused (named as a problem). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** A skill's other files: each at most this big, at most this many, this deep. */
export const MAX_RESOURCE_BYTES = 16 * 1024 * 1024;
export const MAX_RESOURCES = 200;
const MAX_DEPTH = 6;
/** At most this many files of one kind under one root (a runaway folder is cut, and said so). */
export const MAX_FILES_PER_LOCATION = 500;

/** Every setup file under `root`; problems for what could not be read (too big, a link leaving the root). */
export function discoverSetupFiles(
  root: string,
  scope: SetupScope,
): { found: FoundFile[]; problems: SetupProblem[] } {
  const found: FoundFile[] = [];
  const problems: SetupProblem[] = [];
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return { found, problems };
  }
  const walker = new Walker(realRoot, scope, problems);
  for (const location of LOCATIONS) {
    if (location.projectOnly && scope !== 'project') continue;
    const dir = path.join(realRoot, location.dir);
    const files: FoundFile[] = [];
    if (location.shape === 'file') {
      const file = walker.read(path.join(dir, location.name as string), location, '', '', MAX_FILE_BYTES);
      // A project's hooks run the scripts beside them (`.claude/hooks/format.sh`): the folder is approved with
      // the file, so a script changed after approval leaves the file waiting for approval again, hooks and all.
      const hooks = path.join(dir, 'hooks');
      if (file && scope === 'project' && walker.exists(hooks)) {
        const scripts = walker.resources(
          hooks,
          location,
          file.name,
          `the hook scripts of ${file.relativePath}`,
        );
        if (scripts !== undefined) {
          file.resources = scripts;
          files.push(file);
        }
      } else if (file) files.push(file);
    } else if (location.shape === 'skills') {
      for (const entry of walker.list(dir)) {
        if (!entry.isDirectory) continue;
        const skillFile = path.join(entry.path, 'SKILL.md');
        if (!walker.exists(skillFile)) continue;
        const skill = walker.read(skillFile, location, entry.name, '', MAX_FILE_BYTES);
        if (!skill) continue;
        const resources = walker.resources(
          entry.path,
          location,
          entry.name,
          `skill "${entry.name}"`,
          'SKILL.md',
        );
        if (resources === undefined) continue;
        skill.resources = resources;
        files.push(skill);
      }
    } else {
      for (const file of walker.markdown(dir, location, location.shape === 'tree' ? MAX_DEPTH : 1))
        files.push(file);
    }
    if (files.length > MAX_FILES_PER_LOCATION) {
      problems.push({
        path: dir,
        line: 1,
        message: `more than ${MAX_FILES_PER_LOCATION} files; only the first are read`,
      });
      files.length = MAX_FILES_PER_LOCATION;
    }
    found.push(...files);
  }
  return { found, problems };
}

type Entry = { name: string; path: string; isDirectory: boolean };

/** Reads under one root; in a project, a link that leads outside the project folder is refused. */
class Walker {
  constructor(
    private readonly root: string,
    private readonly scope: SetupScope,
    private readonly problems: SetupProblem[],
  ) {}

  /** The real path of `file` when it may be read, else undefined (a problem said why, or it is absent). */
  private resolve(file: string): string | undefined {
    let real: string;
    try {
      real = fs.realpathSync(file);
    } catch {
      return undefined;
    }
    if (this.scope === 'project' && real !== this.root && !real.startsWith(this.root + path.sep)) {
      this.problems.push({
        path: file,
        line: 1,
        message: `links outside the project folder (to ${real}); ignored`,
      });
      return undefined;
    }
    return real;
  }

  exists(file: string): boolean {
    try {
      fs.lstatSync(file);
      return true;
    } catch {
      return false;
    }
  }

  list(dir: string): Entry[] {
    const real = this.resolve(dir);
    if (real === undefined) return [];
    let names: string[];
    try {
      names = fs.readdirSync(real).sort();
    } catch {
      return [];
    }
    const entries: Entry[] = [];
    for (const name of names) {
      const full = path.join(dir, name);
      let isDirectory = false;
      try {
        isDirectory = fs.statSync(full).isDirectory();
      } catch {
        continue;
      }
      entries.push({ name, path: full, isDirectory });
    }
    return entries;
  }

  read(
    file: string,
    location: Location,
    name: string,
    namespace: string,
    maxBytes: number,
  ): FoundFile | undefined {
    if (!this.exists(file)) return undefined;
    const real = this.resolve(file);
    if (real === undefined) return undefined;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(real);
    } catch {
      return undefined;
    }
    if (!stat.isFile()) return undefined;
    if (stat.size > maxBytes) {
      this.problems.push({
        path: file,
        line: 1,
        message: `${stat.size} bytes, more than the ${maxBytes} read; ignored`,
      });
      return undefined;
    }
    const bytes = fs.readFileSync(real);
    return {
      scope: this.scope,
      layout: location.layout,
      kind: location.kind,
      path: file,
      relativePath: path.relative(this.root, file).split(path.sep).join('/'),
      name: name || path.basename(file),
      namespace,
      bytes,
      hash: createHash('sha256').update(bytes).digest('hex'),
      resources: [],
    };
  }

  markdown(dir: string, location: Location, depth: number, namespace = ''): FoundFile[] {
    const files: FoundFile[] = [];
    for (const entry of this.list(dir)) {
      if (entry.isDirectory) {
        if (depth > 1) {
          const inner = namespace ? `${namespace}/${entry.name}` : entry.name;
          files.push(...this.markdown(entry.path, location, depth - 1, inner));
        }
      } else if (entry.name.endsWith('.md')) {
        const file = this.read(entry.path, location, entry.name.slice(0, -3), namespace, MAX_FILE_BYTES);
        if (file) files.push(file);
      }
    }
    return files;
  }

  /**
   * The files of a folder approved with one file (a skill's folder, a settings file's hook scripts), `own` left
   * out, each under the file's `name`; undefined (the file is ignored whole) when one cannot be taken. `what`
   * names them in problems.
   */
  resources(
    dir: string,
    location: Location,
    name: string,
    what: string,
    own?: string,
  ): FoundFile[] | undefined {
    const out: FoundFile[] = [];
    const before = this.problems.length;
    const walk = (folder: string, depth: number): boolean => {
      for (const entry of this.list(folder)) {
        if (entry.isDirectory) {
          if (depth >= MAX_DEPTH) continue;
          if (!walk(entry.path, depth + 1)) return false;
          continue;
        }
        if (folder === dir && entry.name === own) continue;
        if (out.length >= MAX_RESOURCES) {
          this.problems.push({
            path: dir,
            line: 1,
            message: `${what} has more than ${MAX_RESOURCES} files; ignored`,
          });
          return false;
        }
        const file = this.read(entry.path, { ...location, kind: 'resource' }, name, '', MAX_RESOURCE_BYTES);
        if (file) out.push(file);
      }
      return true;
    };
    if (!walk(dir, 1)) return undefined;
    // A file that could not be read (too big, a link out) leaves the whole unusable: not half of it.
    if (this.problems.length > before) {
      this.problems.push({
        path: own ? path.join(dir, own) : dir,
        line: 1,
        message: `${what} has a file that cannot be read; ignored`,
      });
      return undefined;
    }
    return out;
  }
}
