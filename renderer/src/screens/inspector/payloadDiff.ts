import { diffArrays } from 'diff';

/** One row of a unified line diff: a kept, removed or added line, or a run of unchanged lines left out. */
export type DiffRow =
  | { kind: 'same' | 'removed' | 'added'; text: string; oldLine?: number; newLine?: number }
  | { kind: 'skipped'; count: number; oldLine: number; newLine: number };

/** A unified diff of two texts, with counts. */
export type LineDiff = {
  rows: DiffRow[];
  added: number;
  removed: number;
  /** True when the changed middle was too large for a line-by-line diff and is shown as one replacement. */
  coarse: boolean;
};

/** Above this many lines of changed middle, the two sides are shown as one block replacement. */
const MAX_MIDDLE_LINES = 40_000;
/** Edit budget of the line diff of the middle (Myers is O(N·D)); beyond it, a block replacement. */
const MAX_EDIT_LENGTH = 4_000;

/**
 * A line diff of `before` → `after` with `context` unchanged lines kept around each change and longer
 * unchanged runs folded into `skipped` rows. The common head and tail are trimmed first (a payload with and
 * without a compaction differ in one region), so only the middle is diffed line by line; a middle too
 * large for that is one removal plus one addition, flagged `coarse`. Pure.
 */
export function diffLines(before: string, after: string, context = 3): LineDiff {
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  )
    tail++;
  const oldMiddle = oldLines.slice(head, oldLines.length - tail);
  const newMiddle = newLines.slice(head, newLines.length - tail);

  type Line = { kind: 'same' | 'removed' | 'added'; text: string };
  const middle: Line[] = [];
  let coarse = false;
  const changes =
    oldMiddle.length + newMiddle.length <= MAX_MIDDLE_LINES && oldMiddle.length > 0 && newMiddle.length > 0
      ? diffArrays(oldMiddle, newMiddle, { maxEditLength: MAX_EDIT_LENGTH })
      : undefined;
  if (changes) {
    for (const change of changes) {
      const kind = change.added ? 'added' : change.removed ? 'removed' : 'same';
      for (const text of change.value) middle.push({ kind, text });
    }
  } else {
    coarse = oldMiddle.length > 0 && newMiddle.length > 0;
    for (const text of oldMiddle) middle.push({ kind: 'removed', text });
    for (const text of newMiddle) middle.push({ kind: 'added', text });
  }

  const all: Line[] = [
    ...oldLines.slice(0, head).map((text) => ({ kind: 'same' as const, text })),
    ...middle,
    ...oldLines.slice(oldLines.length - tail).map((text) => ({ kind: 'same' as const, text })),
  ];

  // Number the lines on both sides, then fold unchanged runs that are far from any change.
  const numbered: Extract<DiffRow, { kind: 'same' | 'removed' | 'added' }>[] = [];
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  for (const line of all) {
    if (line.kind === 'same')
      numbered.push({ kind: 'same', text: line.text, oldLine: oldLine++, newLine: newLine++ });
    else if (line.kind === 'removed') {
      numbered.push({ kind: 'removed', text: line.text, oldLine: oldLine++ });
      removed++;
    } else {
      numbered.push({ kind: 'added', text: line.text, newLine: newLine++ });
      added++;
    }
  }
  return { rows: foldUnchanged(numbered, context), added, removed, coarse };
}

function foldUnchanged(
  lines: Extract<DiffRow, { kind: 'same' | 'removed' | 'added' }>[],
  context: number,
): DiffRow[] {
  const near = new Uint8Array(lines.length);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let i = Math.max(0, index - context); i <= Math.min(lines.length - 1, index + context); i++)
      near[i] = 1;
  });
  const rows: DiffRow[] = [];
  for (let index = 0; index < lines.length;) {
    const line = lines[index]!;
    if (line.kind !== 'same' || near[index]) {
      rows.push(line);
      index++;
      continue;
    }
    let end = index;
    while (end < lines.length && lines[end]!.kind === 'same' && !near[end]) end++;
    rows.push({
      kind: 'skipped',
      count: end - index,
      oldLine: line.oldLine ?? 0,
      newLine: line.newLine ?? 0,
    });
    index = end;
  }
  return rows;
}

/** The lines of `text`; a final newline does not make an extra empty line. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
