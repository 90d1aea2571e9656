// Attack corpus (issue 38): work done before any approval must be bounded. apply_patch's hunk search and
// the approval diff run on the harness's own thread when a call reaches the gate (tool.preview); a model
// (or a project file) could make them quadratic: a 30 KB patch blocked the process for 30 s, a 56 KB
// write_file's diff for 23 s. No timing assertions on speed (that is `npm run bench`, the `bounded` row):
// the work is counted where it can be, and otherwise a timer ticking beside the call checks the event loop
// is never held for long (a liveness bound, generous: the inputs below held it for 5-60 s before).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyPatch as applyUnified } from 'diff';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPatchTool } from '../../main/tools/applyPatch.js';
import { BLOCK_DIFF_NOTE, boundedDiff } from '../../main/tools/diffText.js';
import { toolLimits } from '../../main/tools/limits.js';
import type { PatchOp } from '../../main/tools/patchParse.js';
import { parsePatch } from '../../main/tools/patchParse.js';
import { applyChunks, SearchBudget } from '../../main/tools/patchText.js';
import type { CallPreview } from '../../main/tools/types.js';
import { writeFileTool } from '../../main/tools/writeFile.js';
import { errorOf, makeWorkspace, type TempWorkspace } from '../main/tools/helpers.js';

/** The longest the event loop may be held by one preview: generous, the point is "not seconds". */
const MAX_HOLD_MS = 1500;

/** Runs `work` with a timer ticking beside it; returns its result and the longest gap between ticks. */
async function withTicker<T>(work: () => Promise<T>): Promise<{ value: T; longestGapMs: number }> {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  try {
    const value = await work();
    tick();
    return { value, longestGapMs: longest };
  } finally {
    clearInterval(timer);
  }
}

const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
const numbered = (count: number, word: string): string =>
  Array.from({ length: count }, (_, i) => `${word} ${i}\n`).join('');

let t: TempWorkspace;
beforeEach(() => {
  t = makeWorkspace();
});
afterEach(() => t.cleanup());

