import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';

// The renderer is compiled by tsconfig.web.json, not the Node project these tests type-check in: the module
// is loaded at run time and described here by the shape these tests rely on.
type Item = { type: string; key: string; status?: string; [field: string]: unknown };
type TranscriptModule = {
  foldTranscript: (events: readonly SessionEvent[]) => Item[];
  splitSettledMarkdown: (text: string) => { settled: string[]; tail: string };
};
const modulePath = '../../renderer/src/screens/session/transcriptItems.js';
const { foldTranscript, splitSettledMarkdown } = (await import(
  /* @vite-ignore */ modulePath
)) as TranscriptModule;

let seq = 0;
const at = '2025-03-01T10:00:00.000Z';
const event = (fields: Record<string, unknown>) => ({ ...fields, seq: ++seq, at }) as SessionEvent;
const created = () =>
  event({
    kind: 'session_created',
    sessionId: 's1',
    projectFolder: '/p',
    provider: 'openai-compatible',
    model: 'm',
    contextWindow: 1000,
    toolMode: 'write',
    policy: 'ask',
  });
const call = (id: string, name = 'write_file') => ({ id, name, arguments: '{"path":"a.txt"}' });

describe('foldTranscript', () => {
  it('numbers each commit by its turn (every user message counts) only when the log is loaded from its start', () => {
    seq = 0;
    const commit = () => event({ kind: 'persistent_commit', dir: 'project', files: [] });
    const events = [
      created(),
      event({ kind: 'user_message', content: 'one' }),
      commit(),
      event({ kind: 'user_message', content: 'two' }),
      event({ kind: 'user_message', content: 'three' }),
      commit(),
    ];
    const turns = (rows: Item[]) => rows.filter((row) => row.type === 'commit').map((row) => row.turn);
    expect(turns(foldTranscript(events))).toEqual([1, 3]);
    // A page that starts later cannot count the turns before it: its commits are undone one by one.
    expect(turns(foldTranscript(events.slice(3)))).toEqual([undefined]);
  });

  it('words commits, reverts and kept work in the user’s terms: folders by name, never event numbers (#37)', () => {
    seq = 40;
    const file = { path: 'a.txt', sha256: 'a'.repeat(64) };
    const rows = foldTranscript([
      created(),
      event({ kind: 'persistent_commit', dir: 'project', files: [file] }),
      event({ kind: 'changes_reverted', dir: 'project', reverts: [42], files: [file] }),
      event({ kind: 'changes_reverted', dir: 'docs', reverts: [42, 43], turn: 2, files: [file, file] }),
      event({ kind: 'user_snapshot', dir: 'project', reason: 'before reverting turn 2', files: [file] }),
      event({ kind: 'user_snapshot_restored', dir: 'docs', snapshotSeq: 45, files: [file] }),
    ]);
    expect(rows.slice(1).map((row) => row.text)).toEqual([
      'Committed 1 file to the project folder',
      'Reverted an earlier change: 1 file of the project folder put back',
      'Reverted turn 2: 2 files of the folder docs put back',
      'Your work in the project folder was kept before reverting turn 2: 1 file (a.txt)',
      'Restored your kept work: 1 file of the folder docs written back',
    ]);
  });

  it('gives an assistant row the reasoning to show collapsed: thinking, summaries, a note for encrypted blocks', () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'user_message', content: 'go' }),
      event({
        kind: 'assistant_message',
        content: '',
        toolCalls: [call('c1', 'read_file')],
        reasoning: [
          { type: 'thinking', thinking: 'Read a first.', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
      }),
      event({ kind: 'tool_result', toolCallId: 'c1', content: 'alpha' }),
      event({
        kind: 'assistant_message',
        content: 'alpha',
        toolCalls: [],
        reasoning: [{ type: 'reasoning', id: 'rs_1', summary: ['It says alpha.'] }],
      }),
      event({
        kind: 'interrupted',
        content: '',
        toolCalls: [],
        reasoning: [{ type: 'reasoning_text', text: 'Half a tho' }],
      }),
    ];
    const rows = foldTranscript(events).filter((item) => item.type === 'assistant');
    expect(rows.map((row) => row['reasoning'])).toEqual([
      'Read a first.\n\n(1 encrypted thinking block, not shown)',
      'It says alpha.',
      'Half a tho',
    ]);
    // An older log's message without reasoning gets no reasoning field (and no row when it has no text).
    seq = 0;
    const old = [created(), event({ kind: 'assistant_message', content: 'hi', toolCalls: [] })];
    expect(foldTranscript(old).at(-1)).not.toHaveProperty('reasoning');
  });

  it('puts each tool call right after the message that asked for it and updates it in place', () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'user_message', content: 'edit it' }),
      event({
        kind: 'assistant_message',
        content: 'Editing.',
        toolCalls: [call('c1'), call('c2', 'read_file')],
      }),
      event({
        kind: 'approval_request',
        toolCallId: 'c1',
        tool: 'write_file',
        arguments: '{}',
        reason: 'edits ask',
      }),
      event({ kind: 'tool_call_started', toolCallId: 'c2', tool: 'read_file', idempotencyKey: 'k2' }),
      event({ kind: 'tool_result', toolCallId: 'c2', content: 'text', isError: false }),
    ];
    const items = foldTranscript(events);
    expect(items.map((item) => item.type)).toEqual(['session_start', 'user', 'assistant', 'tool', 'tool']);
    const [first, second] = items.filter((item) => item.type === 'tool');
    expect(first?.status).toBe('awaiting_approval');
    expect(second).toMatchObject({ status: 'succeeded', result: { content: 'text' } });
  });

  it('follows a call through its approval, start and failure', () => {
    seq = 0;
    const request = () =>
      event({ kind: 'approval_request', toolCallId: 'c1', tool: 'run_command', arguments: '{}' });
    const events = [
      created(),
      event({ kind: 'assistant_message', content: '', toolCalls: [call('c1', 'run_command')] }),
    ];
    events.push(request());
    const requestSeq = seq;
    events.push(event({ kind: 'approval_granted', requestSeq, scope: 'once' }));
    expect(foldTranscript(events).at(-1)).toMatchObject({ type: 'tool', status: 'requested' });
    events.push(
      event({ kind: 'tool_call_started', toolCallId: 'c1', tool: 'run_command', idempotencyKey: 'k' }),
    );
    expect(foldTranscript(events).at(-1)).toMatchObject({ status: 'running' });
    events.push(
      event({ kind: 'tool_result', toolCallId: 'c1', content: 'boom', isError: true, exitCode: 1 }),
    );
    const last = foldTranscript(events).at(-1);
    expect(last).toMatchObject({ type: 'tool', status: 'failed', decision: { kind: 'approval_granted' } });
    // An empty assistant text with only tool calls adds no empty bubble.
    expect(foldTranscript(events).filter((item) => item.type === 'assistant')).toEqual([]);
  });

  it('keeps a denial visible even after the denied result is recorded', () => {
    seq = 0;
    const events = [created(), event({ kind: 'assistant_message', content: 'x', toolCalls: [call('c1')] })];
    events.push(event({ kind: 'approval_request', toolCallId: 'c1', tool: 'write_file', arguments: '{}' }));
    events.push(event({ kind: 'approval_denied', requestSeq: seq, reason: 'no' }));
    events.push(
      event({ kind: 'tool_result', toolCallId: 'c1', content: 'denied by the user: no', isError: true }),
    );
    expect(foldTranscript(events).at(-1)).toMatchObject({ type: 'tool', status: 'denied' });
  });

  it('marks an interrupted reply and cancels the calls it never ran', () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'user_message', content: 'go' }),
      event({
        kind: 'interrupted',
        content: 'partial te',
        toolCalls: [call('c9')],
        reason: 'stopped by the user',
      }),
    ];
    const items = foldTranscript(events);
    expect(items.at(-2)).toMatchObject({
      type: 'assistant',
      content: 'partial te',
      interrupted: { reason: 'stopped by the user' },
    });
    expect(items.at(-1)).toMatchObject({ type: 'tool', status: 'cancelled' });
  });

  it('shows errors, model switches and compactions as their own rows, with stable keys', () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'error', message: 'the provider refused', code: 'provider' }),
      event({ kind: 'model_changed', provider: 'anthropic', model: 'claude', contextWindow: 200000 }),
      event({ kind: 'compaction', through: 2, fromSeq: 2, summary: 'so far', pinned: 'goal' }),
      event({ kind: 'policy_changed', policy: 'full-auto' }),
    ];
    const items = foldTranscript(events);
    expect(items.map((item) => item.type)).toEqual([
      'session_start',
      'error',
      'model_changed',
      'compaction',
      'note',
    ]);
    expect(items.map((item) => item.key)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    expect(foldTranscript(events)).toEqual(items);
  });

  it('shows each instructions_loaded as a row of its own, the files listed in the event', () => {
    seq = 0;
    const files = [
      { path: 'AGENTS.md', sha256: 'a', size: 40, content: 'Run the tests.' },
      { path: 'pkg/api/CLAUDE.md', sha256: 'b', size: 50_000, content: 'Tabs.', truncated: true },
    ];
    const events = [
      created(),
      event({ kind: 'user_message', content: 'go' }),
      event({ kind: 'instructions_loaded', files }),
      event({ kind: 'assistant_message', content: 'ok', toolCalls: [] }),
      event({ kind: 'instructions_loaded', files: [] }),
    ];
    const items = foldTranscript(events);
    expect(items.map((item) => item.type)).toEqual([
      'session_start',
      'user',
      'instructions',
      'assistant',
      'instructions',
    ]);
    expect(items[2]).toMatchObject({ key: 'e3', event: { files } });
    expect(items[4]).toMatchObject({ key: 'e5', event: { files: [] } });
  });
});

