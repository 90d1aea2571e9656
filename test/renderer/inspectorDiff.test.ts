import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';

// Renderer modules are compiled by tsconfig.web.json, not the Node project these tests type-check in: they are
// loaded at run time and described here by the shapes these tests rely on.
type DiffRow =
  | { kind: 'same' | 'removed' | 'added'; text: string; oldLine?: number; newLine?: number }
  | { kind: 'skipped'; count: number; oldLine: number; newLine: number };
type DiffModule = {
  diffLines: (
    before: string,
    after: string,
    context?: number,
  ) => {
    rows: DiffRow[];
    added: number;
    removed: number;
    coarse: boolean;
  };
};
type SectionsModule = {
  summarySections: (summary: string) => { title: string; level: number }[];
  referencedSeqs: (summary: string, from: number, through: number) => number[];
};
type EventTextModule = {
  describeEvent: (event: SessionEvent, max?: number) => { who: string; tone: string; text: string };
};
const inspector = '../../renderer/src/screens/inspector';
const diffPath = `${inspector}/payloadDiff.js`;
const sectionsPath = `${inspector}/summarySections.js`;
const eventTextPath = `${inspector}/eventText.js`;
const { diffLines } = (await import(/* @vite-ignore */ diffPath)) as DiffModule;
const { summarySections, referencedSeqs } = (await import(/* @vite-ignore */ sectionsPath)) as SectionsModule;
const { describeEvent } = (await import(/* @vite-ignore */ eventTextPath)) as EventTextModule;

const lines = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('the payload diff of the compaction inspector', () => {
  it('replaces a summary by the original events it stands for, keeping context and folding the rest', () => {
    const head = lines(20, 'system ');
    const tail = lines(15, 'recent ');
    const now = [...head, '--- user ---', 'SUMMARY of #2-#40', ...tail].join('\n');
    const without = [...head, ...lines(50, 'original event '), ...tail].join('\n');
    const diff = diffLines(now, without, 3);
    expect(diff.removed).toBe(2);
    expect(diff.added).toBe(50);
    expect(diff.coarse).toBe(false);
    expect(diff.rows[0]).toEqual({ kind: 'skipped', count: 17, oldLine: 1, newLine: 1 });
    expect(diff.rows.slice(1, 4).map((row) => row.kind)).toEqual(['same', 'same', 'same']);
    const changed = diff.rows.filter((row) => row.kind === 'added' || row.kind === 'removed');
    expect(changed.filter((row) => row.kind === 'removed').map((row) => 'text' in row && row.text)).toEqual([
      '--- user ---',
      'SUMMARY of #2-#40',
    ]);
    expect(diff.rows.at(-1)).toEqual({ kind: 'skipped', count: 12, oldLine: 26, newLine: 74 });
    // Line numbers on each side run on through the change.
    const lastAdded = [...diff.rows].reverse().find((row) => row.kind === 'added');
    expect(lastAdded).toMatchObject({ text: 'original event 49', newLine: 70 });
  });

  it('aligns small edits line by line inside the changed middle', () => {
    const diff = diffLines('a\nb\nc\nd\ne\n', 'a\nb\nX\nd\ne\n', 1);
    expect(diff.rows).toEqual([
      { kind: 'skipped', count: 1, oldLine: 1, newLine: 1 },
      { kind: 'same', text: 'b', oldLine: 2, newLine: 2 },
      { kind: 'removed', text: 'c', oldLine: 3 },
      { kind: 'added', text: 'X', newLine: 3 },
      { kind: 'same', text: 'd', oldLine: 4, newLine: 4 },
      { kind: 'skipped', count: 1, oldLine: 5, newLine: 5 },
    ]);
  });

  it('shows a middle too large to align as one removal and one addition, flagged coarse', () => {
    const before = lines(30_000, 'old ').join('\n');
    const after = lines(30_000, 'new ').join('\n');
    const started = performance.now();
    const diff = diffLines(before, after);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(diff).toMatchObject({ added: 30_000, removed: 30_000, coarse: true });
  });

  it('says nothing changed for equal texts, and handles empty ones', () => {
    expect(diffLines('same\ntext', 'same\ntext').rows).toEqual([
      { kind: 'skipped', count: 2, oldLine: 1, newLine: 1 },
    ]);
    expect(diffLines('', 'one\n')).toMatchObject({ added: 1, removed: 0, coarse: false });
    expect(diffLines('', '').rows).toEqual([]);
  });
});

describe('a compaction summary', () => {
  const summary = [
    '## Objective',
    '> build the parser',
    '```md',
    '## not a heading (in code)',
    '```',
    '## Work done',
    '- read #3, #12 and #99 (see #12 again); issue &#35;7 and C#5 are not event handles',
    '### Part 2: events #40–#60 ##',
  ].join('\n');

  it('lists its headings outside code blocks, in order', () => {
    expect(summarySections(summary)).toEqual([
      { title: 'Objective', level: 2 },
      { title: 'Work done', level: 2 },
      { title: 'Part 2: events #40–#60', level: 3 },
    ]);
  });

  it('finds the replaced events it points to, once each, within the range', () => {
    expect(referencedSeqs(summary, 2, 60)).toEqual([3, 12, 40, 60]);
  });
});

describe('a replaced event in the inspector', () => {
  const at = '2025-01-01T00:00:00.000Z';
  it('reads like the summarizer saw it: who, and the text with tool calls', () => {
    expect(
      describeEvent({
        seq: 4,
        at,
        kind: 'assistant_message',
        content: 'Reading it.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
      }),
    ).toEqual({ who: 'Assistant', tone: 'assistant', text: 'Reading it.\n→ read_file({"path":"a.ts"})' });
    expect(
      describeEvent({
        seq: 5,
        at,
        kind: 'tool_result',
        toolCallId: 'c1',
        tool: 'read_file',
        content: 'x',
        isError: true,
      }),
    ).toEqual({ who: 'Result read_file', tone: 'tool', text: '[error] x' });
    expect(describeEvent({ seq: 6, at, kind: 'approval_denied', requestSeq: 3, reason: 'no' }).text).toBe(
      'request #3: no',
    );
  });

  it('caps long texts and says how much was left out', () => {
    const line = describeEvent({ seq: 2, at, kind: 'user_message', content: 'x'.repeat(50) }, 10);
    expect(line.text).toBe(`${'x'.repeat(10)}… (40 more characters)`);
  });
});
