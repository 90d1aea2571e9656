import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NewEvent, ReasoningPart, SessionEvent, ToolCall } from '../../../../main/common/events.js';
import {
  CANCELLED_RESULT,
  INSTRUCTIONS_HEADING,
  projectPayload,
  selectView,
  validatePayload,
} from '../../../../main/core/projection/index.js';
import type { Payload, PayloadMessage } from '../../../../main/core/projection/index.js';
import { validateAnthropicRequest, validateOpenAIRequest } from '../../../support/providerServer.js';
import { LogBuilder } from './eventFactory.js';

const system = 'You are a careful coding agent.';

/** One step of a random session; `pick` choices are resolved against the log built so far. */
type Step =
  | { t: 'user'; text: string }
  | { t: 'assistant'; text: string; calls: number; reuse: number | null; reasoning: number }
  | { t: 'interrupted'; text: string; calls: number }
  | { t: 'result'; back: number; text: string }
  | { t: 'subagentResult'; back: number }
  | { t: 'orphan' }
  | { t: 'compaction'; fraction: number }
  | { t: 'noise'; which: number }
  | { t: 'instructions'; which: number };

const text = fc.constantFrom('', ' ', 'ok', 'look at src/a.ts', 'done.\n', 'partial ans');
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('user' as const), text }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('assistant' as const),
      text,
      calls: fc.integer({ min: 0, max: 3 }),
      reuse: fc.option(fc.nat({ max: 5 }), { freq: 6 }),
      // 0: none (an older log), else that many reasoning parts, one of each provider's kinds.
      reasoning: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('interrupted' as const),
      text,
      calls: fc.integer({ min: 0, max: 2 }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('result' as const), back: fc.nat({ max: 5 }), text }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('subagentResult' as const), back: fc.nat({ max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('orphan' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('compaction' as const),
      fraction: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('noise' as const), which: fc.nat({ max: 5 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('instructions' as const), which: fc.nat({ max: 2 }) }),
  },
);

/** Interprets steps into a zod-valid log: results target recent calls, so delays and duplicates occur. */
function buildLog(steps: readonly Step[]): SessionEvent[] {
  const log = new LogBuilder();
  const callIds: string[] = [];
  let nextId = 0;
  const newCalls = (count: number, reuse: number | null): ToolCall[] => {
    const made: ToolCall[] = [];
    for (let i = 0; i < count; i++) {
      const reused =
        reuse !== null && i === 0 && callIds.length > 0 ? callIds[reuse % callIds.length] : undefined;
      const id = reused ?? `call_${nextId++}`;
      callIds.push(id);
      made.push({ id, name: i === 2 ? 'spawn_subagent' : 'grep', arguments: `{"n":${i}}` });
    }
    return made;
  };
  const recentCall = (back: number): string | undefined =>
    callIds.length === 0 ? undefined : callIds[callIds.length - 1 - (back % callIds.length)];

  for (const s of steps) {
    switch (s.t) {
      case 'user':
        log.user(s.text);
        break;
      case 'assistant': {
        const calls = newCalls(s.calls, s.reuse);
        const parts: ReasoningPart[] = [
          { type: 'thinking', thinking: `t${log.nextSeq}`, signature: `s${log.nextSeq}` },
          { type: 'reasoning', id: `rs_${log.nextSeq}`, encryptedContent: 'e', summary: ['sum'] },
          { type: 'redacted_thinking', data: 'd', ...(calls.length > 0 ? { afterCalls: 1 } : {}) },
        ];
        const reasoning = parts.slice(0, s.reasoning);
        log.add({
          kind: 'assistant_message',
          content: s.text,
          toolCalls: calls,
          ...(reasoning.length > 0 ? { reasoning } : {}),
        });
        break;
      }
      case 'interrupted':
        log.interrupted(s.text, newCalls(s.calls, null));
        break;
      case 'result': {
        const id = recentCall(s.back);
        if (id !== undefined) log.result(id, `result ${s.text}`);
        break;
      }
      case 'subagentResult': {
        const id = recentCall(s.back);
        if (id !== undefined)
          log.add({ kind: 'subagent_result', childId: 'child', toolCallId: id, content: 'sub' });
        break;
      }
      case 'orphan':
        log.result(`ghost_${nextId++}`, 'nobody asked');
        break;
      case 'compaction': {
        const seq = log.nextSeq;
        if (seq < 2) break;
        const through = 1 + Math.min(seq - 2, Math.floor(s.fraction * (seq - 1)));
        const first = log.events.find((event) => event.kind === 'user_message');
        log.compaction(
          through,
          `summary through ${through}`,
          first?.kind === 'user_message' ? first.content : '',
        );
        break;
      }
      case 'instructions': {
        const versions: Record<string, string>[] = [
          {},
          { 'AGENTS.md': 'run the tests' },
          { 'AGENTS.md': 'v2', 'pkg/CLAUDE.md': 'tabs' },
        ];
        log.instructions(versions[s.which % versions.length] ?? {});
        break;
      }
      case 'noise': {
        const id = recentCall(0) ?? 'none';
        const noise: NewEvent[] = [
          { kind: 'approval_request', toolCallId: id, tool: 'edit_file', arguments: '{}' },
          {
            kind: 'tool_call_started',
            toolCallId: id,
            tool: 'grep',
            idempotencyKey: `ev${log.nextSeq}-grep`,
          },
          {
            kind: 'file_staged',
            path: '/session/uploads/a.txt',
            size: 3,
            sha256: 'h',
            mediaType: 'text/plain',
          },
          { kind: 'error', message: 'rate limited' },
          { kind: 'policy_changed', policy: 'auto-edit' },
          { kind: 'subagent_started', childId: 'child', toolCallId: id, task: 'look', tools: ['grep'] },
        ];
        const fact = noise[s.which % noise.length];
        if (fact !== undefined) log.add(fact);
        break;
      }
    }
  }
  return log.events;
}

const logs = fc.array(step, { minLength: 0, maxLength: 60 }).map(buildLog);

const compactionSeqs = (events: readonly SessionEvent[]): number[] =>
  events.filter((event) => event.kind === 'compaction').map((event) => event.seq);

/** The plainest OpenAI chat-completions body for a payload. */
function toOpenAI(payload: Payload): unknown {
  const messages = payload.messages.map((message) => {
    if (message.role === 'tool')
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    if (message.toolCalls === undefined) return { role: message.role, content: message.content };
    const tool_calls = message.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    return { role: 'assistant', content: message.content, tool_calls };
  });
  return { model: 'm', messages };
}

/** The plainest Anthropic messages body: system apart, tool results as blocks of the next user turn. */
function toAnthropic(payload: Payload): unknown {
  const system = payload.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const messages: { role: 'user' | 'assistant'; content: unknown[] }[] = [];
  for (const message of payload.messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks: unknown[] = [];
    if (message.role === 'tool') {
      blocks.push({ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content });
    } else if (message.content !== '') {
      blocks.push({ type: 'text', text: message.content });
    }
    for (const c of message.toolCalls ?? [])
      blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: {} });
    const last = messages.at(-1);
    // Consecutive tool results (and a user note after them) form one user turn, as the API expects.
    if (last !== undefined && last.role === role && role === 'user') last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  return { model: 'm', max_tokens: 100, system: system.join('\n\n'), messages };
}

