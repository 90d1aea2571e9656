import type { PatchChunk } from './patchParse.js';
import { ToolError } from './types.js';

// How the hunks of one Update File section change a text, as Codex applies them: each hunk's expected lines
// are found at or after where the previous hunk ended, matching exactly, then ignoring trailing whitespace,
// then ignoring surrounding whitespace, then with typographic punctuation read as ASCII; the text comes out
// with a final newline, in the file's own line endings. Pure. The search runs before any approval, so its
// work is linear per hunk (KMP over line numbers) and bounded per patch (SearchBudget).

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

/** Work done between two yields to the event loop (tens of milliseconds). */
const SLICE_WORK = 1 << 18;

/**
 * Work one patch's hunk search may still do, shared by its sections: lines and characters read and line
 * comparisons made each cost one. `spend` throws a ToolError once it runs out; `pause` yields to the event
 * loop every SLICE_WORK (a stop is seen there: the search ends with a tool error).
 */
export class SearchBudget {
  /** Work done so far. */
  spent = 0;
  private paused = 0;

  constructor(
    private readonly max: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** Counts `work`; throws the patch's tool error when the budget is exceeded. */
  spend(work: number): void {
    this.spent += work;
    if (this.spent > this.max) {
      throw new ToolError(
        `finding this patch's hunks in its files takes more work than apply_patch allows (${this.max} line comparisons and characters read); nothing was changed. Split it into smaller patches with fewer, more distinctive context lines, or use write_file for a whole file`,
      );
    }
  }

  /** Yields to the event loop when a slice of work was done since the last yield; throws once stopped. */
  async pause(): Promise<void> {
    if (this.spent - this.paused < SLICE_WORK) return;
    this.paused = this.spent;
    await new Promise((resolve) => setImmediate(resolve));
    if (this.signal?.aborted) throw new ToolError('apply_patch was stopped; nothing was changed');
  }
}

/** Lines normalized, numbered or compared between two pauses. */
const SLICE_LINES = 1 << 14;

/** A file's lines under one matcher: each line's number (equal numbers, equal lines) and the numbering. */
interface Level {
  ids: Int32Array;
  vocabulary: Map<string, number>;
}

/**
 * A file's lines as the hunk search reads them: under each matcher, every line as a number, built once per
 * matcher; a hunk is found by KMP over those numbers, so one search is linear in the lines it passes and the
 * hunk's length, whatever the text repeats.
 */
export class LineSearch {
  private readonly levels: Level[] = [];

  constructor(
    private readonly lines: readonly string[],
    private readonly budget: SearchBudget,
  ) {}

  private async level(index: number): Promise<Level> {
    const known = this.levels[index];
    if (known) return known;
    const norm = MATCHERS[index] as (line: string) => string;
    const vocabulary = new Map<string, number>();
    const ids = new Int32Array(this.lines.length);
    let chars = 0;
    for (const [i, line] of this.lines.entries()) {
      const key = norm(line);
      let id = vocabulary.get(key);
      if (id === undefined) {
        id = vocabulary.size;
        vocabulary.set(key, id);
      }
      ids[i] = id;
      chars += line.length + 1;
      if (chars >= SLICE_WORK || i % SLICE_LINES === SLICE_LINES - 1) {
        this.budget.spend(chars);
        chars = 0;
        await this.budget.pause();
      }
    }
    this.budget.spend(chars);
    const built = { ids, vocabulary };
    this.levels[index] = built;
    return built;
  }

  /** Where `pattern` occurs at or after `start` (at the very end first when `eof`), strictest matcher first, or -1. */
  async seek(pattern: readonly string[], start: number, eof: boolean): Promise<number> {
    const { lines } = this;
    if (pattern.length === 0) return start;
    if (pattern.length > lines.length) return -1;
    const lastStart = lines.length - pattern.length;
    for (let index = 0; index < MATCHERS.length; index++) {
      const { ids, vocabulary } = await this.level(index);
      const wanted = await this.numbered(pattern, index, vocabulary);
      // A line no line of the file normalizes to: the hunk cannot match under this matcher.
      if (wanted === undefined) continue;
      if (eof && lastStart >= start) {
        this.budget.spend(pattern.length);
        if (wanted.every((id, k) => ids[lastStart + k] === id)) return lastStart;
      }
      const found = await this.kmp(ids, wanted, start);
      if (found !== -1) return found;
    }
    return -1;
  }

  /** The hunk's lines as the file's numbers under one matcher, or undefined when one is in no line of the file. */
  private async numbered(
    pattern: readonly string[],
    index: number,
    vocabulary: Map<string, number>,
  ): Promise<Int32Array | undefined> {
    const norm = MATCHERS[index] as (line: string) => string;
    const wanted = new Int32Array(pattern.length);
    let chars = 0;
    for (const [k, line] of pattern.entries()) {
      const id = vocabulary.get(norm(line));
      if (id === undefined) {
        this.budget.spend(chars + line.length + 1);
        return undefined;
      }
      wanted[k] = id;
      chars += line.length + 1;
      if (chars >= SLICE_WORK || k % SLICE_LINES === SLICE_LINES - 1) {
        this.budget.spend(chars);
        chars = 0;
        await this.budget.pause();
      }
    }
    this.budget.spend(chars);
    // Many small hunks: each is little work, together they are not.
    await this.budget.pause();
    return wanted;
  }

