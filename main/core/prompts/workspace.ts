import type { PersistentConfig } from '../persistent/config.js';
import type { PersistentDirSpec } from '../persistent/types.js';

// The system prompt's sentences on where the model works: its root, the private area, each Persistent Dir's
// checkout and how its changes reach the real folder (the layout itself is core/paths.ts).

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
