import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { CheckoutLocation } from '../persistent/checkout.js';
import { PersistentDirName, PersistentDirSpec } from '../persistent/types.js';

/**
 * The session workspace layout. A session's workspace is `<dataDir>/workspace`:
 *
 *   session/               private to the session: uploads/, app-context/, scratch/
 *   persistent/<name>/     the session's checkout of each Persistent Dir (the project is `project`)
 *
 * The tools' root is the project's checkout (`persistent/project/`); the model addresses the private area
 * as `/session/...` and the other checkouts as `/persistent/<name>/...`. A session from before (no `pathRoot`
 * in its session_created) keeps the workspace itself as its root (`persistent/project/src/x`).
 *
 * A session without `persistent.json` predates Persistent Dirs or was made to work on its folder directly
 * (`keel run --commit direct`, the app's "Edit the folder directly"): its root is its project folder.
 */

/** Folders made in `session/` of every new session. */
export const SESSION_FOLDERS = ['uploads', 'app-context', 'scratch'] as const;

/** `<dataDir>/persistent.json`: the session's Persistent Dirs and which of them are read-only. */
export const PersistentConfig = z.object({
  version: z.literal(1),
  dirs: z.array(PersistentDirSpec),
  readOnly: z.array(PersistentDirName).default([]),
});
export type PersistentConfig = z.infer<typeof PersistentConfig>;

const CONFIG_FILE = 'persistent.json';

