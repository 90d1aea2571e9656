import type { LoadedSetup, SetupFile } from '../setup/index.js';
import { customSetup, type CustomFiles, type CustomSetup } from './index.js';
import type { CustomFile } from './types.js';

const KIND_FOLDER = { command: 'commands', agent: 'agents', skill: 'skills' } as const;

/**
 * The files the setup loader (main/core/setup) found in effect, as the parsers here take them: the user's,
 * and the project's only once approved by hash (`loaded.files` holds nothing else; `loaded.untrusted` is
 * never read here). Codex's layout brings no commands, agents or skills.
 */
export function customFilesOf(loaded: Pick<LoadedSetup, 'files'>): CustomFiles {
  const files: CustomFiles = { skills: [], commands: [], agents: [] };
  for (const file of loaded.files) {
    if (file.kind !== 'command' && file.kind !== 'agent' && file.kind !== 'skill') continue;
    if (file.layout === 'codex') continue;
    const custom = toCustomFile(file, file.layout, KIND_FOLDER[file.kind]);
    if (custom) files[KIND_FOLDER[file.kind]].push(custom);
  }
  return files;
}

/** The session's skills, commands and agents from what the loader found, with its problems about them. */
export function customSetupOf(loaded: LoadedSetup): CustomSetup {
  const setup = customSetup(customFilesOf(loaded));
  const ours = loaded.problems.filter((problem) => /\/(commands|agents|skills)\//.test(problem.path));
  return { ...setup, problems: [...ours, ...setup.problems] };
}

function toCustomFile(
  file: SetupFile,
  layout: CustomFile['layout'],
  kindFolder: (typeof KIND_FOLDER)[keyof typeof KIND_FOLDER],
): CustomFile | undefined {
  const marker = `/${kindFolder}/`;
  const at = file.relativePath.indexOf(marker);
  if (at < 0) return undefined;
  const relative = file.relativePath.slice(at + marker.length);
  const skillFolder = relative.replace(/\/SKILL\.md$/, '/');
  return {
    scope: file.scope,
    layout,
    shown: file.scope === 'user' ? `~/${file.relativePath}` : file.relativePath,
    relative,
    absolute: file.path,
    text: file.text,
    sha256: file.hash,
    ...(file.kind === 'skill'
      ? {
          resources: file.resources.map((resource) => {
            const inside = resource.relativePath.indexOf(`${marker}${skillFolder}`);
            return {
              relative:
                inside < 0
                  ? resource.relativePath
                  : resource.relativePath.slice(inside + marker.length + skillFolder.length),
              absolute: resource.path,
              sha256: resource.hash,
              size: resource.size,
            };
          }),
        }
      : {}),
  };
}
