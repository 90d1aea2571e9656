import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeBoundaries, selectRange } from '../../../../main/core/compaction/range.js';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import { projectView, selectView, validatePayload } from '../../../../main/core/projection/index.js';

const AT = '2026-01-01T00:00:00.000Z';

/** Numbers events from seq 1 (session_created first). */
function log(...events: NewEvent[]): SessionEvent[] {
  const created: NewEvent = {
    kind: 'session_created',
    sessionId: 's',
    projectFolder: '/p',
    provider: 'openai',
    model: 'm',
    contextWindow: 4000,
    toolMode: 'write',
    policy: 'ask',
  };
  return [created, ...events].map((event, i) => ({ ...event, seq: i + 1, at: AT }));
}

const user = (content: string): NewEvent => ({ kind: 'user_message', content });
const say = (content: string, ...calls: string[]): NewEvent => ({
  kind: 'assistant_message',
  content,
  toolCalls: calls.map((id) => ({ id, name: 'read_file', arguments: '{"path":"a"}' })),
});
const result = (toolCallId: string, content = 'ok'): NewEvent => ({
  kind: 'tool_result',
  toolCallId,
  tool: 'read_file',
  content,
});
const started = (toolCallId: string): NewEvent => ({
  kind: 'tool_call_started',
  toolCallId,
  tool: 'read_file',
  idempotencyKey: `k-${toolCallId}`,
});

/** One token per character of message text: easy to reason about in expectations. */
const tokensOf = (event: SessionEvent): number =>
  event.kind === 'user_message' || event.kind === 'assistant_message' || event.kind === 'tool_result'
    ? event.content.length + 1
    : 0;

describe('safe boundaries', () => {
  it('never cut between a tool call and its result (nor between the call and tool_call_started)', () => {
    const events = log(
      user('go'),
      say('reading', 'c1'),
      started('c1'),
      result('c1'),
      say('done'),
      user('next'),
    );
    // seqs: 1 created, 2 user, 3 assistant+call, 4 started, 5 result, 6 answer, 7 user
    expect(safeBoundaries(events)).toEqual([1, 2, 5, 6]);
  });

  it('never cut inside an approval: request to decision, and nothing after an unanswered one', () => {
    const answered = log(
      user('go'),
      say('', 'c1'),
      { kind: 'approval_request', toolCallId: 'c1', tool: 'run_command', arguments: '{}' },
      { kind: 'approval_granted', requestSeq: 4, scope: 'once' },
      started('c1'),
      result('c1'),
      say('done'),
    );
    expect(safeBoundaries(answered)).toEqual([1, 2, 7]);
    const pending = log(user('go'), say('ok'), user('now run it'), say('', 'c1'), {
      kind: 'approval_request',
      toolCallId: 'c1',
      tool: 'run_command',
      arguments: '{}',
    });
    expect(safeBoundaries(pending)).toEqual([1, 2, 3, 4]);
  });

  it('treats a call replaced by a later assistant message (never answered) as closed', () => {
    const events = log(
      user('go'),
      say('', 'c1'),
      { kind: 'interrupted', content: 'partial', toolCalls: [] },
      user('try again'),
      say('fine'),
    );
    expect(safeBoundaries(events)).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps the calls of the newest assistant message open until they are answered', () => {
    const events = log(user('go'), say('', 'c1', 'c2'), result('c1'));
    expect(safeBoundaries(events)).toEqual([1, 2]);
  });
});

