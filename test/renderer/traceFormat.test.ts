import { describe, expect, it } from 'vitest';

// Renderer modules are compiled by tsconfig.web.json, not the Node project these tests type-check in: they are
// loaded at run time and described here by the shapes these tests rely on.
type ScaleModule = {
  niceCeiling: (value: number) => number;
  ticksUpTo: (max: number, count?: number) => number[];
  shareOf: (value: number, max: number) => number;
};
type Stage = {
  kind: string;
  name: string;
  tool?: string;
  decision?: string;
  pending?: boolean;
  detail?: unknown;
};
type FormatModule = {
  formatDuration: (ms: number) => string;
  formatCost: (usd: number) => string;
  formatCostKnown: (usd: number, known: boolean) => string;
  costNote: (known: boolean) => string | undefined;
  formatPercent: (share: number | null) => string;
  stageLabel: (stage: Stage) => string;
  stageDetail: (stage: Stage) => string | undefined;
};
const scalePath = '../../renderer/src/components/charts/scale.js';
const formatPath = '../../renderer/src/screens/trace/traceFormat.js';
const { niceCeiling, ticksUpTo, shareOf } = (await import(/* @vite-ignore */ scalePath)) as ScaleModule;
const format = (await import(/* @vite-ignore */ formatPath)) as FormatModule;

describe('chart scales', () => {
  it('rounds an axis up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect([0, -3, 0.3, 1, 3, 9, 11, 240, 2_100, 0.0042].map(niceCeiling)).toEqual([
      1, 1, 0.5, 1, 5, 10, 20, 250, 2_500, 0.005,
    ]);
    expect(niceCeiling(0.1 + 0.2)).toBe(0.5);
    expect(niceCeiling(0.25)).toBe(0.25);
  });

  it('spaces ticks evenly and clamps shares', () => {
    expect(ticksUpTo(2_500)).toEqual([0, 500, 1_000, 1_500, 2_000, 2_500]);
    expect(ticksUpTo(2_000)).toEqual([0, 500, 1_000, 1_500, 2_000]);
    expect(ticksUpTo(5)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ticksUpTo(100, 4)).toEqual([0, 25, 50, 75, 100]);
    expect([shareOf(5, 10), shareOf(20, 10), shareOf(-1, 10), shareOf(1, 0)]).toEqual([0.5, 1, 0, 0]);
  });
});

describe('trace wording', () => {
  it('formats durations, costs and shares for people', () => {
    expect([0, 349.6, 1_234, 14_400, 125_000, 3_725_000].map(format.formatDuration)).toEqual([
      '0 ms',
      '350 ms',
      '1.2 s',
      '14 s',
      '2 min 05 s',
      '1 h 02 min',
    ]);
    expect([0, 0.0042, 0.31, 12.4].map(format.formatCost)).toEqual(['$0', '$0.0042', '$0.310', '$12.40']);
    expect(format.formatCostKnown(0.5, false)).toBe('≥ $0.500');
    // An unpriced model's cost is unknown, never $0.
    expect(format.formatCostKnown(0, false)).toBe('—');
    expect(format.formatCostKnown(0, true)).toBe('$0');
    expect(format.costNote(false)).toMatch(/unknown/);
    expect([null, 0.424].map(format.formatPercent)).toEqual(['—', '42%']);
  });

  it('labels stages by what they are and says what their record carried', () => {
    expect(format.stageLabel({ kind: 'tool', name: 'tool:run_command', tool: 'run_command' })).toBe(
      'run_command',
    );
    expect(
      format.stageLabel({
        kind: 'approval_wait',
        name: 'approval_wait',
        tool: 'write_file',
        decision: 'denied',
      }),
    ).toBe('Approval wait · write_file (denied)');
    expect(format.stageLabel({ kind: 'approval_wait', name: 'approval_wait', pending: true })).toBe(
      'Approval wait (pending)',
    );
    expect(format.stageLabel({ kind: 'time_to_first_token', name: 'time_to_first_token' })).toBe(
      'Time to first token',
    );
    expect(
      format.stageDetail({
        kind: 'retry',
        name: 'retry',
        detail: { attempt: 2, reason: 'overloaded', nested: {} },
      }),
    ).toBe('attempt: 2 · reason: overloaded');
    expect(format.stageDetail({ kind: 'other', name: 'x', detail: null })).toBeUndefined();
  });

  it('names every stage the core records in words, never by its raw name', () => {
    // Each stage name main/core writes to the trace (turn engine, compaction hook, checkouts, harness stream),
    // with the kind main/core/trace/summary.ts gives it.
    const recorded: Stage[] = [
      { kind: 'projection', name: 'projection' },
      { kind: 'request', name: 'request' },
      { kind: 'time_to_first_token', name: 'time_to_first_token' },
      { kind: 'stream', name: 'stream' },
      { kind: 'retry', name: 'retry' },
      { kind: 'compaction', name: 'compaction' },
      { kind: 'tool', name: 'tool:read_file', tool: 'read_file' },
      { kind: 'persistent', name: 'persistent_reset' },
      { kind: 'persistent', name: 'persistent_commit' },
      { kind: 'other', name: 'harness_turn' },
      { kind: 'other', name: 'usage' },
    ];
    const labels = recorded.map((stage) => format.stageLabel(stage));
    expect(labels).toEqual([
      'Projection',
      'Request',
      'Time to first token',
      'Stream',
      'Retry',
      'Compaction',
      'read_file',
      'Reset checkouts',
      'Apply changes to the folder',
      'Turn',
      'Usage',
    ]);
    // A stage added later without words of its own still reads as words.
    expect(format.stageLabel({ kind: 'other', name: 'sandbox_setup' })).toBe('Sandbox setup');
    expect(format.stageLabel({ kind: 'persistent', name: 'persistent_merge' })).toBe('Persistent merge');
  });

  it('says what a checkout step did: the dirs it reset, what each commit applied or refused', () => {
    expect(
      format.stageDetail({
        kind: 'persistent',
        name: 'persistent_reset',
        detail: { reset: ['project', 'docs'], leftoverCommits: 0 },
      }),
    ).toBe('reset project, docs');
    expect(
      format.stageDetail({
        kind: 'persistent',
        name: 'persistent_reset',
        detail: { reset: ['project'], leftoverCommits: 1 },
      }),
    ).toBe('reset project · applied what the last turn left in 1 dir first');
    expect(
      format.stageDetail({
        kind: 'persistent',
        name: 'persistent_commit',
        detail: {
          dirs: ['project', 'docs', 'notes'],
          reports: [
            { dir: 'project', status: 'committed', files: 3 },
            { dir: 'docs', status: 'conflict', conflicts: ['a.md', 'b.md'] },
            { dir: 'notes', status: 'unchanged' },
          ],
        },
      }),
    ).toBe('project: 3 files applied · docs: conflict in a.md, b.md, nothing applied · notes: no changes');
    expect(
      format.stageDetail({
        kind: 'persistent',
        name: 'persistent_commit',
        detail: {
          dirs: ['project'],
          manual: true,
          reports: [{ dir: 'project', status: 'committed', files: 1 }],
        },
      }),
    ).toBe('project: 1 file applied · after review');
    expect(
      format.stageDetail({
        kind: 'persistent',
        name: 'persistent_commit',
        detail: { dirs: [], reports: [] },
      }),
    ).toBe('nothing to apply');
  });
});
