// Rewinds: which events a `rewound` event sets aside. Pure functions over events.
import type { SessionEvent } from '../../common/events.js';

/**
 * The events a projection, the turn state and compaction read: every `rewound` event sets aside the events
 * after its `toSeq` that were still in effect when it was appended (it stays itself, as a fact). Returns the
 * input when the log has no rewind. O(events).
 */
export function visibleEvents<E extends SessionEvent>(events: readonly E[]): readonly E[] {
  if (!events.some((event) => event.kind === 'rewound')) return events;
  const visible: E[] = [];
  for (const event of events) {
    if (event.kind === 'rewound') {
      while (visible.length > 0 && (visible.at(-1) as E).seq > event.toSeq) visible.pop();
    }
    visible.push(event);
  }
  return visible;
}

/** Kinds that belong to a turn's conversation: a rewind point must come after all of its turn's. */
const TURN_KINDS = new Set<string>([
  'assistant_message',
  'interrupted',
  'tool_call_started',
  'tool_result',
  'subagent_started',
  'subagent_result',
]);

/**
 * Why the conversation cannot continue from `toSeq` (undefined when it can): it must be an event in effect,
 * followed by a user message with nothing of a turn (a model reply, a call, a result) in between, so the next
 * request holds no call without its result. The message names the seqs that can be chosen.
 */
export function rewindProblem(events: readonly SessionEvent[], toSeq: number): string | undefined {
  const visible = visibleEvents(events);
  const index = visible.findIndex((event) => event.seq === toSeq);
  const points = rewindPoints(visible);
  const choose =
    points.length === 0
      ? 'this session has no earlier turn to go back to'
      : `choose one of ${points.join(', ')}`;
  if (index < 0) return `event ${toSeq} is not in the conversation now (${choose})`;
  for (const event of visible.slice(index + 1)) {
    if (event.kind === 'user_message') return undefined;
    if (TURN_KINDS.has(event.kind)) {
      return `event ${toSeq} is inside a turn: the conversation can go back to just before a message of yours (${choose})`;
    }
  }
  return `nothing after event ${toSeq} to set aside (${choose})`;
}

/** The seqs the conversation can go back to: the last event before each user message in effect. */
export function rewindPoints(visible: readonly SessionEvent[]): number[] {
  const points: number[] = [];
  visible.forEach((event, index) => {
    const before = visible[index - 1];
    if (event.kind === 'user_message' && before !== undefined) points.push(before.seq);
  });
  return points;
}

/**
 * Where a turn the provider refused is set aside from: the last event before the newest user message in
 * effect (undefined when there is none). Anthropic requires the refused turn to be removed or rephrased
 * before the conversation continues; sent again, it is refused again.
 */
export function refusedTurnPoint(events: readonly SessionEvent[]): number | undefined {
  return rewindPoints(visibleEvents(events)).at(-1);
}