describe('range selection', () => {
  // seqs: 2 user(11) 3 say(11) 4 user(11) 5 say+call(11) 6 result(11) 7 say(11) 8 user(11) 9 say(11)
  const events = log(
    user('0123456789'),
    say('0123456789'),
    user('0123456789'),
    say('0123456789', 'c1'),
    result('c1', '0123456789'),
    say('0123456789'),
    user('0123456789'),
    say('0123456789'),
  );

  it('keeps the newest events that fit the budget verbatim and replaces everything before them', () => {
    expect(selectRange({ events, currentThrough: 0, keepTokens: 33, tokensOf })).toEqual({
      ok: true,
      fromSeq: 2,
      through: 6,
      keptTokens: 33,
      replacedTokens: 55,
    });
    // 44 tokens would start at the call's result: not a boundary; the earliest that fits is after it.
    expect(selectRange({ events, currentThrough: 0, keepTokens: 50, tokensOf })).toMatchObject({
      through: 6,
    });
    expect(selectRange({ events, currentThrough: 0, keepTokens: 66, tokensOf })).toMatchObject({
      through: 3,
    });
  });

  it('keeps at least the last message when nothing fits the budget', () => {
    expect(selectRange({ events, currentThrough: 0, keepTokens: 0, tokensOf })).toMatchObject({
      ok: true,
      through: 8,
      keptTokens: 11,
    });
  });

  it('always reaches past the compaction in effect, from the start of the session', () => {
    const choice = selectRange({ events, currentThrough: 6, fromSeq: 2, keepTokens: 1000, tokensOf });
    expect(choice).toMatchObject({ ok: true, fromSeq: 2, through: 7 });
  });

  it('gives a reason instead of a range when no safe boundary remains', () => {
    const choice = selectRange({ events, currentThrough: 8, keepTokens: 1000, tokensOf });
    expect(choice.ok).toBe(false);
    expect(choice.ok ? '' : choice.reason).toMatch(
      /no safe boundary after the current compaction's end \(seq 8\)/,
    );
    const onlyOne = selectRange({ events: log(user('go')), currentThrough: 0, keepTokens: 0, tokensOf });
    expect(onlyOne.ok ? '' : onlyOne.reason).toMatch(/no safe boundary leaves a message to keep/);
  });
});

// ---- property tests over random logs ----

type Step =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; calls: number; reuseIds: boolean }
  | { kind: 'answer'; which: number; approve: 'none' | 'granted' | 'denied' | 'pending'; started: boolean }
  | { kind: 'interrupt'; calls: number }
  | { kind: 'noise' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), text: fc.string({ minLength: 1, maxLength: 30 }) }),
  fc.record({
    kind: fc.constant('assistant' as const),
    text: fc.string({ maxLength: 30 }),
    calls: fc.nat(3),
    reuseIds: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('answer' as const),
    which: fc.nat(3),
    approve: fc.constantFrom('none' as const, 'granted' as const, 'denied' as const, 'pending' as const),
    started: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('interrupt' as const), calls: fc.nat(2) }),
  fc.record({ kind: fc.constant('noise' as const) }),
);

/** Builds a plausible log: calls answered (or not) in any order, approvals answered or left pending. */
function buildLog(steps: readonly Step[]): SessionEvent[] {
  const out: NewEvent[] = [];
  let open: string[] = [];
  let counter = 0;
  let pendingApproval = false;
  for (const step of steps) {
    if (pendingApproval) break;
    switch (step.kind) {
      case 'user':
        out.push(user(step.text));
        break;
      case 'assistant': {
        const ids = Array.from({ length: step.calls }, (_, i) =>
          step.reuseIds ? `call_${i}` : `c${counter++}`,
        );
        out.push(say(step.text, ...ids));
        open = [...ids];
        break;
      }
      case 'interrupt': {
        const ids = Array.from({ length: step.calls }, () => `c${counter++}`);
        out.push({
          kind: 'interrupted',
          content: 'partial',
          toolCalls: ids.map((id) => ({ id, name: 'read_file', arguments: '{}' })),
        });
        open = [];
        break;
      }
      case 'answer': {
        const id = open[step.which % Math.max(1, open.length)];
        if (id === undefined) break;
        open = open.filter((candidate) => candidate !== id);
        if (step.approve !== 'none') {
          const requestSeq = out.length + 2;
          out.push({ kind: 'approval_request', toolCallId: id, tool: 'run_command', arguments: '{}' });
          if (step.approve === 'pending') {
            pendingApproval = true;
            break;
          }
          out.push(
            step.approve === 'granted'
              ? { kind: 'approval_granted', requestSeq, scope: 'once' }
              : { kind: 'approval_denied', requestSeq },
          );
        }
        if (step.started) out.push(started(id));
        out.push(result(id, `out ${id}`));
        break;
      }
      case 'noise':
        out.push({ kind: 'error', message: 'transient' });
        break;
    }
  }
  return log(...out);
}

