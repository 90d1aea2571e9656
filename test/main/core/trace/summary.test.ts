import { describe, expect, it } from 'vitest';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import type { TraceEntry } from '../../../../main/core/log/sessionLog.js';
import {
  cacheHitRate,
  SessionTraceSummarySchema,
  summarizeSession,
  type SessionTraceSource,
} from '../../../../main/core/trace/index.js';

const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** Builds a log: each entry is [milliseconds after T0, event]; seqs follow the order. */
function log(sessionId: string, model: string, entries: [number, NewEvent][]): SessionEvent[] {
  const created = {
    kind: 'session_created',
    sessionId,
    projectFolder: '/work/app',
    provider: 'anthropic',
    model,
    contextWindow: 200_000,
    toolMode: 'write',
    policy: 'ask',
  } as NewEvent;
  const all: [number, NewEvent][] = [[0, created], ...entries];
  return all.map(([ms, event], index) => ({ ...event, seq: index + 1, at: at(ms) }));
}

const trace = (
  turn: number,
  stage: string,
  startMs: number,
  durationMs?: number,
  detail?: unknown,
): TraceEntry => ({
  turn,
  stage,
  startedAt: at(startMs),
  ...(durationMs === undefined ? {} : { durationMs }),
  ...(detail === undefined ? {} : { detail }),
});

const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });

/** A two-turn session on a priced model: a command, an approval that waited a minute, a retry, a subagent. */
function parentSource(childId: string): SessionTraceSource {
  const events = log('parent', 'claude-sonnet-4-5', [
    [0, { kind: 'user_message', content: 'fix the failing test' }],
    [
      520,
      {
        kind: 'assistant_message',
        content: '',
        toolCalls: [call('call_1', 'run_command', { command: 'npm test' })],
        usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 3000, cacheWriteTokens: 0 },
        model: 'claude-sonnet-4-5',
      },
    ],
    [
      530,
      {
        kind: 'tool_call_started',
        toolCallId: 'call_1',
        tool: 'run_command',
        idempotencyKey: 'ev3-run_command',
      },
    ],
    [1530, { kind: 'tool_result', toolCallId: 'call_1', content: 'ok' }],
    [
      1600,
      {
        kind: 'assistant_message',
        content: '',
        toolCalls: [
          call('call_2', 'edit_file', { path: 'a.ts' }),
          call('call_3', 'spawn_subagent', { task: 'look' }),
        ],
        usage: { inputTokens: 200, outputTokens: 50, cacheReadTokens: 4000, cacheWriteTokens: 800 },
        model: 'claude-sonnet-4-5',
      },
    ],
    [1610, { kind: 'approval_request', toolCallId: 'call_2', tool: 'edit_file', arguments: '{}' }],
    [61_610, { kind: 'approval_granted', requestSeq: 7, scope: 'once' }],
    [
      61_700,
      { kind: 'subagent_started', childId, toolCallId: 'call_3', task: 'look around', tools: ['read_file'] },
    ],
    [65_000, { kind: 'subagent_result', childId, toolCallId: 'call_3', content: 'found it' }],
    [70_000, { kind: 'user_message', content: 'and now?' }],
    [
      70_500,
      { kind: 'model_changed', provider: 'openai-compatible', model: 'local-model', contextWindow: 8000 },
    ],
    [
      71_000,
      {
        kind: 'assistant_message',
        content: 'done',
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
    ],
    [72_000, { kind: 'user_message', content: 'one more edit' }],
    [72_500, { kind: 'approval_request', toolCallId: 'call_9', tool: 'write_file', arguments: '{}' }],
  ]);
  const entries = [
    trace(1, 'harness_turn', 0),
    trace(1, 'projection', 10, 5, { messages: 2 }),
    trace(1, 'time_to_first_token', 15, 300),
    trace(1, 'stream', 315, 200),
    trace(1, 'usage', 15, 505, { inputTokens: 1000 }),
    trace(1, 'tool:run_command', 530, 1000, { toolCallId: 'call_1', isError: false }),
    trace(1, 'retry', 1540, 0, { attempt: 1, delayMs: 500, reason: 'overloaded' }),
    trace(1, 'compaction', 61_650, 40, { trigger: 'auto', status: 'compacted' }),
    trace(1, 'tool:spawn_subagent', 61_700, 3300, { toolCallId: 'call_3', status: 'answered' }),
    trace(2, 'projection', 70_010, 2),
  ];
  return { events, trace: entries };
}

