import fc from 'fast-check';
import type { NewEvent, ReasoningPart, SessionEvent, ToolCall } from '../../../../main/common/events.js';
import { HELD_BACK_TOOL } from '../../../../main/core/approvals/state.js';
import { LogBuilder } from './eventFactory.js';

// Random, zod-valid session logs for the projection's property tests.

/** One step of a random session; `pick` choices are resolved against the log built so far. */
export type Step =
  | { t: 'user'; text: string }
  | { t: 'assistant'; text: string; calls: number; reuse: number | null; reasoning: number }
  | { t: 'interrupted'; text: string; calls: number }
  | { t: 'result'; back: number; text: string }
  | { t: 'subagentResult'; back: number }
  | { t: 'orphan' }
  | { t: 'compaction'; fraction: number }
  | { t: 'noise'; which: number }
  | { t: 'instructions'; which: number }
  /** Issue #30: a custom_listed (skills and custom agents), one of three listings. */
  | { t: 'custom'; which: number }
  /** Only in `foldLogs`: a rewind to an earlier event, a held-back commit's request and its denial. */
  | { t: 'rewind'; fraction: number }
  | { t: 'held'; deny: boolean };

const text = fc.constantFrom('', ' ', 'ok', 'look at src/a.ts', 'done.\n', 'partial ans');
export const step: fc.Arbitrary<Step> = fc.oneof(
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
      // The fixed fractions repeat a `through`, so ties between compactions occur.
      fraction: fc.oneof(fc.constantFrom(0, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('noise' as const), which: fc.nat({ max: 5 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('instructions' as const), which: fc.nat({ max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('custom' as const), which: fc.nat({ max: 2 }) }) },
);

/** Interprets steps into a zod-valid log: results target recent calls, so delays and duplicates occur. */
export function buildLog(steps: readonly Step[], first?: NewEvent): SessionEvent[] {
  const log = new LogBuilder();
  if (first !== undefined) log.add(first);
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
        // Every other one holds an image (an MCP result's): the payload names it, the turn attaches its bytes.
        const images =
          s.back % 2 === 1
            ? [{ handle: `img/${log.nextSeq}.png`, mimeType: 'image/png' as const, bytes: 3 }]
            : [];
        if (id !== undefined)
          log.add({
            kind: 'tool_result',
            toolCallId: id,
            content: `result ${s.text}`,
            ...(images.length ? { images } : {}),
          });
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
      case 'custom':
        log.custom(s.which % 3);
        break;
      case 'rewind': {
        const seq = log.nextSeq;
        if (seq < 3) break;
        log.add({ kind: 'rewound', toSeq: 1 + Math.floor(s.fraction * (seq - 2)) });
        break;
      }
      case 'held': {
        const request = log.add({
          kind: 'approval_request',
          toolCallId: `held_${log.nextSeq}`,
          tool: HELD_BACK_TOOL,
          arguments: '{}',
          reason: 'protected files changed',
        });
        if (s.deny) log.add({ kind: 'approval_denied', requestSeq: request.seq, reason: 'not now' });
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
          {
            kind: 'background_exited',
            handle: 'bg-1',
            reason: 'keel_ended',
            command: 'npm run dev',
            outsideCall: true,
          },
          { kind: 'background_exited', handle: 'bg-2', reason: 'stopped', toolCallId: id },
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

export const logs = fc.array(step, { minLength: 0, maxLength: 60 }).map(buildLog);

/** Steps of `logs` plus rewinds and held-back commits (which break prefix stability, so only the fold tests). */
export const foldStep: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: step },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('rewind' as const),
      fraction: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('held' as const), deny: fc.boolean() }) },
);

/** Random logs with rewinds, held-back commits and reasoning parts. */
export const foldLogs = fc.array(foldStep, { minLength: 0, maxLength: 80 }).map(buildLog);
