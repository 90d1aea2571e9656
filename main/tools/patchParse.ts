import { ToolError } from './types.js';

// The apply_patch language as OpenAI's Codex defines it (codex-rs/apply-patch: its grammar and parser, read
// and re-written here, not copied): an envelope `*** Begin Patch` … `*** End Patch` holding file sections.
//
//   Patch      := "*** Begin Patch" NL { FileOp } "*** End Patch" NL?
//   FileOp     := AddFile | DeleteFile | UpdateFile
//   AddFile    := "*** Add File: " path NL { "+" line NL }
//   DeleteFile := "*** Delete File: " path NL
//   UpdateFile := "*** Update File: " path NL [ "*** Move to: " path NL ] { Hunk }
//   Hunk       := ("@@" | "@@ " header) NL { (" " | "-" | "+") text NL } [ "*** End of File" NL ]
//
// Lenient where models are known to slip, as Codex is: whitespace around the envelope and the file headers,
// blank lines between hunks, an empty line inside a hunk read as an empty context line, the first hunk of a
// file without its "@@", a unified-diff range in a "@@" line (ignored), and the whole patch wrapped in a heredoc (`apply_patch <<'EOF'` … `EOF`, as models
// trained on the shell form send it). Pure: text in, operations out; errors name the patch line.

/** One hunk of an Update File section: the lines it expects (`oldLines`) and what replaces them. */
export interface PatchChunk {
  /** The `@@ header` text (a line to find first, usually a class or function), or null for a bare `@@`. */
  context: string | null;
  oldLines: string[];
  newLines: string[];
  /** `*** End of File` closed the hunk: its old lines end the file. */
  endOfFile: boolean;
  /** 1-based line of the patch where the hunk starts (its `@@`, or its first line without one). */
  line: number;
}

/** One file section of a patch, in patch order; `line` is its header's 1-based line in the patch. */
export type PatchOp =
  | { kind: 'add'; path: string; contents: string; line: number }
  | { kind: 'delete'; path: string; line: number }
  | { kind: 'update'; path: string; moveTo: string | null; chunks: PatchChunk[]; line: number };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE = '*** Move to: ';
const END_OF_FILE = '*** End of File';
// `@@ -a,b +c,d @@ rest`, as git and diff write a hunk header; models trained on both sometimes mix them.
const UNIFIED_RANGE = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$/;

/** A patch that does not follow the grammar: the message names the line and says what was expected. */
export class PatchSyntaxError extends ToolError {
  constructor(message: string, line?: number) {
    super(`invalid patch${line === undefined ? '' : ` at line ${line}`}: ${message}`);
  }
}

/** A line quoted in an error, cut so a huge line cannot flood the message. */
function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

