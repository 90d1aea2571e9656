import type { PatchChunk } from './patchParse.js';
import { ToolError } from './types.js';

// How the hunks of one Update File section change a text, as Codex applies them: each hunk's expected lines
// are found at or after where the previous hunk ended, matching exactly, then ignoring trailing whitespace,
// then ignoring surrounding whitespace, then with typographic punctuation read as ASCII; the text comes out
// with a final newline, in the file's own line endings. Pure.

// Typographic characters models type as ASCII (and the reverse): dashes, quotes, odd spaces.
const TYPOGRAPHIC: Record<string, string> = {
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u201f': '"',
  '\u00a0': ' ',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2004': ' ',
  '\u2005': ' ',
  '\u2006': ' ',
  '\u2007': ' ',
  '\u2008': ' ',
  '\u2009': ' ',
  '\u200a': ' ',
  '\u202f': ' ',
  '\u205f': ' ',
  '\u3000': ' ',
};
const TYPOGRAPHIC_RE = new RegExp(`[${Object.keys(TYPOGRAPHIC).join('')}]`, 'g');

/** The ways two lines may be equal, strictest first. */
const MATCHERS: readonly ((line: string) => string)[] = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  (line) => line.trim().replace(TYPOGRAPHIC_RE, (c) => TYPOGRAPHIC[c] ?? c),
];

/** Where `pattern` occurs in `lines` at or after `start` (at the very end first when `eof`), or -1. */
export function seekLines(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  eof: boolean,
): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const lastStart = lines.length - pattern.length;
  for (const norm of MATCHERS) {
    const wanted = pattern.map(norm);
    const matchesAt = (i: number) => wanted.every((line, k) => norm(lines[i + k] ?? '') === line);
    if (eof && lastStart >= start && matchesAt(lastStart)) return lastStart;
    for (let i = start; i <= lastStart; i++) if (matchesAt(i)) return i;
  }
  return -1;
}

/** True when every newline of the text is part of a CRLF (an LF file with a stray \r\n stays LF). */
function usesCrlf(text: string): boolean {
  const lf = text.split('\n').length - 1;
  return lf > 0 && text.split('\r\n').length - 1 === lf;
}

/** The hunk's lines as a tool error shows them, cut so a huge hunk cannot flood the message. */
function showLines(lines: readonly string[]): string {
  const shown = lines.slice(0, 12).map((line) => `  ${line}`);
  if (lines.length > 12) shown.push(`  … (${lines.length - 12} more lines)`);
  return shown.join('\n');
}

/**
 * Applies an Update File section's hunks to `text` (the file `shownPath`). Throws a ToolError naming the
 * file, the hunk and its lines when a hunk's `@@` header or expected lines are not in the file.
 */
export function applyChunks(text: string, chunks: readonly PatchChunk[], shownPath: string): string {
  const crlf = usesCrlf(text);
  const lines = (crlf ? text.replace(/\r\n/g, '\n') : text).split('\n');
  // A final newline ends the last line; it does not start another one.
  if (lines.at(-1) === '') lines.pop();
  const replacements: { start: number; length: number; lines: string[] }[] = [];
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    const where = `${shownPath}: hunk ${index + 1} (patch line ${chunk.line})`;
    if (chunk.context !== null) {
      const found = seekLines(lines, [chunk.context], cursor, false);
      if (found === -1) {
        throw new ToolError(
          `${where}: the '@@ ${chunk.context}' line was not found in the file${index > 0 ? ' after the previous hunk' : ''}; nothing was changed. Read the file again and copy the lines exactly.`,
        );
      }
      cursor = found + 1;
    }
    if (chunk.oldLines.length === 0) {
      // Only added lines: after the @@ header's line, else at the end of the file.
      const at = chunk.context !== null ? cursor : lines.length;
      replacements.push({ start: at, length: 0, lines: chunk.newLines });
      return;
    }
    let pattern = chunk.oldLines;
    let replacement = chunk.newLines;
    let found = seekLines(lines, pattern, cursor, chunk.endOfFile);
    // A trailing empty context line often stands for the file's final newline, which is no line here.
    if (found === -1 && pattern.at(-1) === '') {
      pattern = pattern.slice(0, -1);
      if (replacement.at(-1) === '') replacement = replacement.slice(0, -1);
      found = pattern.length === 0 ? -1 : seekLines(lines, pattern, cursor, chunk.endOfFile);
    }
    if (found === -1) {
      throw new ToolError(
        `${where}: these lines were not found in the file${index > 0 ? ' after the previous hunk' : ''}; nothing was changed. Read the file again and copy the ' ' and '-' lines exactly:\n${showLines(chunk.oldLines)}`,
      );
    }
    replacements.push({ start: found, length: pattern.length, lines: replacement });
    cursor = found + pattern.length;
  });
  // From the end backwards, so earlier positions stay valid.
  for (const change of [...replacements].sort((a, b) => b.start - a.start)) {
    lines.splice(change.start, change.length, ...change.lines);
  }
  const eol = crlf ? '\r\n' : '\n';
  return lines.length === 0 ? '' : `${lines.join(eol)}${eol}`;
}