function childSource(childId: string, grandchildId?: string): SessionTraceSource {
  return {
    events: log(childId, 'claude-sonnet-4-5', [
      [61_710, { kind: 'user_message', content: 'look around' }],
      [
        62_000,
        {
          kind: 'assistant_message',
          content: 'found it',
          toolCalls: [],
          usage: { inputTokens: 500, outputTokens: 20 },
          model: 'claude-sonnet-4-5',
        },
      ],
      ...(grandchildId
        ? ([[62_100, { kind: 'subagent_started', childId: grandchildId, task: 'deeper', tools: [] }]] as [
            number,
            NewEvent,
          ][])
        : []),
    ]),
    trace: [trace(1, 'projection', 61_720, 1)],
  };
}

describe('summarizeSession', () => {
  const sources = new Map([['child-1', childSource('child-1')]]);
  const summary = summarizeSession(parentSource('child-1'), {
    loadChild: (id) => sources.get(id),
    now: new Date(T0 + 82_500),
  });
  const [first, second, third] = summary.turns;

  it("lays out a turn's stages with offsets from its start, in start order", () => {
    expect(first?.turn).toBe(1);
    expect(first?.prompt).toBe('fix the failing test');
    expect(first?.startedAt).toBe(at(0));
    expect(first?.stages.map((s) => [s.name, s.startOffsetMs, s.durationMs])).toEqual([
      ['projection', 10, 5],
      ['request', 15, 500],
      ['time_to_first_token', 15, 300],
      ['stream', 315, 200],
      ['tool:run_command', 530, 1000],
      ['retry', 1540, 500],
      ['approval_wait', 1610, 60_000],
      ['compaction', 61_650, 40],
      ['tool:spawn_subagent', 61_700, 3300],
    ]);
    expect(first?.durationMs).toBe(65_000);
  });

  it('names each tool and its call id, and counts tools, retries and compactions', () => {
    const command = first?.stages.find((s) => s.kind === 'tool' && s.tool === 'run_command');
    expect(command).toMatchObject({ toolCallId: 'call_1', detail: { isError: false } });
    expect(first).toMatchObject({ tools: 2, retries: 1, compactions: 1, requests: 2 });
  });

  it('measures approval waits from the request to its decision, and pending ones up to now', () => {
    const wait = first?.stages.find((s) => s.kind === 'approval_wait');
    expect(wait).toMatchObject({
      tool: 'edit_file',
      toolCallId: 'call_2',
      requestSeq: 7,
      decision: 'granted',
    });
    expect(first?.approvalWaitMs).toBe(60_000);
    const pending = third?.stages.find((s) => s.kind === 'approval_wait');
    expect(pending).toMatchObject({ pending: true, durationMs: 10_000, tool: 'write_file' });
    expect(summary.totals.approvalWaitMs).toBe(70_000);
    const withoutNow = summarizeSession(parentSource('child-1'));
    expect(withoutNow.turns[2]?.approvalWaitMs).toBe(0);
  });

  it('sums tokens per turn and prices them with the catalogue; an unpriced model leaves the cost unknown', () => {
    expect(first).toMatchObject({
      inputTokens: 1200,
      outputTokens: 150,
      cacheReadTokens: 7000,
      cacheWriteTokens: 800,
      costKnown: true,
    });
    // sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    expect(first?.costUsd).toBeCloseTo((1200 * 3 + 150 * 15 + 7000 * 0.3 + 800 * 3.75) / 1e6, 10);
    expect(second).toMatchObject({ inputTokens: 10, outputTokens: 5, costKnown: false, costUsd: 0 });
    expect(summary.totals.costKnown).toBe(false);
    expect(summary.totals).toMatchObject({ turns: 3, requests: 3, inputTokens: 1210, outputTokens: 155 });
  });

  it('counts reasoning tokens per turn, in the chart series and the totals, only where a provider reported them', () => {
    const events = log('thinker', 'claude-opus-5-5', [
      [0, { kind: 'user_message', content: 'think' }],
      [
        100,
        {
          kind: 'assistant_message',
          content: '',
          toolCalls: [call('c1', 'read_file', { path: 'a' })],
          usage: { inputTokens: 10, outputTokens: 300, reasoningTokens: 250 },
        },
      ],
      [200, { kind: 'tool_result', toolCallId: 'c1', content: 'a' }],
      [
        300,
        {
          kind: 'assistant_message',
          content: 'done',
          toolCalls: [],
          usage: { inputTokens: 10, outputTokens: 50, reasoningTokens: 20 },
        },
      ],
      [400, { kind: 'user_message', content: 'plain' }],
      [
        500,
        {
          kind: 'assistant_message',
          content: 'ok',
          toolCalls: [],
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      ],
    ]);
    const thinking = summarizeSession({ events, trace: [] });
    expect(thinking.perTurn.map((point) => point.reasoningTokens)).toEqual([270, undefined]);
    expect(thinking.totals.reasoningTokens).toBe(270);
    expect(thinking.totals.outputTokens).toBe(355);
    expect(SessionTraceSummarySchema.parse(JSON.parse(JSON.stringify(thinking)))).toEqual(thinking);
  });

  it('gives the per-turn chart series and the cache hit rate', () => {
    expect(summary.perTurn.map((p) => [p.turn, p.totalTokens])).toEqual([
      [1, 1200 + 150 + 7000 + 800],
      [2, 15],
      [3, 0],
    ]);
    expect(summary.totals.cacheHitRate).toBeCloseTo(7000 / (1210 + 7000 + 800), 10);
    expect(
      cacheHitRate({ inputTokens: 0, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 }),
    ).toBeNull();
  });

  it('nests a subagent under the turn that spawned it, with its own summary and tokens', () => {
    expect(first?.subagents).toHaveLength(1);
    const child = first?.subagents[0];
    expect(child).toMatchObject({
      childId: 'child-1',
      toolCallId: 'call_3',
      task: 'look around',
      finished: true,
    });
    expect(child?.summary?.sessionId).toBe('child-1');
    expect(child?.summary?.totals).toMatchObject({ inputTokens: 500, outputTokens: 20, requests: 1 });
    expect(summary.totalsWithSubagents.inputTokens).toBe(1210 + 500);
    expect(summary.totalsWithSubagents.outputTokens).toBe(155 + 20);
    expect(second?.subagents).toEqual([]);
  });

  it('matches the schema the IPC contract can carry, nested child included, through JSON', () => {
    const parsed = SessionTraceSummarySchema.safeParse(JSON.parse(JSON.stringify(summary)));
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(summary);
    const broken = { ...summary, turns: [{ ...first, subagents: [{ childId: 'x' }] }] };
    expect(SessionTraceSummarySchema.safeParse(broken).success).toBe(false);
  });

  it('bounds nesting by depth, marks missing children, and never follows a cycle', () => {
    const deep = new Map([
      ['child-1', childSource('child-1', 'grandchild')],
      ['grandchild', childSource('grandchild', 'parent')],
    ]);
    const load = (id: string) => (id === 'parent' ? parentSource('child-1') : deep.get(id));
    const one = summarizeSession(parentSource('child-1'), { loadChild: load, maxDepth: 1 });
    const nested = one.turns[0]?.subagents[0]?.summary;
    expect(nested?.turns[0]?.subagents[0]).toMatchObject({ childId: 'grandchild', missing: 'depth_limit' });
    const all = summarizeSession(parentSource('child-1'), { loadChild: load, maxDepth: 5 });
    const grandchild = all.turns[0]?.subagents[0]?.summary?.turns[0]?.subagents[0];
    expect(grandchild?.summary?.turns[0]?.subagents[0]).toMatchObject({
      childId: 'parent',
      missing: 'cycle',
    });
    const gone = summarizeSession(parentSource('child-1'), { loadChild: () => undefined });
    expect(gone.turns[0]?.subagents[0]).toMatchObject({ missing: 'not_found' });
  });

  it('a request without a stream record (failed) is still shown, and unknown stages are kept as other', () => {
    const source = parentSource('child-1');
    const failed = summarizeSession({
      events: source.events.slice(0, 2),
      trace: [
        trace(1, 'time_to_first_token', 5, 100),
        trace(1, 'request', 5, 150, { failed: 'rate_limited' }),
        trace(1, 'persistent_commit', 200, 30),
        trace(1, 'something_new', 300, 1),
      ],
    });
    expect(failed.turns[0]?.stages.map((s) => [s.kind, s.name])).toEqual([
      ['request', 'request'],
      ['time_to_first_token', 'time_to_first_token'],
      ['persistent', 'persistent_commit'],
      ['other', 'something_new'],
    ]);
  });
});
