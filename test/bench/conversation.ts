import type { EventOf, NewEvent, SessionEvent, ToolCall } from '../../main/common/events.js';
import type { TraceEntry } from '../../main/core/log/sessionLog.js';
import { createRandom } from './harness.js';

/**
 * A deterministic synthetic coding-agent conversation. Every peer persists exactly these steps, so
 * the byte and latency numbers compare like with like. A step is what one LangGraph superstep adds
 * to the `messages` channel: a user message, an assistant message asking for a tool, or a tool result.
 */
export type ConversationStep =
  | { kind: 'user'; content: string }
  | { kind: 'agent'; content: string; toolCall: ToolCall }
  | { kind: 'tool'; toolCallId: string; tool: string; content: string };

/** Message sizes of a conversation: realistic for per-step costs, compact for the huge fixtures. */
export type ConversationShape = {
  userWords: readonly [number, number];
  assistantWords: readonly [number, number];
  toolOutputChars: readonly [number, number];
};

/** Tool outputs of 0.3–4 KB and a few sentences of assistant text, like a coding agent's session. */
export const REALISTIC_SHAPE: ConversationShape = {
  userWords: [8, 40],
  assistantWords: [20, 80],
  toolOutputChars: [300, 4000],
};

/** Smaller messages for the 100k-event and 1M-message fixtures, so they build in seconds. */
export const COMPACT_SHAPE: ConversationShape = {
  userWords: [5, 20],
  assistantWords: [8, 30],
  toolOutputChars: [80, 400],
};

/** A user message opens every block of this many steps (one user step, then agent/tool pairs). */
const BLOCK_STEPS = 41;

const CODE_WORDS = (
  'function error return const test file import export module value string number array object config server client request response handler route limit rate token cache query index ' +
  'table session event stream buffer timeout retry build lint type interface class method promise async await null undefined path folder commit branch merge diff patch log debug'
).split(' ');

/** The rarest word in the fixtures: planted in a handful of messages so a needle search has hits. */
export const NEEDLE_WORD = 'zephyrquokka';

/** A pseudo-English vocabulary, most frequent first: code words, then generated syllable words. */
export const VOCABULARY: readonly string[] = (() => {
  const consonants = 'bcdfghklmnprstvz';
  const vowels = 'aeiou';
  const words = new Set<string>(CODE_WORDS);
  const random = createRandom(7);
  while (words.size < 3000) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let s = 0; s < syllables; s += 1) {
      word += consonants[Math.floor(random() * consonants.length)];
      word += vowels[Math.floor(random() * vowels.length)];
    }
    words.add(word);
  }
  return [...words];
})();

const ZIPF_CUMULATIVE: readonly number[] = (() => {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 0; rank < VOCABULARY.length; rank += 1) {
    total += 1 / (rank + 1);
    cumulative.push(total);
  }
  return cumulative.map((c) => c / total);
})();

/** Draws a vocabulary word with Zipf-like frequencies (rank r has weight 1/r). */
function drawWord(random: () => number): string {
  const u = random();
  let lo = 0;
  let hi = ZIPF_CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ZIPF_CUMULATIVE[mid] ?? 1) < u) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo] ?? 'value';
}

function between(random: () => number, [min, max]: readonly [number, number]): number {
  return min + Math.floor(random() * (max - min + 1));
}

function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i += 1) out.push(drawWord(random));
  return out.join(' ');
}

function toolOutput(random: () => number, chars: number): string {
  const lines: string[] = [];
  let length = 0;
  let lineNo = 1;
  while (length < chars) {
    const line = `src/${drawWord(random)}/${drawWord(random)}.ts:${lineNo}: ${sentence(random, 6)}`;
    lines.push(line);
    length += line.length + 1;
    lineNo += 1 + Math.floor(random() * 20);
  }
  return lines.join('\n').slice(0, chars);
}

const TOOLS = ['grep', 'read_file', 'edit_file', 'run_command', 'list_dir'] as const;

/** Yields `count` steps of a deterministic conversation; the same seed and shape give the same steps. */
export function* generateConversation(
  count: number,
  shape: ConversationShape,
  seed = 42,
): Generator<ConversationStep> {
  const random = createRandom(seed);
  let pending: { id: string; tool: string } | undefined;
  for (let i = 0; i < count; i += 1) {
    if (i % BLOCK_STEPS === 0) {
      yield { kind: 'user', content: sentence(random, between(random, shape.userWords)) };
    } else if (pending === undefined) {
      const tool = TOOLS[Math.floor(random() * TOOLS.length)] ?? 'grep';
      const id = `call_${i}`;
      pending = { id, tool };
      const args = JSON.stringify({ path: `src/${drawWord(random)}.ts`, pattern: drawWord(random) });
      yield {
        kind: 'agent',
        content: sentence(random, between(random, shape.assistantWords)),
        toolCall: { id, name: tool, arguments: args },
      };
    } else {
      const { id, tool } = pending;
      pending = undefined;
      yield {
        kind: 'tool',
        toolCallId: id,
        tool,
        content: toolOutput(random, between(random, shape.toolOutputChars)),
      };
    }
  }
}

