import { performance } from 'node:perf_hooks';
import { SessionEvent, type NewEvent, type ReasoningPart } from '../../../main/common/events.js';
import type { Payload } from '../../../main/common/payload.js';
import { projectPayload } from '../../../main/core/projection/index.js';
import { toAnthropicRequest, toResponsesRequest } from '../../../main/providers/index.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** A thinking block of about this many characters per agent step (Claude's summaries run 0.5–3 KB). */
const THINKING_CHARS = 1500;
/** Signatures and encrypted content are opaque base64 of roughly this size. */
const OPAQUE_CHARS = 600;

const filler = (seed: number, length: number) => {
  const words = ['read', 'the', 'handler', 'then', 'check', 'tests', 'limit', 'rate', 'config', 'error'];
  let text = '';
  for (let i = 0; text.length < length; i++) text += `${words[(seed + i * 7) % words.length]} `;
  return text.slice(0, length);
};
const opaque = (seed: number) => Buffer.from(filler(seed, (OPAQUE_CHARS * 3) / 4)).toString('base64');

/**
 * A session of `events` events: a user message, then agent steps (thinking, a sentence, one tool call)
 * each answered by a tool result; with `reasoning` false the same log as an older Keel wrote it.
 */
function buildLog(events: number, reasoning: boolean, provider: 'anthropic' | 'openai'): SessionEvent[] {
  const log: SessionEvent[] = [];
  const add = (event: NewEvent) =>
    log.push(SessionEvent.parse({ ...event, seq: log.length + 1, at: '2026-01-01T00:00:00.000Z' }));
  add({
    kind: 'session_created',
    sessionId: 'bench',
    projectFolder: '/p',
    provider,
    model: 'm',
    contextWindow: 1_000_000,
    toolMode: 'write',
    policy: 'auto-edit',
  });
  add({ kind: 'user_message', content: 'Make the rate limiter configurable and cover it with tests.' });
  for (let step = 0; log.length < events; step++) {
    const parts: ReasoningPart[] =
      provider === 'anthropic'
        ? [{ type: 'thinking', thinking: filler(step, THINKING_CHARS), signature: opaque(step) }]
        : [
            {
              type: 'reasoning',
              id: `rs_${step}`,
              encryptedContent: opaque(step),
              summary: [filler(step, 400)],
            },
          ];
    const id = `call_${step}`;
    add({
      kind: 'assistant_message',
      content: `Step ${step}: looking at the next file.`,
      toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/f${step % 50}.ts` }) }],
      ...(reasoning ? { reasoning: parts } : {}),
    });
    add({ kind: 'tool_result', toolCallId: id, content: filler(step + 3, 800) });
  }
  return log;
}

const SYSTEM = 'You are a coding agent.';

/** The request body text a provider would be sent for a payload. */
function wire(provider: 'anthropic' | 'openai', payload: Payload): unknown[] {
  return provider === 'anthropic'
    ? toAnthropicRequest(payload, []).messages
    : toResponsesRequest(payload, []).input;
}

/**
 * True when request N+1 begins with request N's messages (all but N's newest, which Anthropic's breakpoint
 * marks), byte for byte: what prompt caching needs.
 */
function prefixStable(provider: 'anthropic' | 'openai', before: Payload, after: Payload): boolean {
  const previous = wire(provider, before);
  const kept = provider === 'anthropic' ? previous.slice(0, -1) : previous;
  return JSON.stringify(wire(provider, after).slice(0, kept.length)) === JSON.stringify(kept);
}

/**
 * Reasoning kept in the log and replayed: projection + the provider translation of a session of
 * `reasoningEvents` events, with every step's reasoning (signed Anthropic thinking, OpenAI encrypted
 * reasoning items) against the same log without it; and prefix stability over each of the last 50 steps
 * (request N+1 starts with request N's bytes). Target: every request prefix-stable.
 */
export const reasoningBench: Bench = {
  name: 'reasoning',
  title: 'Reasoning replayed: prefix stability and the cost of carrying it',
  run({ sizes, progress }) {
    const started = performance.now();
    const events = sizes.reasoningEvents;
    const metrics = [];
    let stable = 0;
    let checked = 0;
    for (const provider of ['anthropic', 'openai'] as const) {
      const withReasoning = buildLog(events, true, provider);
      const without = buildLog(events, false, provider);
      const time = (log: readonly SessionEvent[]) => {
        const samples: number[] = [];
        for (let run = 0; run < sizes.reasoningRuns; run++) {
          const start = performance.now();
          JSON.stringify(wire(provider, projectPayload(log, { system: SYSTEM })));
          samples.push(performance.now() - start);
        }
        return round(median(samples), 3);
      };
      const bytes = (log: readonly SessionEvent[]) =>
        JSON.stringify(wire(provider, projectPayload(log, { system: SYSTEM }))).length;
      metrics.push(
        makeMetric(`${provider}: project + translate ${events} events, reasoning kept`, 'ms', 'lower', {
          keel: time(withReasoning),
        }),
        makeMetric(`${provider}: project + translate ${events} events, no reasoning`, 'ms', 'lower', {
          keel: time(without),
        }),
        makeMetric(`${provider}: request bytes, reasoning kept`, 'B', 'lower', {
          keel: bytes(withReasoning),
        }),
        makeMetric(`${provider}: request bytes, no reasoning`, 'B', 'lower', { keel: bytes(without) }),
      );
      // Each step appends an assistant message and its result: the request after it against the one before.
      let previous: Payload | undefined;
      for (let end = Math.max(3, withReasoning.length - 100); end <= withReasoning.length; end += 2) {
        const payload = projectPayload(withReasoning.slice(0, end), { system: SYSTEM });
        if (previous) {
          checked++;
          if (prefixStable(provider, previous, payload)) stable++;
        }
        previous = payload;
      }
      progress(`reasoning: ${provider}`);
    }
    metrics.push(
      makeMetric('requests whose prefix is the previous request, byte for byte', 'ratio', 'higher', {
        keel: checked === 0 ? null : round(stable / checked, 4),
      }),
    );
    return {
      name: this.name,
      title: this.title,
      params: { events, runs: sizes.reasoningRuns, thinkingChars: THINKING_CHARS, opaqueChars: OPAQUE_CHARS },
      metrics,
      notes: [
        'In memory: events built and parsed by the real schema, projected (projectPayload) and translated by the providers (toAnthropicRequest, toResponsesRequest); the JSON text is what is sent.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
