import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import { errorOutcome, looksBinary } from '../../tools/outcome.js';
import { previewSubject } from '../../tools/preview.js';
import type { ToolModule } from '../../tools/types.js';
import { parseFrontMatter } from './frontMatter.js';
import type { Skill } from './skills.js';

/** The model-facing name of the tool that loads a skill. */
export const LOAD_SKILL = 'load_skill';

/** The most of one skill file the model is given, in bytes (SKILL.md or one of its files). */
export const SKILL_FILE_MAX_BYTES = 128 * 1024;

const parameters = z.strictObject({
  name: z.string().min(1).max(64).describe('The skill, as listed under "Skills".'),
  path: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      "One of the skill's own files, relative to its folder (as SKILL.md names it); omit for SKILL.md.",
    ),
});

/**
 * load_skill over the session's skills (the catalogue its newest `custom_listed` was made from): the body of
 * SKILL.md, with the list of the folder's files; with `path`, one of those files. It reads nothing else: only
 * files the setup loader found in the skill's folder (approved with it, for a project's skill), each checked
 * against the hash it was found (or approved) with, so a file changed since is refused, not read. Read-only.
 */
export function loadSkillTool(skills: readonly Skill[]): ToolModule<typeof parameters> {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  return {
    name: LOAD_SKILL,
    description:
      'Load a skill listed under "Skills": its instructions (SKILL.md) and the list of its files; with `path`, ' +
      "one of the skill's files. Load a skill before a task its description matches.",
    parameters,
    mode: 'read-only',
    kind: 'read',
    preview: () => previewSubject(),
    resume: { rule: 'rerun' },
    execute: (args, ctx) => {
      const skill = byName.get(args.name);
      if (!skill) {
        const known = [...byName.keys()].join(', ') || 'none';
        return Promise.resolve(errorOutcome(`there is no skill "${args.name}" (skills: ${known})`));
      }
      if (args.path === undefined) {
        const read = readChecked(skill.folder + '/SKILL.md', skill.sha256, skill.shown);
        if (!read.ok) return Promise.resolve(errorOutcome(read.error));
        const front = parseFrontMatter(read.text);
        const body = front.ok ? front.body : read.text;
        const files = skill.resources.map((file) => `- ${file.relative} (${file.size} bytes)`);
        const content = [
          `Skill "${skill.name}" (${skill.shown}), loaded:`,
          '',
          body.trim(),
          ...(files.length > 0
            ? [
                '',
                `Its files (read one with ${LOAD_SKILL} {"name": "${skill.name}", "path": "..."}):`,
                ...files,
              ]
            : []),
        ].join('\n');
        return Promise.resolve({ content: ctx.redactor.redact(content), isError: false });
      }
      const wanted = args.path.replace(/^\.\//, '');
      const file = skill.resources.find((resource) => resource.relative === wanted);
      if (!file) {
        return Promise.resolve(
          errorOutcome(
            `"${args.path}" is not a file of skill "${skill.name}" (its files: ${skill.resources.map((r) => r.relative).join(', ') || 'none'})`,
          ),
        );
      }
      const read = readChecked(file.absolute, file.sha256, `${skill.name}/${file.relative}`);
      if (!read.ok) return Promise.resolve(errorOutcome(read.error));
      return Promise.resolve({
        content: ctx.redactor.redact(`${skill.name}/${file.relative}:\n\n${read.text}`),
        isError: false,
      });
    },
  };
}

/** A skill file's text, if it is still the bytes listed (never through a link), not binary, within the cap. */
function readChecked(
  file: string,
  sha256: string,
  shown: string,
): { ok: true; text: string } | { ok: false; error: string } {
  let bytes: Buffer;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      bytes = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    return {
      ok: false,
      error: `${shown} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
  if (createHash('sha256').update(bytes).digest('hex') !== sha256) {
    return {
      ok: false,
      error: `${shown} changed since this session's skills were listed; it is not read (the next turn lists them again, and a project's changed file waits for the user's approval)`,
    };
  }
  if (looksBinary(bytes)) return { ok: false, error: `${shown} is not text` };
  if (bytes.length > SKILL_FILE_MAX_BYTES) {
    return {
      ok: false,
      error: `${shown} is ${bytes.length} bytes, more than the ${SKILL_FILE_MAX_BYTES} a skill file may give`,
    };
  }
  return { ok: true, text: bytes.toString('utf8') };
}