/** Independent reference: pairs (call index, result index) as the projection matches them. */
function callResultPairs(events: readonly SessionEvent[]): [number, number][] {
  const pairs: [number, number][] = [];
  const answered = new Set<string>();
  events.forEach((event, r) => {
    if (event.kind !== 'tool_result') return;
    for (let a = r - 1; a >= 0; a--) {
      const candidate = events[a] as SessionEvent;
      if (candidate.kind !== 'assistant_message' && candidate.kind !== 'interrupted') continue;
      const slots = candidate.toolCalls.filter((call) => call.id === event.toolCallId);
      const key = (i: number) => `${a}:${event.toolCallId}:${i}`;
      const free = slots.findIndex((_, i) => !answered.has(key(i)));
      if (slots.length === 0) continue;
      if (free >= 0) {
        answered.add(key(free));
        pairs.push([a, r]);
      }
      break;
    }
  });
  return pairs;
}

function violations(events: readonly SessionEvent[], cut: number): string[] {
  const found: string[] = [];
  const index = events.findIndex((event) => event.seq === cut);
  for (const [a, r] of callResultPairs(events))
    if (a <= index && index < r) found.push(`call ${a} / result ${r}`);
  events.forEach((event, q) => {
    if (event.kind !== 'approval_request' || q > index) return;
    const d = events.findIndex(
      (other) =>
        (other.kind === 'approval_granted' || other.kind === 'approval_denied') &&
        other.requestSeq === event.seq,
    );
    if (d < 0 || d > index) found.push(`approval ${event.seq}`);
  });
  // A call of the newest assistant message that is still unanswered keeps its message open.
  const lastAssistant = events.reduce(
    (last, event, i) => (event.kind === 'assistant_message' || event.kind === 'interrupted' ? i : last),
    -1,
  );
  const newest = events[lastAssistant];
  if (
    newest &&
    (newest.kind === 'assistant_message' || newest.kind === 'interrupted') &&
    lastAssistant <= index
  ) {
    const answeredHere = callResultPairs(events).filter(([a]) => a === lastAssistant).length;
    if (answeredHere < newest.toolCalls.length) found.push('open call');
  }
  if (index === events.length - 1) found.push('last event');
  return found;
}

describe('range selection on random logs', () => {
  it('a boundary is safe exactly when it splits no call from its result and no approval from its answer', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
        const events = buildLog(steps);
        const safe = new Set(safeBoundaries(events));
        for (const event of events) {
          expect({ seq: event.seq, safe: safe.has(event.seq) }).toEqual({
            seq: event.seq,
            safe: violations(events, event.seq).length === 0,
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a compaction at any chosen range projects to a valid payload that drops no tool result it keeps', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), fc.nat(200), (steps, keep) => {
        const events = buildLog(steps);
        const choice = selectRange({ events, currentThrough: 0, keepTokens: keep, tokensOf });
        if (!choice.ok) return;
        expect(safeBoundaries(events)).toContain(choice.through);
        const compaction: SessionEvent = {
          kind: 'compaction',
          seq: events.length + 1,
          at: AT,
          through: choice.through,
          fromSeq: choice.fromSeq,
          summary: 'S',
          pinned: '',
        };
        const payload = projectView(selectView([...events, compaction]), { system: 'sys' });
        expect(validatePayload(payload)).toEqual({ ok: true });
        const keptResults = events.filter(
          (event) => event.kind === 'tool_result' && event.seq > choice.through,
        );
        const shown = payload.messages.filter(
          (message) => message.role === 'tool' && message.content.startsWith('out '),
        );
        expect(shown.length).toBe(
          keptResults.filter((event) => callResultPairs(events).some(([, r]) => events[r] === event)).length,
        );
        // The earliest boundary whose kept tail fits, else the latest one.
        const kept = events
          .filter((event) => event.seq > choice.through)
          .reduce((sum, e) => sum + tokensOf(e), 0);
        expect(kept).toBe(choice.keptTokens);
        if (kept > keep) {
          const later = safeBoundaries(events).filter((seq) => seq > choice.through);
          const fits = later.some(
            (seq) => events.filter((event) => event.seq > seq).reduce((sum, e) => sum + tokensOf(e), 0) > 0,
          );
          expect(fits).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