/** The session's Persistent Dir configuration, or undefined for a session that works on its project folder directly. */
export function readPersistentConfig(dataDir: string): PersistentConfig | undefined {
  const file = path.join(dataDir, CONFIG_FILE);
  // A turn asks up to seven times: for a session without one, a stat that answers undefined, not an ENOENT thrown.
  if (fs.statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = PersistentConfig.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new Error(`${file} is not valid: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Writes the configuration atomically (temp file + rename), validated first. */
export function writePersistentConfig(dataDir: string, config: PersistentConfig): void {
  const valid = PersistentConfig.parse(config);
  const names = new Set<string>();
  for (const dir of valid.dirs) {
    if (names.has(dir.name)) throw new Error(`two Persistent Dirs are named "${dir.name}"`);
    names.add(dir.name);
  }
  const file = path.join(dataDir, CONFIG_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(valid, null, 2));
  fs.renameSync(temp, file);
}

/** Creates the private area's folders of a session workspace. */
export function makeSessionFolders(dataDir: string): void {
  for (const folder of SESSION_FOLDERS)
    fs.mkdirSync(path.join(dataDir, 'workspace', 'session', folder), { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'workflows'), { recursive: true });
}

/** The Keel home a session folder (`<home>/sessions/<id>`) belongs to. */
export function homeOf(dataDir: string): string {
  return path.resolve(dataDir, '..', '..');
}

/** The session's history store: bytes of the files its changes touched, before and after (persistent/kept.ts). */
export function historyStoreOf(dataDir: string): string {
  return path.join(dataDir, 'history', 'blobs');
}

/** Where the checkout of one Persistent Dir of a session lives. */
export function checkoutLocation(dataDir: string, name: string): CheckoutLocation {
  return {
    workspaceRoot: path.join(dataDir, 'workspace'),
    checkout: path.join(dataDir, 'workspace', 'persistent', name),
    stateDir: path.join(dataDir, 'checkouts', name),
    locksRoot: path.join(homeOf(dataDir), 'locks'),
  };
}

/** A staging path mapped into the workspace: the private area, or one Persistent Dir's checkout. */
export type StagingTarget =
  | { area: 'session'; relative: string; virtualPath: string }
  | { area: 'persistent'; dir: PersistentDirSpec; relative: string; virtualPath: string };

/**
 * Maps a host's staging path (`/session/...` or `/persistent/<name>/...`; the leading slash is optional)
 * to the workspace. Throws an error naming the path when it is neither, or names an unknown Persistent Dir.
 */
export function mapStagingPath(config: PersistentConfig | undefined, stagingPath: string): StagingTarget {
  const parts = stagingPath.split('/').filter((part) => part !== '' && part !== '.');
  const [area, ...rest] = parts;
  if (area === 'session' && rest.length > 0) {
    const relative = rest.join('/');
    return { area: 'session', relative, virtualPath: `/session/${relative}` };
  }
  if (area === 'persistent' && rest.length > 1) {
    const [name, ...inside] = rest;
    const dir = config?.dirs.find((d) => d.name === name);
    if (!dir) {
      const known = config?.dirs.map((d) => d.name).join(', ') || 'none';
      throw new Error(
        `staging path ${JSON.stringify(stagingPath)}: no Persistent Dir "${name}" (this session has: ${known})`,
      );
    }
    const relative = inside.join('/');
    return { area: 'persistent', dir, relative, virtualPath: `/persistent/${dir.name}/${relative}` };
  }
  throw new Error(
    `staging path ${JSON.stringify(stagingPath)}: stage files under /session/... (private to the session) or /persistent/<name>/...`,
  );
}

/** How the model is told its changes to one dir reach the real folder. */
function commitSentence(config: PersistentConfig, dir: PersistentDirSpec): string {
  if (config.readOnly.includes(dir.name)) return 'read-only for this session: changes there are discarded';
  return dir.commit === 'auto'
    ? 'your changes are applied to the real folder when your turn ends'
    : 'your changes are applied to the real folder only when the user accepts them';
}

/** The private area's line of a prompt, in the `/session/...` form the tools take. */
const SESSION_AREA_LINE =
  '/session/ is private to this conversation: files the user or app staged for you (/session/uploads/, /session/app-context/) and your scratch space (/session/scratch/).';

const ARTIFACTS_LINE =
  '/artifacts/ holds the whole output of your commands, named in a result that shows only its head and tail: read it with read_file (offset, limit) or grep. Nothing can write there, and commands do not see it.';

/**
 * The system prompt's description of where the model works (sessions whose root is the project: see
 * `pathRoot` in session_created). Fixed text per configuration (no counters, times or host paths), so it
 * stays in the cached prefix. `config` undefined: the session works on its project folder directly;
 * `sessionArea`: it has a private area the tools reach as /session/.
 */
export function describeProjectRoot(config: PersistentConfig | undefined, sessionArea: boolean): string {
  const project = config?.dirs.find((dir) => dir.name === 'project');
  if (config && !project) return describeWorkspace(config);
  const rootLine =
    'The project is your root: every relative path is relative to it, commands run there unless you pass cwd, and its absolute path (as pwd prints it) works too.';
  if (!config || !project)
    return [rootLine, ...(sessionArea ? [SESSION_AREA_LINE] : []), ARTIFACTS_LINE].join('\n');
  const lines = [
    `You work in a checkout of the project; ${commitSentence(config, project)}.`,
    rootLine,
    `- ${SESSION_AREA_LINE}`,
    `- ${ARTIFACTS_LINE}`,
  ];
  for (const dir of config.dirs) {
    if (dir === project) continue;
    lines.push(
      `- /persistent/${dir.name}/ is a checkout of the shared folder "${dir.name}"; ${commitSentence(config, dir)}.`,
    );
  }
  lines.push(
    config.dirs.length > 1
      ? 'In commands, /session/ is ../../session/ and /persistent/<name>/ is ../<name>/ (from the project root).'
      : 'In commands, /session/ is ../../session/ (from the project root).',
    "Each new turn starts from the folders' current state.",
  );
  return lines.join('\n');
}

/**
 * The system prompt's description of the workspace of a session from before the project was the root (no
 * `pathRoot`). Fixed text per configuration (no counters, times or host paths), so it stays in the cached
 * prefix; kept word for word, so such a session's requests keep their bytes.
 */
export function describeWorkspace(config: PersistentConfig): string {
  const lines = [
    'Your workspace root has two areas; every path you use is relative to that root:',
    '- session/ is private to this conversation: files the user or app staged for you (session/uploads/, session/app-context/) and your scratch space (session/scratch/). A file announced as staged at /session/x is at session/x.',
  ];
  for (const dir of config.dirs) {
    const how = commitSentence(config, dir);
    const what = dir.name === 'project' ? 'the project you work on' : `the shared folder "${dir.name}"`;
    lines.push(`- persistent/${dir.name}/ is a checkout of ${what}; ${how}.`);
  }
  lines.push(
    commandFolderOf(config) === '.'
      ? "Commands run in the workspace root unless you pass cwd: use cwd persistent/<name> to run a folder's own commands there."
      : 'Commands run in persistent/project/ unless you pass cwd (a folder relative to the workspace root).',
    "Each new turn starts from the folders' current state.",
  );
  return lines.join('\n');
}

/**
 * Where commands of a session from before the project was the root run by default: the project's checkout
 * when the session has one, else the workspace root.
 */
export function commandFolderOf(config: PersistentConfig): string {
  return config.dirs.some((dir) => dir.name === 'project') ? 'persistent/project' : '.';
}