  /** First i >= start with ids[i..] beginning with wanted, or -1: Knuth-Morris-Pratt, O(n - start + m). */
  private async kmp(ids: Int32Array, wanted: Int32Array, start: number): Promise<number> {
    const m = wanted.length;
    const fail = new Int32Array(m);
    for (let i = 1, k = 0; i < m; i++) {
      while (k > 0 && wanted[i] !== wanted[k]) k = fail[k - 1] as number;
      if (wanted[i] === wanted[k]) k++;
      fail[i] = k;
    }
    this.budget.spend(2 * m);
    let k = 0;
    for (let from = start; from < ids.length; from += SLICE_LINES) {
      const to = Math.min(ids.length, from + SLICE_LINES);
      for (let i = from; i < to; i++) {
        while (k > 0 && ids[i] !== wanted[k]) k = fail[k - 1] as number;
        if (ids[i] === wanted[k]) k++;
        if (k === m) {
          this.budget.spend(2 * (i - from + 1));
          return i - m + 1;
        }
      }
      // Each line costs at most two comparisons, amortized.
      this.budget.spend(2 * (to - from));
      await this.budget.pause();
    }
    return -1;
  }
}

/** True when every newline of the text is part of a CRLF (an LF file with a stray \r\n stays LF). */
function usesCrlf(text: string): boolean {
  let lf = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (text[at - 1] !== '\r') return false;
    lf++;
  }
  return lf > 0;
}

/** The text's lines (without their \r when `crlf`), split in slices charged to the budget. */
async function splitLines(text: string, crlf: boolean, budget: SearchBudget): Promise<string[]> {
  const lines: string[] = [];
  let start = 0;
  let charged = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
    lines.push(text.slice(start, crlf ? at - 1 : at));
    start = at + 1;
    if (lines.length % SLICE_LINES === 0 || start - charged >= SLICE_WORK) {
      budget.spend(start - charged);
      charged = start;
      await budget.pause();
    }
  }
  lines.push(text.slice(start));
  budget.spend(text.length - charged);
  return lines;
}

/** The hunk's lines as a tool error shows them, cut so a huge hunk cannot flood the message. */
function showLines(lines: readonly string[]): string {
  const shown = lines.slice(0, 12).map((line) => `  ${line}`);
  if (lines.length > 12) shown.push(`  … (${lines.length - 12} more lines)`);
  return shown.join('\n');
}

/**
 * Applies an Update File section's hunks to `text` (the file `shownPath`), its search charged to `budget`
 * (and yielding to the event loop as it goes).
 * Throws a ToolError naming the file, the hunk and its lines when a hunk's `@@` header or expected lines are
 * not in the file, or when the search exceeds the budget.
 */
export async function applyChunks(
  text: string,
  chunks: readonly PatchChunk[],
  shownPath: string,
  budget: SearchBudget,
): Promise<string> {
  const crlf = usesCrlf(text);
  const lines = await splitLines(text, crlf, budget);
  // A final newline ends the last line; it does not start another one.
  if (lines.at(-1) === '') lines.pop();
  const search = new LineSearch(lines, budget);
  const replacements: { start: number; length: number; lines: string[] }[] = [];
  let cursor = 0;
  for (const [index, chunk] of chunks.entries()) {
    const where = `${shownPath}: hunk ${index + 1} (patch line ${chunk.line})`;
    if (chunk.context !== null) {
      const found = await search.seek([chunk.context], cursor, false);
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
      continue;
    }
    let pattern = chunk.oldLines;
    let replacement = chunk.newLines;
    let found = await search.seek(pattern, cursor, chunk.endOfFile);
    // A trailing empty context line often stands for the file's final newline, which is no line here.
    if (found === -1 && pattern.at(-1) === '') {
      pattern = pattern.slice(0, -1);
      if (replacement.at(-1) === '') replacement = replacement.slice(0, -1);
      found = pattern.length === 0 ? -1 : await search.seek(pattern, cursor, chunk.endOfFile);
    }
    if (found === -1) {
      throw new ToolError(
        `${where}: these lines were not found in the file${index > 0 ? ' after the previous hunk' : ''}; nothing was changed. Read the file again and copy the ' ' and '-' lines exactly:\n${showLines(chunk.oldLines)}`,
      );
    }
    replacements.push({ start: found, length: pattern.length, lines: replacement });
    cursor = found + pattern.length;
  }
  // One pass in file order (stable: at one position, the hunks' own order): linear however many hunks,
  // and no spread of a hunk's lines into a call (a hunk of 100,000+ lines overflowed the stack).
  const out: string[] = [];
  let at = 0;
  for (const change of [...replacements].sort((a, b) => a.start - b.start)) {
    for (; at < change.start; at++) out.push(lines[at] as string);
    for (const line of change.lines) out.push(line);
    at = change.start + change.length;
  }
  for (; at < lines.length; at++) out.push(lines[at] as string);
  const eol = crlf ? '\r\n' : '\n';
  return out.length === 0 ? '' : `${out.join(eol)}${eol}`;
}
