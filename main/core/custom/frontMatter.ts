import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { problemAt, type CustomFile, type CustomProblem } from './types.js';

/** A Markdown file's YAML front matter and its body, or why it could not be read (with the file's 1-based line). */
export type FrontMatter =
  { ok: true; data: Record<string, unknown>; body: string } | { ok: false; line: number; message: string };

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/**
 * Splits `---\n<yaml>\n---\n<body>` (the shape of SKILL.md, Claude Code's commands and agents). A file without
 * front matter is all body (a command may be plain Markdown). The YAML must be a mapping; an error names the
 * line in the file (the opening `---` is line 1), so a malformed file is reported and ignored whole.
 */
export function parseFrontMatter(text: string): FrontMatter {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const opening = OPENING.exec(source);
  if (!opening) return { ok: true, data: {}, body: source };
  const rest = source.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing)
    return { ok: false, line: 1, message: 'the front matter opened with --- is never closed by a --- line' };
  const yamlText = quoteArgumentHint(rest.slice(0, closing.index));
  const body = rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, '');
  const document = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  const error = document.errors[0];
  if (error) {
    const line = yamlText.slice(0, error.pos[0]).split('\n').length + 1;
    return { ok: false, line, message: `invalid YAML front matter: ${error.message.split('\n')[0]}` };
  }
  const data: unknown = document.toJS({ maxAliasCount: 50 });
  if (data === null || data === undefined) return { ok: true, data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, line: 2, message: 'the front matter must be a mapping of fields (name: value)' };
  }
  return { ok: true, data: data as Record<string, unknown>, body };
}

/**
 * Claude Code's documented `argument-hint: [pr-number] [priority]` is not YAML (a flow sequence followed by
 * more text) and `argument-hint: [path]` is a list: such a line's value is read as the text it shows.
 */
function quoteArgumentHint(yamlText: string): string {
  return yamlText.replace(
    /^argument-hint:[ \t]*(\[[^\n]*\])[ \t]*$/m,
    (_line, value: string) => `argument-hint: '${value.replace(/'/g, "''")}'`,
  );
}

/** The line (1-based, in the file) where a top-level front matter key is written, for messages; 1 if not found. */
export function lineOfKey(text: string, key: string): number {
  const lines = text.split('\n');
  const index = lines.findIndex((line, i) => i > 0 && line.startsWith(`${key}:`));
  return index < 0 ? 1 : index + 1;
}

/**
 * A file's front matter checked against `schema`, with its body; a problem names the line of the faulty key
 * (or of the YAML error).
 */
export function readFields<S extends z.ZodType>(
  file: CustomFile,
  schema: S,
): { ok: true; data: z.infer<S>; body: string } | { ok: false; problem: CustomProblem } {
  const front = parseFrontMatter(file.text);
  if (!front.ok) return problemAt(file, front.line, front.message);
  const fields = schema.safeParse(front.data);
  if (fields.success) return { ok: true, data: fields.data, body: front.body };
  const issue = fields.error.issues[0];
  const key = String(issue?.path[0] ?? '');
  return problemAt(
    file,
    key === '' ? 1 : lineOfKey(file.text, key),
    `${key || 'front matter'}: ${issue?.message ?? 'invalid'}`,
  );
}