/**
 * The Keel events one step appends, in order. A tool step is two events because the turn engine
 * appends tool_call_started before executing and tool_result after (two durable appends).
 */
export function eventsOfStep(step: ConversationStep): NewEvent[] {
  switch (step.kind) {
    case 'user':
      return [{ kind: 'user_message', content: step.content }];
    case 'agent':
      return [
        {
          kind: 'assistant_message',
          content: step.content,
          toolCalls: [step.toolCall],
          usage: { inputTokens: 1200, outputTokens: 80 },
          stopReason: 'tool_use',
        },
      ];
    case 'tool':
      return [
        {
          kind: 'tool_call_started',
          toolCallId: step.toolCallId,
          tool: step.tool,
          idempotencyKey: `ev-${step.toolCallId}-${step.tool}`,
        },
        {
          kind: 'tool_result',
          toolCallId: step.toolCallId,
          tool: step.tool,
          content: step.content,
          exitCode: 0,
        },
      ];
  }
}

/** The session_created fields every bench session pins (no key, a scripted provider). */
export function benchSessionInit(
  sessionId: string,
  title: string,
): Omit<EventOf<'session_created'>, 'seq' | 'at'> {
  return {
    kind: 'session_created',
    sessionId,
    title,
    projectFolder: '/work/project',
    provider: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:8080/v1',
    model: 'bench-model',
    contextWindow: 200_000,
    toolMode: 'write',
    policy: 'ask',
  };
}

/** A fixed timestamp, so fixtures are byte-identical from run to run. */
export const FIXED_AT = '2025-01-01T00:00:00.000Z';

/** Gives events consecutive seqs starting at `firstSeq` (the shape an export or import carries). */
export function stampEvents(events: readonly NewEvent[], firstSeq: number, at = FIXED_AT): SessionEvent[] {
  return events.map((event, i) => ({ ...event, seq: firstSeq + i, at }));
}

/**
 * A whole session as stamped events: session_created, then the steps' events until `eventCount`
 * events exist. With `compactionNearEnd`, a compaction replacing everything but the last
 * `tailEvents` events is appended, followed by that many more events (so the view has a tail).
 */
export function buildSessionEvents(options: {
  sessionId: string;
  eventCount: number;
  shape: ConversationShape;
  seed?: number;
  compactionTail?: number;
}): SessionEvent[] {
  const { sessionId, eventCount, shape, compactionTail } = options;
  const plain: NewEvent[] = [benchSessionInit(sessionId, `bench session ${sessionId}`)];
  const bodyTarget = compactionTail === undefined ? eventCount : eventCount - 1;
  for (const step of generateConversation(Number.MAX_SAFE_INTEGER, shape, options.seed)) {
    for (const event of eventsOfStep(step)) {
      if (plain.length >= bodyTarget) break;
      plain.push(event);
    }
    if (plain.length >= bodyTarget) break;
  }
  if (compactionTail === undefined) return stampEvents(plain, 1);
  return insertCompaction(stampEvents(plain, 1), compactionTail);
}

/** What differs between the coding sessions the benches import (see `buildCodingSession`). */
export type CodingSessionShape = {
  /** The tool_call_started idempotency key of block `block`, whose event has seq `seq`. */
  idempotencyKey: (block: number, seq: number) => string;
  /** What read_file returns in every block. */
  toolOutput: string;
  /** The assistant's closing answer of block `block`. */
  answer: (block: number) => string;
  /**
   * true: stop after the block that reaches `eventCount` (the session ends on an answer, with up to four
   * events more than asked, as a turn bench wants before its next turn); false: exactly `eventCount` events.
   */
  wholeBlocks: boolean;
};

/**
 * A small coding session as the turn and history benches import it: session_created on `projectFolder`,
 * then blocks of five events (the user's prompt, an assistant read_file call, the call's start and result,
 * the answer), all at one fixed time. Deliberately tiny and regular, unlike `buildSessionEvents`: the
 * benches that use it measure the harness and the history store, not message sizes, and their published
 * figures were taken on exactly these events.
 */
