import { formatPatch, structuredPatch, type StructuredPatchHunk } from 'diff';
import { toolLimits } from './limits.js';

// The unified diff a file change shows, computed before any approval, in bounded work. jsdiff's line diff
// is Myers' O((N+M)·D): a rewrite of a few thousand lines took seconds, blocking the process. Here the lines
// both sides share at the start and at the end are found first, on the texts as they are (no line arrays:
// linear, allocation-free), and jsdiff runs only on what lies between, with an edit-length bound, so
// (lines x edits) stays under `toolLimits.diffMaxWork`; a change with more edits than that is shown as one
// replaced block (correct, not minimal), with a note saying so. Deterministic (no clock): an approval's diff
// is compared again after it is granted.

/** A file's unified diff and the lines it adds and removes. */
export interface TextDiff {
  diff: string;
  added: number;
  removed: number;
}

/** The note a diff shown as one block ends with. */
export const BLOCK_DIFF_NOTE = '[too many changes to compare line by line: shown as one replaced block]';

const CONTEXT = 3;

/** Lines added and removed by a unified diff's hunks. */
export function countDiffLines(patch: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) added++;
    else if (line.startsWith('-') && !line.startsWith('---')) removed++;
  }
  return { added, removed };
}

/** Lines in text[from, to) (a last line without its newline counts). */
function countLines(text: string, from: number, to: number): number {
  let lines = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) lines++;
  return to > from && text[to - 1] !== '\n' ? lines + 1 : lines;
}

/** Where the `count`th line before the line starting at `at` starts (0 at most). */
function linesBack(text: string, at: number, count: number): number {
  let start = at;
  for (let i = 0; i < count && start > 0; i++) start = start < 2 ? 0 : text.lastIndexOf('\n', start - 2) + 1;
  return start;
}

/** Where the line `count` lines after the line starting at `at` starts (text.length at most). */
function linesForward(text: string, at: number, count: number): number {
  let end = at;
  for (let i = 0; i < count && end < text.length; i++) {
    const next = text.indexOf('\n', end);
    end = next === -1 ? text.length : next + 1;
  }
  return end;
}

/** Where the lines both texts start with end (a line start in both). */
function commonHead(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === a.length && i === b.length) return i;
  return i === 0 ? 0 : a.lastIndexOf('\n', i - 1) + 1;
}

/** How many characters of whole lines both texts end with, after `head`. */
function commonTail(a: string, b: string, head: number): number {
  const most = Math.min(a.length, b.length) - head;
  let j = 0;
  while (j < most && a.charCodeAt(a.length - 1 - j) === b.charCodeAt(b.length - 1 - j)) j++;
  const p = a.length - j;
  const q = b.length - j;
  const lineStart = (text: string, at: number) => at === head || text[at - 1] === '\n';
  if (lineStart(a, p) && lineStart(b, q)) return j;
  // The shared end starts inside a line: it counts from the next line start on (the same in both).
  const next = a.indexOf('\n', p);
  return next === -1 ? 0 : a.length - (next + 1);
}

/**
 * A lower bound of the edits between text[head, end) of each side: the lines of both, less twice those
 * the two could have in common (however ordered). Linear; jsdiff is not run when it is sure to give up.
 */
function minEdits(a: string, b: string, head: number, aEnd: number, bEnd: number): number {
  const counts = new Map<string, number>();
  let lines = 0;
  for (let start = head; start < aEnd; lines++) {
    const newline = a.indexOf('\n', start);
    const end = newline === -1 || newline >= aEnd ? aEnd : newline + 1;
    const line = a.slice(start, end);
    counts.set(line, (counts.get(line) ?? 0) + 1);
    start = end;
  }
  let common = 0;
  for (let start = head; start < bEnd; lines++) {
    const newline = b.indexOf('\n', start);
    const end = newline === -1 || newline >= bEnd ? bEnd : newline + 1;
    const line = b.slice(start, end);
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      counts.set(line, left - 1);
      common++;
    }
    start = end;
  }
  return lines - 2 * common;
}

/**
 * Hunk lines of text[from, to) with one prefix (git's marker after a line without a final newline),
 * appended until `out` holds diffMaxChars characters: callers cut every diff there anyway.
 */
function pushLines(
  out: string[],
  size: { chars: number },
  prefix: string,
  text: string,
  from: number,
  to: number,
): void {
  for (let start = from; start < to && size.chars <= toolLimits.diffMaxChars;) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 || newline >= to ? to : newline + 1;
    const whole = text[end - 1] === '\n';
    const line = prefix + text.slice(start, whole ? end - 1 : end);
    out.push(line);
    if (!whole) out.push('\\ No newline at end of file');
    size.chars += line.length + 1;
    start = end;
  }
}

/**
 * The unified diff of two texts (3 lines of context) in work linear in their size plus at most
 * `toolLimits.diffMaxWork` line steps: past that, one replaced block ending with BLOCK_DIFF_NOTE (whose
 * lines stop past diffMaxChars; callers cut every diff there). Counts are of the whole change.
 */
export function boundedDiff(oldName: string, newName: string, oldText: string, newText: string): TextDiff {
  const head = commonHead(oldText, newText);
  const names = { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined };
  if (head === oldText.length && head === newText.length) {
    const patch = formatPatch({ ...names, hunks: [] });
    return { diff: patch, added: 0, removed: 0 };
  }
  const tail = commonTail(oldText, newText, head);
  const oldMiddleEnd = oldText.length - tail;
  const newMiddleEnd = newText.length - tail;
  // The window jsdiff or the block shows: the changed lines and up to CONTEXT shared lines on each side.
  const from = linesBack(oldText, head, CONTEXT);
  const after = linesForward(oldText, oldMiddleEnd, CONTEXT) - oldMiddleEnd;
  const fromLine = countLines(oldText, 0, from);
  const oldLines = countLines(oldText, from, oldMiddleEnd + after);
  const newLines = countLines(newText, from, newMiddleEnd + after);
  const removed = countLines(oldText, head, oldMiddleEnd);
  const added = countLines(newText, head, newMiddleEnd);
  const maxEditLength = Math.floor(toolLimits.diffMaxWork / (oldLines + newLines + 1));
  if (maxEditLength >= 1 && minEdits(oldText, newText, head, oldMiddleEnd, newMiddleEnd) <= maxEditLength) {
    const window = structuredPatch(
      '',
      '',
      oldText.slice(from, oldMiddleEnd + after),
      newText.slice(from, newMiddleEnd + after),
      undefined,
      undefined,
      { context: CONTEXT, maxEditLength },
    );
    if (window !== undefined) {
      for (const hunk of window.hunks) {
        hunk.oldStart += fromLine;
        hunk.newStart += fromLine;
      }
      const patch = formatPatch({ ...names, hunks: window.hunks });
      return { diff: patch, ...countDiffLines(patch) };
    }
  }
  const lines: string[] = [];
  const size = { chars: 0 };
  pushLines(lines, size, ' ', oldText, from, head);
  pushLines(lines, size, '-', oldText, head, oldMiddleEnd);
  pushLines(lines, size, '+', newText, head, newMiddleEnd);
  pushLines(lines, size, ' ', oldText, oldMiddleEnd, oldMiddleEnd + after);
  // 1-based; formatPatch writes an empty side as starting at the line before it.
  const hunk: StructuredPatchHunk = {
    oldStart: fromLine + 1,
    oldLines,
    newStart: fromLine + 1,
    newLines,
    lines,
  };
  return { diff: `${formatPatch({ ...names, hunks: [hunk] })}${BLOCK_DIFF_NOTE}\n`, added, removed };
}