// `apply_patch <<'EOF'`, `applypatch <<"PATCH"`, `<<EOF`: the opening of a heredoc around the patch.
const HEREDOC_START = /^(?:(?:apply_patch|applypatch)\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$/;

/** The patch's lines without surrounding blank lines and, when the patch came as a heredoc, its wrapper. */
function envelopeLines(input: string): { lines: string[]; first: number } {
  const all = input.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  let start = 0;
  let end = all.length;
  while (start < end && (all[start] ?? '').trim() === '') start++;
  while (end > start && (all[end - 1] ?? '').trim() === '') end--;
  const opening = HEREDOC_START.exec((all[start] ?? '').trim());
  if (opening && end - start >= 4 && (all[end - 1] ?? '').trim() === opening[2]) {
    start++;
    end--;
    while (start < end && (all[start] ?? '').trim() === '') start++;
    while (end > start && (all[end - 1] ?? '').trim() === '') end--;
  }
  return { lines: all.slice(start, end), first: start + 1 };
}

/**
 * Parses apply_patch text into its file operations, in order. Throws PatchSyntaxError naming the line (as
 * numbered in `input`) for anything outside the grammar; an envelope with no file section is an error too.
 */
export function parsePatch(input: string): PatchOp[] {
  const { lines, first } = envelopeLines(input);
  if (lines.length === 0) throw new PatchSyntaxError(`the patch is empty; it must start with '${BEGIN}'`);
  if (/^cd\s.*&&\s*(?:apply_patch|applypatch)\b/.test((lines[0] ?? '').trim())) {
    throw new PatchSyntaxError(
      `send the patch alone, without "cd … &&": paths are relative to the project root, so put the folder in each path`,
      first,
    );
  }
  if ((lines[0] ?? '').trim() !== BEGIN) {
    throw new PatchSyntaxError(`the first line must be '${BEGIN}', not ${quote(lines[0] ?? '')}`, first);
  }
  const last = lines.length - 1;
  if (last === 0 || (lines[last] ?? '').trim() !== END) {
    throw new PatchSyntaxError(
      `the last line must be '${END}', not ${quote(lines[last] ?? '')}`,
      first + last,
    );
  }
  const ops: PatchOp[] = [];
  let at = 1;
  while (at < last) {
    const parsed = parseFileOp(lines, at, last, first);
    ops.push(parsed.op);
    at = parsed.next;
  }
  if (ops.length === 0) {
    throw new PatchSyntaxError(
      `the patch has no file section; add '${ADD}<path>', '${UPDATE}<path>' or '${DELETE}<path>'`,
    );
  }
  return ops;
}

/** True when a (trimmed) line is the header `marker` ("*** Add File: "), its path possibly missing. */
function startsSection(line: string, marker: string): boolean {
  return line.startsWith(marker) || line === marker.trimEnd();
}

/** The path after a header marker (the marker's final space may be trimmed away); an empty one is an error. */
function pathAfter(header: string, marker: string, lineNo: number): string {
  const value = header.slice(marker.length - 1).trim();
  if (value === '') throw new PatchSyntaxError(`'${marker.trim()}' needs a path`, lineNo);
  return value;
}

/** One file section starting at `lines[at]` (before index `end`); `first` turns indexes into line numbers. */
function parseFileOp(
  lines: readonly string[],
  at: number,
  end: number,
  first: number,
): { op: PatchOp; next: number } {
  const header = (lines[at] ?? '').trim();
  const lineNo = first + at;
  if (startsSection(header, ADD)) {
    const path = pathAfter(header, ADD, lineNo);
    let next = at + 1;
    const contents: string[] = [];
    while (next < end && (lines[next] ?? '').startsWith('+')) {
      contents.push((lines[next] ?? '').slice(1));
      next++;
    }
    const text = contents.length === 0 ? '' : `${contents.join('\n')}\n`;
    return { op: { kind: 'add', path, contents: text, line: lineNo }, next };
  }
  if (startsSection(header, DELETE)) {
    return { op: { kind: 'delete', path: pathAfter(header, DELETE, lineNo), line: lineNo }, next: at + 1 };
  }
  if (startsSection(header, UPDATE)) return parseUpdate(lines, at, end, first);
  throw new PatchSyntaxError(
    `${quote(lines[at] ?? '')} is not a file header; a section starts with '${ADD}<path>', '${UPDATE}<path>' or '${DELETE}<path>'`,
    lineNo,
  );
}

function parseUpdate(
  lines: readonly string[],
  at: number,
  end: number,
  first: number,
): { op: PatchOp; next: number } {
  const lineNo = first + at;
  const path = pathAfter((lines[at] ?? '').trim(), UPDATE, lineNo);
  let next = at + 1;
  let moveTo: string | null = null;
  const moveLine = (lines[next] ?? '').trim();
  if (next < end && startsSection(moveLine, MOVE)) {
    moveTo = pathAfter(moveLine, MOVE, first + next);
    next++;
  }
  const chunks: PatchChunk[] = [];
  while (next < end) {
    const line = lines[next] ?? '';
    // Blank lines between hunks are skipped; a line starting with "*" starts the next section.
    if (line.trim() === '') {
      next++;
      continue;
    }
    if (line.startsWith('*')) break;
    const chunk = parseChunk(lines, next, end, first, chunks.length === 0);
    chunks.push(chunk.chunk);
    next = chunk.next;
  }
  if (chunks.length === 0) {
    throw new PatchSyntaxError(
      `the '${UPDATE}${path}' section has no hunk; add one starting with '@@' and its ' ', '-' and '+' lines`,
      lineNo,
    );
  }
  return { op: { kind: 'update', path, moveTo, chunks, line: lineNo }, next };
}

function parseChunk(
  lines: readonly string[],
  at: number,
  end: number,
  first: number,
  firstOfFile: boolean,
): { chunk: PatchChunk; next: number } {
  const head = lines[at] ?? '';
  let context: string | null = null;
  let next = at;
  if (head.trimEnd() === '@@') {
    next++;
  } else if (head.startsWith('@@ ')) {
    // A unified-diff range (`@@ -12,7 +12,8 @@ def f():`) says nothing this format uses: keep only its header.
    const range = UNIFIED_RANGE.exec(head);
    context = range ? (range[1]?.trim() ? range[1].trim() : null) : head.slice(3);
    next++;
  } else if (!firstOfFile) {
    throw new PatchSyntaxError(
      `expected a hunk starting with '@@', got ${quote(head)}; every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added)`,
      first + at,
    );
  }
  const chunk: PatchChunk = { context, oldLines: [], newLines: [], endOfFile: false, line: first + at };
  let count = 0;
  for (; next < end; next++) {
    const line = lines[next] ?? '';
    if (line.trimEnd() === END_OF_FILE) {
      if (count === 0)
        throw new PatchSyntaxError(`the hunk has no lines before '${END_OF_FILE}'`, first + next);
      chunk.endOfFile = true;
      next++;
      break;
    }
    const marker = line[0];
    if (marker === undefined) {
      // An empty line inside a hunk: models drop the space of an empty context line.
      chunk.oldLines.push('');
      chunk.newLines.push('');
    } else if (marker === ' ') {
      chunk.oldLines.push(line.slice(1));
      chunk.newLines.push(line.slice(1));
    } else if (marker === '-') {
      chunk.oldLines.push(line.slice(1));
    } else if (marker === '+') {
      chunk.newLines.push(line.slice(1));
    } else {
      if (count === 0) {
        throw new PatchSyntaxError(
          `unexpected line ${quote(line)} in a hunk; every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added)`,
          first + next,
        );
      }
      // The next hunk ("@@") or section ("***") begins.
      break;
    }
    count++;
  }
  if (count === 0) throw new PatchSyntaxError('the hunk has no lines', chunk.line);
  return { chunk, next };
}