describe('attack: apply_patch hunk search before approval', () => {
  // 24,000 identical lines and a hunk of 12,000 of them then one that is not there: every start position
  // matched 12,000 lines before failing, under four matchers (~1.2e9 comparisons).
  const lines = 24_000;
  const repetitive = () => {
    writeFileSync(path.join(t.workspace, 'same.txt'), 'a\n'.repeat(lines));
    return patch('*** Update File: same.txt', '@@', ...Array<string>(lines / 2).fill(' a'), '-missing');
  };

  it('a hunk of repeated lines that is not in the file: refused at once, the event loop never held', async () => {
    const input = repetitive();
    const { value, longestGapMs } = await withTicker(() => applyPatchTool.preview({ input }, t.ctx()));
    expect(longestGapMs).toBeLessThan(MAX_HOLD_MS);
    expect(value.ok).toBe(false);
    expect(errorOf((value as Extract<CallPreview, { ok: false }>).outcome.content)).toMatch(
      /^same\.txt: hunk 1 \(patch line 3\): these lines were not found in the file; nothing was changed/,
    );
  });

  it('the search work is linear: counted, at most a small multiple of the file and the hunk', async () => {
    const input = repetitive();
    const op = parsePatch(input)[0] as Extract<PatchOp, { kind: 'update' }>;
    const text = 'a\n'.repeat(lines);
    const budget = new SearchBudget(Number.MAX_SAFE_INTEGER);
    await expect(applyChunks(text, op.chunks, 'same.txt', budget)).rejects.toThrow(/were not found/);
    // Four matchers, each reading the file's lines and the hunk's once, KMP two comparisons a line: ~30x.
    expect(budget.spent).toBeLessThan(40 * (text.length + input.length));
  });

  it('a hunk of 150,000 repeated lines found at the very end: applied, linear, no stack overflow', async () => {
    // Before: every start position matched most of the hunk (quadratic), and the hunk's lines were spread
    // into one splice call (RangeError past ~100,000 lines).
    writeFileSync(path.join(t.workspace, 'end.txt'), `${'a\n'.repeat(300_000)}b\n`);
    const hunk = [...Array<string>(150_000).fill(' a'), '-b', '+c'];
    const input = ['*** Begin Patch', '*** Update File: end.txt', '@@', ...hunk, '*** End Patch'].join('\n');
    const { value, longestGapMs } = await withTicker(() => applyPatchTool.preview({ input }, t.ctx()));
    expect(longestGapMs).toBeLessThan(MAX_HOLD_MS);
    expect(value.ok).toBe(true);
    expect((value as Extract<CallPreview, { ok: true }>).diff).toContain(
      '@@ -299998,4 +299998,4 @@\n a\n a\n a\n-b\n+c\n',
    );
  });

  it('a patch that would search past the budget is refused with a clear error, nothing written', async () => {
    // One 2 MB file named by many sections, each finding its line at the very end: linear each, but the
    // whole patch is more than one patch's budget.
    const big = `${numbered(200_000, 'line')}END\n`;
    writeFileSync(path.join(t.workspace, 'big.txt'), big);
    const sections = Array.from({ length: 60 }, () => ['*** Update File: big.txt', '@@ END', '+x']).flat();
    const { value, longestGapMs } = await withTicker(() =>
      applyPatchTool.preview({ input: patch(...sections) }, t.ctx()),
    );
    expect(longestGapMs).toBeLessThan(MAX_HOLD_MS);
    expect(value.ok).toBe(false);
    expect(errorOf((value as Extract<CallPreview, { ok: false }>).outcome.content)).toBe(
      `finding this patch's hunks in its files takes more work than apply_patch allows (${toolLimits.patchSearchMaxWork} line comparisons and characters read); nothing was changed. Split it into smaller patches with fewer, more distinctive context lines, or use write_file for a whole file`,
    );
    expect(readFileSync(path.join(t.workspace, 'big.txt'), 'utf8')).toBe(big);
  });

  it('a patch rewriting every line of a file: its approval diff is bounded too, and it still applies', async () => {
    const before = numbered(6000, 'line');
    writeFileSync(path.join(t.workspace, 'all.txt'), before);
    const hunk = [
      ...before
        .trimEnd()
        .split('\n')
        .map((l) => `-${l}`),
      ...numbered(6000, 'other')
        .trimEnd()
        .split('\n')
        .map((l) => `+${l}`),
    ];
    const input = patch('*** Update File: all.txt', '@@', ...hunk);
    const { value, longestGapMs } = await withTicker(() => applyPatchTool.preview({ input }, t.ctx()));
    expect(longestGapMs).toBeLessThan(MAX_HOLD_MS);
    expect(value.ok).toBe(true);
    const diff = (value as Extract<CallPreview, { ok: true }>).diff ?? '';
    expect(diff.endsWith(`${BLOCK_DIFF_NOTE}\n`)).toBe(true);
    expect(applyUnified(before, diff)).toBe(numbered(6000, 'other'));
  });
});

describe('attack: the approval diff of write_file', () => {
  it('a 100 KB rewrite of a 100 KB file: one replaced block with a note, correct, the event loop never held', async () => {
    const before = numbered(9000, 'line');
    const content = numbered(9000, 'other');
    writeFileSync(path.join(t.workspace, 'g.txt'), before);
    const { value, longestGapMs } = await withTicker(() =>
      writeFileTool.preview({ path: 'g.txt', content }, t.ctx()),
    );
    expect(longestGapMs).toBeLessThan(MAX_HOLD_MS);
    expect(value.ok).toBe(true);
    const diff = (value as Extract<CallPreview, { ok: true }>).diff ?? '';
    expect(
      diff.startsWith(
        '===================================================================\n--- a/g.txt\n+++ b/g.txt\n@@ -1,9000 +1,9000 @@\n-line 0\n',
      ),
    ).toBe(true);
    expect(diff.endsWith(`+other 8999\n${BLOCK_DIFF_NOTE}\n`)).toBe(true);
    expect(applyUnified(before, diff)).toBe(content);
  });

  it('keeps the exact minimal diff for ordinary edits, and sets aside what both sides share', () => {
    const before = numbered(20_000, 'line');
    const after = before.replace('line 1000\n', 'changed 1000\n').replace('line 15000\n', '');
    const { diff, added, removed } = boundedDiff('a/x', 'b/x', before, after);
    expect({ added, removed }).toEqual({ added: 1, removed: 2 });
    expect(diff).toContain(
      '@@ -998,7 +998,7 @@\n line 997\n line 998\n line 999\n-line 1000\n+changed 1000\n',
    );
    expect(diff).toContain('@@ -14998,7 +14998,6 @@\n');
    expect(diff).not.toContain(BLOCK_DIFF_NOTE);
    expect(applyUnified(before, diff)).toBe(after);
  });
});