export function buildCodingSession(
  options: { sessionId: string; projectFolder: string; eventCount: number } & CodingSessionShape,
): SessionEvent[] {
  const at = '2026-01-01T00:00:00.000Z';
  const events: SessionEvent[] = [
    {
      seq: 1,
      at,
      kind: 'session_created',
      sessionId: options.sessionId,
      projectFolder: options.projectFolder,
      provider: 'openai-compatible',
      model: 'bench',
      baseUrl: 'http://127.0.0.1:9/v1',
      contextWindow: 10_000_000,
      toolMode: 'write',
      policy: 'full-auto',
    },
  ];
  const push = (event: NewEvent) => events.push({ ...event, seq: events.length + 1, at });
  for (let block = 0; events.length < options.eventCount; block++) {
    const call = `c${block}`;
    push({ kind: 'user_message', content: `step ${block}: tighten the rate limiter in src/limit.go` });
    push({
      kind: 'assistant_message',
      content: 'Reading the limiter.',
      toolCalls: [{ id: call, name: 'read_file', arguments: '{"path":"src/limit.go"}' }],
    });
    push({
      kind: 'tool_call_started',
      toolCallId: call,
      tool: 'read_file',
      idempotencyKey: options.idempotencyKey(block, events.length + 1),
    });
    push({ kind: 'tool_result', toolCallId: call, tool: 'read_file', content: options.toolOutput });
    push({ kind: 'assistant_message', content: options.answer(block), toolCalls: [] });
  }
  return options.wholeBlocks ? events : events.slice(0, options.eventCount);
}

/**
 * A chat session for the search index: session_created, then `messages` alternating user and
 * assistant messages (every one is indexed text). `needleEvery` plants NEEDLE_WORD in every n-th
 * message counted across sessions from `messageOffset`.
 */
export function buildChatSession(options: {
  sessionId: string;
  messages: number;
  shape: ConversationShape;
  seed: number;
  messageOffset: number;
  needleEvery?: number;
  at?: string;
}): SessionEvent[] {
  const random = createRandom(options.seed);
  const events: NewEvent[] = [benchSessionInit(options.sessionId, `chat ${options.sessionId}`)];
  for (let i = 0; i < options.messages; i += 1) {
    const user = i % 2 === 0;
    let content = sentence(
      random,
      between(random, user ? options.shape.userWords : options.shape.assistantWords),
    );
    if (options.needleEvery !== undefined && (options.messageOffset + i + 1) % options.needleEvery === 0) {
      content += ` ${NEEDLE_WORD}`;
    }
    events.push(
      user
        ? { kind: 'user_message', content }
        : { kind: 'assistant_message', content, toolCalls: [], stopReason: 'end_turn' },
    );
  }
  return stampEvents(events, 1, options.at);
}

/**
 * Inserts a compaction replacing every event but the last `tail` ones, placed before that tail so
 * seqs stay dense. Its `through` lands on a step boundary, so no tool result is cut from its call.
 */
function insertCompaction(events: SessionEvent[], tail: number): SessionEvent[] {
  let cut = Math.max(2, events.length - tail);
  while (
    cut < events.length &&
    events[cut]?.kind !== 'user_message' &&
    events[cut]?.kind !== 'assistant_message'
  )
    cut += 1;
  const head = events.slice(0, cut);
  const rest = events.slice(cut);
  const through = head[head.length - 1]?.seq ?? 1;
  const firstUser = head.find((e) => e.kind === 'user_message');
  const compaction: EventOf<'compaction'> = {
    kind: 'compaction',
    seq: through + 1,
    at: FIXED_AT,
    through,
    fromSeq: 1,
    summary: `The user asked for rate limiting; ${through} events of grep, edit and test runs so far. Open work: wire the limiter into the router and rerun the tests.`,
    pinned: firstUser?.kind === 'user_message' ? firstUser.content : '',
  };
  return [...head, compaction, ...rest.map((e, i) => ({ ...e, seq: through + 2 + i }))];
}

/**
 * The trace a turn's steps leave, as the turn engine records it (main/core/turn/request.ts: per model
 * request its projection, environment, time to first token, stream and usage), written at the turn's end.
 */
export function traceOfStep(step: ConversationStep, turn: number, at: string): TraceEntry[] {
  if (step.kind !== 'agent') return [];
  return [
    { turn, stage: 'projection', startedAt: at, durationMs: 1, detail: { messages: 40 } },
    { turn, stage: 'environment', startedAt: at, durationMs: 0 },
    { turn, stage: 'time_to_first_token', startedAt: at, durationMs: 640 },
    { turn, stage: 'stream', startedAt: at, durationMs: 1900 },
    {
      turn,
      stage: 'usage',
      startedAt: at,
      durationMs: 2540,
      detail: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 1100 },
    },
  ];
}
