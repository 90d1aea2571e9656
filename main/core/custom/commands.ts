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

/** A custom command (`.claude/commands/*.md`, `.agents/commands`, `.keel/commands`): a prompt with arguments. */
export type CustomCommand = CustomOrigin & {
  /** `review`; a file in a subfolder is namespaced: `frontend/component.md` is `frontend:component`. */
  name: string;
  description: string;
  argumentHint?: string;
  /** The model the command asks for (`model:`), as written. */
  model?: string;
  /** Keel tools its `allowed-tools` names; the turn it starts has only these. */
  allowedTools?: string[];
  /** Entries of `allowed-tools` Keel has no tool for (said when the command is used). */
  unknownTools?: string[];
  /** The prompt template (the file's body). */
  template: string;
};

const CommandFields = z.object({
  description: z.string().optional(),
  'argument-hint': z.union([z.string(), z.array(z.string())]).optional(),
  model: z.string().trim().min(1).optional(),
  'allowed-tools': z.union([z.string(), z.array(z.string())]).optional(),
  'disable-model-invocation': z.boolean().optional(),
});

/** A command name: words of letters, digits, `_`, `-` and `.`, joined by `:` for subfolders. */
const COMMAND_NAME = /^[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)*$/;

export function parseCommand(file: CustomFile): Parsed<CustomCommand> {
  const name = file.relative.replace(/\.md$/i, '').split('/').join(':');
  if (!/\.md$/i.test(file.relative) || !COMMAND_NAME.test(name)) {
    return problemAt(
      file,
      1,
      `"${file.relative}" is not a command file name (letters, digits, _ - . and .md)`,
    );
  }
  const fields = readFields(file, CommandFields);
  if (!fields.ok) return fields;
  const data = fields.data;
  const hint = Array.isArray(data['argument-hint']) ? data['argument-hint'].join(' ') : data['argument-hint'];
  const allowed = splitToolList(data['allowed-tools']);
  const mapped = allowed ? keelToolNames(allowed) : undefined;
  // Claude Code shows the first line of the body when a command has no description.
  const firstLine = fields.body.split('\n').find((line) => line.trim() !== '') ?? '';
  return {
    ok: true,
    value: {
      ...originOf(file),
      name,
      description: (data.description ?? firstLine.replace(/^#+\s*/, '')).trim().slice(0, 200),
      ...(hint ? { argumentHint: hint } : {}),
      ...(data.model ? { model: data.model } : {}),
      ...(mapped ? { allowedTools: mapped.tools } : {}),
      ...(mapped && mapped.unknown.length > 0 ? { unknownTools: mapped.unknown } : {}),
      template: fields.body,
    },
  };
}

/**
 * Splits a command's arguments as a shell would for `$1…$9` (quotes group words, a backslash escapes), never
 * running anything: `"fix the bug" src/` gives `fix the bug` and `src/`.
 */
export function splitArguments(text: string): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && i + 1 < text.length) current = (current ?? '') + text[++i];
      else current = (current ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current ??= '';
    } else if (char === '\\' && i + 1 < text.length) {
      current = (current ?? '') + text[++i];
    } else if (/\s/.test(char)) {
      if (current !== undefined) words.push(current);
      current = undefined;
    } else {
      current = (current ?? '') + char;
    }
  }
  if (current !== undefined) words.push(current);
  return words;
}

/**
 * The prompt of a command used with `args`: `$ARGUMENTS` is the whole argument text, `$1`…`$9` its words
 * (missing ones are empty). As in Claude Code, a template that names neither gets the arguments appended
 * after a blank line (`ARGUMENTS: …`), so `/review src/` never drops `src/`.
 */
export function substituteArguments(template: string, args: string): string {
  const trimmed = args.trim();
  const words = splitArguments(trimmed);
  let used = false;
  const expanded = template.replace(/\$(ARGUMENTS|[1-9])(?![0-9])/g, (_match, key: string) => {
    used = true;
    return key === 'ARGUMENTS' ? trimmed : (words[Number(key) - 1] ?? '');
  });
  if (used || trimmed === '') return expanded;
  return `${expanded.replace(/\s+$/, '')}\n\nARGUMENTS: ${trimmed}`;
}

export const commandCatalogue = (files: readonly CustomFile[]) => catalogueOf(files, parseCommand);
