import fs from 'node:fs';
import os from 'node:os';
import type { SetupKind, SetupLayout, SetupProblem, SetupScope } from '../../common/setup.js';
import { approvedSetup, readSetupApprovals } from '../../store/setupApprovals.js';
import { discoverSetupFiles, type FoundFile } from './discover.js';
import { parseSetupText } from './parse.js';

/** One file of a skill folder besides its SKILL.md (loaded only when the skill is used). */
export type SetupResource = { path: string; relativePath: string; hash: string; size: number };

/** A setup file that parsed whole, with what its format says. */
export type SetupFile = {
  scope: SetupScope;
  layout: SetupLayout;
  kind: Exclude<SetupKind, 'resource'>;
  /** Absolute path. */
  path: string;
  /** Relative to its root (the user's home or the project), `/`-separated: `.claude/commands/review.md`. */
  relativePath: string;
  /** A command's or agent's file stem, a skill's folder name, the file name of a settings or hooks file. */
  name: string;
  /** A command's subfolders under `commands/` (`frontend` for `commands/frontend/ui.md`), else ''. */
  namespace: string;
  /** The file as UTF-8. */
  text: string;
  /** sha256 (hex) of the file's bytes. */
  hash: string;
  /** Settings and hooks files: the JSON object (validated for the keys Keel acts on). */
  json?: Record<string, unknown>;
  /** Markdown files: the front matter (validated for the format's keys), the body and its first line. */
  frontMatter?: Record<string, unknown>;
  body?: string;
  bodyLine?: number;
  /** Skills: the folder's other files. */
  resources: SetupResource[];
};

/** A project file that is not in effect: never approved (`new`) or approved with other bytes (`changed`). */
export type UntrustedSetupFile = SetupFile & { state: 'new' | 'changed' };

/** What the user brings: the files in effect (trusted), the project's not yet approved, and what was ignored. */
export type LoadedSetup = {
  /** User files, then the project's approved files; each parsed whole. Only these may have any effect. */
  files: SetupFile[];
  /** Project files waiting for approval (`keel trust`); they have no effect. */
  untrusted: UntrustedSetupFile[];
  /** Files ignored whole (malformed, too big, a link out of the project), each with its line. */
  problems: SetupProblem[];
  /** Real path of the project folder ('' without one). */
  project: string;
};

export type LoadSetupOptions = {
  /** Keel's home: where approvals are kept. */
  home: string;
  /** The user's home folder (`~`): `~/.claude`, `~/.agents`, `~/.keel`, `~/.codex` are trusted. */
  userHome?: string;
  /** The project folder: its files count once approved by hash. */
  project?: string;
};

/**
 * Reads the setup a user brings, from their home (trusted) and from the project (trusted file by file while
 * its exact bytes are the ones approved, with every file of a skill folder approved too). A file that does not
 * parse is in `problems` and nowhere else. A project that is the user's home itself counts as the user's.
 */
export function loadSetup(options: LoadSetupOptions): LoadedSetup {
  const files: SetupFile[] = [];
  const untrusted: UntrustedSetupFile[] = [];
  const problems: SetupProblem[] = [];
  const userReal = options.userHome === undefined ? undefined : realOrUndefined(options.userHome);
  if (userReal !== undefined) {
    const user = discoverSetupFiles(userReal, 'user');
    problems.push(...user.problems);
    for (const found of user.found) {
      const file = toSetupFile(found, problems);
      if (file) files.push(file);
    }
  }
  const project = options.project === undefined ? undefined : realOrUndefined(options.project);
  if (project !== undefined && project !== userReal) {
    const discovered = discoverSetupFiles(project, 'project');
    problems.push(...discovered.problems);
    const approved =
      approvedSetup(readSetupApprovals(options.home), project)?.hashes ?? new Map<string, string>();
    for (const found of discovered.found) {
      const file = toSetupFile(found, problems);
      if (!file) continue;
      const parts = [found, ...found.resources];
      if (parts.every((part) => approved.get(part.relativePath) === part.hash)) files.push(file);
      else {
        const seen = parts.some((part) => approved.has(part.relativePath));
        untrusted.push({ ...file, state: seen ? 'changed' : 'new' });
      }
    }
  }
  return { files, untrusted, problems, project: project ?? '' };
}

/** Every file a project brings as found (skills' files included), for approving and showing a diff. */
export function projectSetupParts(project: string): { parts: FoundFile[]; problems: SetupProblem[] } {
  const discovered = discoverSetupFiles(project, 'project');
  const parts = discovered.found.flatMap((found) => [found, ...found.resources]);
  return { parts, problems: discovered.problems };
}

function toSetupFile(found: FoundFile, problems: SetupProblem[]): SetupFile | undefined {
  const text = found.bytes.toString('utf8');
  const parsed = parseSetupText(found.kind, found.path, text);
  if (!parsed.ok) {
    problems.push(parsed.problem);
    return undefined;
  }
  return {
    scope: found.scope,
    layout: found.layout,
    kind: found.kind as SetupFile['kind'],
    path: found.path,
    relativePath: found.relativePath,
    name: found.name,
    namespace: found.namespace,
    text,
    hash: found.hash,
    ...(parsed.json ? { json: parsed.json } : {}),
    ...(parsed.frontMatter ? { frontMatter: parsed.frontMatter } : {}),
    ...(parsed.body !== undefined ? { body: parsed.body, bodyLine: parsed.bodyLine ?? 1 } : {}),
    resources: found.resources.map((resource) => ({
      path: resource.path,
      relativePath: resource.relativePath,
      hash: resource.hash,
      size: resource.bytes.length,
    })),
  };
}

/**
 * The user's home folder whose `.claude/`, `.agents/`, `.keel/` and `.codex/` are read: `KEEL_USER_HOME` when
 * set (tests point it at a temp folder so the machine's own files never leak in), else the OS home.
 */
export function defaultUserHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.KEEL_USER_HOME !== undefined && env.KEEL_USER_HOME !== '' ? env.KEEL_USER_HOME : os.homedir();
}

function realOrUndefined(folder: string): string | undefined {
  try {
    return fs.realpathSync(folder);
  } catch {
    return undefined;
  }
}