describe('splitSettledMarkdown', () => {
  it('settles blocks ended by a blank line and keeps the one being written as the tail', () => {
    expect(splitSettledMarkdown('one\n\ntwo\n\nthr')).toEqual({ settled: ['one', 'two'], tail: 'thr' });
    expect(splitSettledMarkdown('only')).toEqual({ settled: [], tail: 'only' });
  });

  it('never splits inside a code fence, even at a blank line', () => {
    const text = 'intro\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\nafter';
    const { settled, tail } = splitSettledMarkdown(text);
    expect(settled).toEqual(['intro', '```ts\nconst a = 1;\n\nconst b = 2;\n```']);
    expect(tail).toBe('after');
    const open = splitSettledMarkdown('```\ncode\n\nmore');
    expect(open.settled).toEqual([]);
    expect(open.tail).toBe('```\ncode\n\nmore');
  });

  it('loses no text: settled blocks and tail add up to the input without blank lines', () => {
    const text = 'a\n\n\n\nb\n```\nx\n\n```\n\nc d';
    const { settled, tail } = splitSettledMarkdown(text);
    expect([...settled, tail].join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });
});

describe('foldTranscript: rewinds', () => {
  it('folds the rows a rewind set aside under its marker, a later rewind folding an earlier one', () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'user_message', content: 'first' }),
      event({ kind: 'assistant_message', content: 'one', toolCalls: [] }),
      event({ kind: 'user_message', content: 'second' }),
      event({ kind: 'assistant_message', content: 'two', toolCalls: [] }),
    ];
    events.push(event({ kind: 'rewound', toSeq: 3 }));
    events.push(event({ kind: 'user_message', content: 'third' }));
    const items = foldTranscript(events);
    expect(items.map((item) => item.type)).toEqual(['session_start', 'user', 'assistant', 'rewound', 'user']);
    const marker = items[3] as Item & { setAside: Item[]; toSeq: number };
    expect(marker.toSeq).toBe(3);
    expect(marker.setAside.map((item) => item.content)).toEqual(['second', 'two']);
    expect(items[4]?.content).toBe('third');

    events.push(event({ kind: 'rewound', toSeq: 1 }));
    const again = foldTranscript(events);
    expect(again.map((item) => item.type)).toEqual(['session_start', 'rewound']);
    const outer = again[1] as Item & { setAside: Item[] };
    expect(outer.setAside.map((item) => item.type)).toEqual(['user', 'assistant', 'rewound', 'user']);
  });

  it("keeps a refusal's notice in view when Keel sets the refused turn aside, and marks why", () => {
    seq = 0;
    const events = [
      created(),
      event({ kind: 'user_message', content: 'first' }),
      event({ kind: 'assistant_message', content: 'one', toolCalls: [] }),
      event({ kind: 'user_message', content: 'bad' }),
      event({
        kind: 'assistant_message',
        content: 'Sure',
        toolCalls: [],
        stopReason: 'refusal',
        stopDetails: { type: 'refusal', category: 'cyber', explanation: 'Declined.' },
      }),
    ];
    events.push(event({ kind: 'rewound', toSeq: 3, cause: 'refusal' }));
    const items = foldTranscript(events);
    expect(items.map((item) => item.type)).toEqual(['session_start', 'user', 'assistant', 'rewound', 'stop']);
    const marker = items[3] as Item & { setAside: Item[] };
    expect(marker.cause).toBe('refusal');
    expect(marker.setAside.map((item) => item.type)).toEqual(['user', 'assistant']);
  });
});
