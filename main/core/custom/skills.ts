import path from 'node:path';
import { z } from 'zod';
import { readFields } from './frontMatter.js';
import { keelToolNames, splitToolList } from './toolNames.js';
import {
  catalogueOf,
  originOf,
  problemAt,
  type CustomFile,
  type CustomOrigin,
  type Parsed,
} from './types.js';

/** A skill as the catalogue knows it: what the model is told up front. The body is read only when loaded. */
export type Skill = CustomOrigin & {
  name: string;
  description: string;
  /** Absolute path of the skill's folder (SKILL.md and the files it may name). */
  folder: string;
  /** Keel tools its `allowed-tools` names (experimental in the spec; recorded, not granted). */
  allowedTools?: string[];
  /** The folder's other files load_skill may read (approved with SKILL.md; each checked against its hash). */
  resources: NonNullable<CustomFile['resources']>;
};

/** Agent Skills: 1-64 characters, lowercase letters, digits and single hyphens, no hyphen at either end. */
const SKILL_NAME = /^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$/;

const SkillFields = z.object({
  name: z.string().regex(SKILL_NAME, 'lowercase letters, digits and single hyphens, at most 64').optional(),
  description: z.string().trim().min(1, 'a skill needs a description').max(1024),
  'allowed-tools': z.unknown().optional(),
});

/**
 * A `<folder>/SKILL.md` (Agent Skills; Claude Code's `.claude/skills`, Codex's and Goose's `.agents/skills`):
 * front matter `name` and `description`. `name` defaults to the folder's name (Claude Code reads it so); a
 * name that differs from the folder is kept, as Codex and Claude Code do.
 */
export function parseSkill(file: CustomFile): Parsed<Skill> {
  if (path.posix.basename(file.relative) !== 'SKILL.md')
    return problemAt(file, 1, 'a skill is a folder holding SKILL.md');
  const fields = readFields(file, SkillFields);
  if (!fields.ok) return fields;
  const folderName = path.posix.basename(path.posix.dirname(file.relative));
  const name = fields.data.name ?? folderName;
  if (!SKILL_NAME.test(name))
    return problemAt(file, 1, `the folder name "${folderName}" is not a skill name; give one in name:`);
  const allowed = splitToolList(fields.data['allowed-tools']);
  return {
    ok: true,
    value: {
      ...originOf(file),
      name,
      description: fields.data.description.replace(/\s+/g, ' ').trim(),
      folder: path.dirname(file.absolute),
      resources: file.resources ?? [],
      ...(allowed ? { allowedTools: keelToolNames(allowed).tools } : {}),
    },
  };
}

export const skillCatalogue = (files: readonly CustomFile[]) => catalogueOf(files, parseSkill);
