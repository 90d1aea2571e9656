import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import {
  CANCELLED_RESULT,
  INSTRUCTIONS_HEADING,
  projectPayload,
  selectView,
  validatePayload,
} from '../../../../main/core/projection/index.js';
import type { Payload, PayloadMessage } from '../../../../main/core/projection/index.js';
import { validateAnthropicRequest, validateOpenAIRequest } from '../../../support/providerServer.js';
import { logs } from './randomLog.js';

const system = 'You are a careful coding agent.';

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

  it('appending events without a new compaction, instructions or listing keeps every earlier message byte for byte', () => {
    fc.assert(
      fc.property(logs, fc.nat(), (events, cut) => {
        const before = events.slice(0, events.length === 0 ? 0 : cut % (events.length + 1));
        fc.pre(selectView(before).compaction?.seq === selectView(events).compaction?.seq);
        fc.pre(selectView(before).instructions?.seq === selectView(events).instructions?.seq);
        // Issue #30: a new skills/agents listing moves its head message, as new instructions do.
        fc.pre(selectView(before).custom?.seq === selectView(events).custom?.seq);
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