const isCancellation = (message: PayloadMessage | undefined): boolean =>
  message?.role === 'tool' && message.content === CANCELLED_RESULT;

describe('projection properties over random logs', () => {
  it('every payload is valid for the providers, with and without each compaction', () => {
    fc.assert(
      fc.property(logs, (events) => {
        expect(validatePayload(projectPayload(events, { system }))).toEqual({ ok: true });
        for (const seq of compactionSeqs(events)) {
          const payload = projectPayload(events, { system, withoutCompaction: seq });
          expect(validatePayload(payload)).toEqual({ ok: true });
        }
      }),
      { numRuns: 400 },
    );
  });

  it('every payload is accepted by the request checks of the scripted OpenAI and Anthropic servers', () => {
    fc.assert(
      fc.property(logs, (events) => {
        const payload = projectPayload(events, { system });
        fc.pre(payload.messages.some((message) => message.role !== 'system'));
        expect(validateOpenAIRequest(toOpenAI(payload))).toBeNull();
        expect(validateAnthropicRequest(toAnthropic(payload))).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('appending events without a new compaction or new instructions keeps every earlier message byte for byte', () => {
    fc.assert(
      fc.property(logs, fc.nat(), (events, cut) => {
        const before = events.slice(0, events.length === 0 ? 0 : cut % (events.length + 1));
        fc.pre(selectView(before).compaction?.seq === selectView(events).compaction?.seq);
        fc.pre(selectView(before).instructions?.seq === selectView(events).instructions?.seq);
        const old = projectPayload(before, { system }).messages;
        const now = projectPayload(events, { system }).messages;
        expect(now.length).toBeGreaterThanOrEqual(old.length);
        old.forEach((message, i) => {
          const current = now[i];
          if (JSON.stringify(current) === JSON.stringify(message)) return;
          // The one allowed change: a call closed as cancelled got its real result since.
          expect(isCancellation(message)).toBe(true);
          expect(current?.role).toBe('tool');
          expect(current?.toolCallId).toBe(message.toolCallId);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('projecting withoutCompaction X equals projecting the log with event X removed', () => {
    const withCompaction = logs.filter((events) => compactionSeqs(events).length > 0);
    fc.assert(
      fc.property(withCompaction, fc.nat(), (events, pick) => {
        const seqs = compactionSeqs(events);
        const seq = seqs[pick % seqs.length] ?? 0;
        const removed = events.filter((event) => event.seq !== seq);
        expect(projectPayload(events, { system, withoutCompaction: seq })).toEqual(
          projectPayload(removed, { system }),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('the generator reaches the interesting cases (so the properties above are not vacuous)', () => {
    const seen = { cancelled: 0, answered: 0, orphanDropped: 0, renamed: 0, compacted: 0, instructed: 0 };
    fc.assert(
      fc.property(logs, (events) => {
        const view = selectView(events);
        const messages = projectPayload(events, { system }).messages;
        if (messages.some(isCancellation)) seen.cancelled++;
        if (messages.some((m) => m.role === 'tool' && !isCancellation(m))) seen.answered++;
        if (messages.some((m) => m.toolCalls?.some((c) => c.id.includes('_ev')))) seen.renamed++;
        if (view.compaction !== undefined) seen.compacted++;
        if (messages[1]?.content.startsWith(INSTRUCTIONS_HEADING)) seen.instructed++;
        const answeredIds = new Set(messages.map((m) => m.toolCallId));
        if (view.tail.some((e) => e.kind === 'tool_result' && !answeredIds.has(e.toolCallId)))
          seen.orphanDropped++;
      }),
      { numRuns: 200 },
    );
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(10);
  });
});
