import type { SessionEvent } from '../../common/events.js';

/** What range selection needs; pure data plus a per-event token estimate. */
export type RangeInput = {
  /** The whole log in seq order (originals, never summaries). */
  events: readonly SessionEvent[];
  /** `through` of the compaction in effect (0 when none): the new range must reach past it. */
  currentThrough: number;
  /** First seq the summary covers; defaults to the first event after session_created. */
  fromSeq?: number;
  /** Tokens the events kept verbatim after the boundary may take (keepRecent × window). */
  keepTokens: number;
  /** Estimated tokens an event adds to the payload (0 for events that are not messages). */
  tokensOf: (event: SessionEvent) => number;
};

/** The range a compaction replaces (`fromSeq`..`through`, inclusive), or why there is none. */
export type RangeChoice =
  | {
      ok: true;
      fromSeq: number;
      through: number;
      /** Estimated tokens of the events after `through` (kept verbatim). */
      keptTokens: number;
      /** Estimated tokens of the events the summary replaces. */
      replacedTokens: number;
    }
  | { ok: false; reason: string };

/**
 * Seqs after which the log may be cut, ascending: never between a tool call and its result (so never
 * separating an assistant message from its results), never between an approval request and its
 * decision, and never after an unanswered approval or a call the turn still has to settle. A call with
 * no result is still open unless a later assistant message (or interruption) has replaced it.
 * The last event is never a boundary (something is always kept).
 */
export function safeBoundaries(events: readonly SessionEvent[]): number[] {
  const n = events.length;
  // opened[i] - closed[i] over a prefix = open intervals covering a cut after events[i].
  const delta = new Array<number>(n + 1).fill(0);
  const open = (from: number, to: number) => {
    delta[from] = (delta[from] ?? 0) + 1;
    delta[to] = (delta[to] ?? 0) - 1;
  };
  const requestIndex = new Map<number, number>();
  const decided = new Set<number>();
  // Call id -> indexes of calls with that id still waiting for a result (the latest answers first,
  // as in the projection).
  const waiting = new Map<string, number[]>();
  const callsOf: { index: number; id: string }[] = [];
  let lastAssistantIndex = -1;
  for (let i = 0; i < n; i++) {
    const event = events[i] as SessionEvent;
    switch (event.kind) {
      case 'assistant_message':
      case 'interrupted':
        lastAssistantIndex = i;
        for (const call of event.toolCalls) {
          const list = waiting.get(call.id) ?? [];
          list.push(i);
          waiting.set(call.id, list);
          callsOf.push({ index: i, id: call.id });
        }
        break;
      case 'tool_result':
      case 'subagent_result': {
        const id = event.toolCallId;
        const list = id === undefined ? undefined : waiting.get(id);
        const callIndex = list?.pop();
        if (callIndex !== undefined) open(callIndex, i);
        break;
      }
      case 'approval_request':
        requestIndex.set(event.seq, i);
        break;
      case 'approval_granted':
      case 'approval_denied':
      case 'plan_approved':
      case 'plan_rejected': {
        const from = requestIndex.get(event.requestSeq);
        if (from !== undefined && !decided.has(event.requestSeq)) {
          decided.add(event.requestSeq);
          open(from, i);
        }
        break;
      }
      default:
        break;
    }
  }
  // Calls never answered: open for good if no later assistant message replaced them.
  for (const list of waiting.values()) {
    for (const index of list) if (index >= lastAssistantIndex) open(index, n);
  }
  for (const [seq, index] of requestIndex) if (!decided.has(seq)) open(index, n);

  const safe: number[] = [];
  let covering = 0;
  for (let i = 0; i < n - 1; i++) {
    covering += delta[i] ?? 0;
    if (covering === 0) safe.push((events[i] as SessionEvent).seq);
  }
  return safe;
}

/**
 * Chooses what a compaction replaces: from `fromSeq` through the safe boundary that keeps the most
 * recent events verbatim within `keepTokens` (the earliest such boundary, so as much as fits is kept);
 * when even the last events do not fit, the latest safe boundary. The boundary must lie after the
 * current compaction's `through` and replace at least one message more; otherwise there is nothing
 * to gain and the reason says why.
 */
export function selectRange(input: RangeInput): RangeChoice {
  const { events, currentThrough, keepTokens, tokensOf } = input;
  const n = events.length;
  if (n === 0) return { ok: false, reason: 'the log is empty' };
  const fromSeq =
    input.fromSeq ?? events.find((event) => event.kind !== 'session_created')?.seq ?? events[0]?.seq ?? 1;
  // suffix[i] = tokens of events[i..n-1]
  const suffix = new Array<number>(n + 1).fill(0);
  for (let i = n - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + tokensOf(events[i] as SessionEvent);
  const indexOf = new Map<number, number>();
  events.forEach((event, i) => indexOf.set(event.seq, i));
  const firstNew = events.findIndex((event) => event.seq > currentThrough);
  const tokensAfterCurrent = firstNew < 0 ? 0 : (suffix[firstNew] ?? 0);

  const candidates = safeBoundaries(events).filter((seq) => {
    if (seq <= currentThrough) return false;
    const i = indexOf.get(seq) as number;
    const kept = suffix[i + 1] ?? 0;
    // Keep at least one message, and replace at least one message the current compaction does not.
    return kept > 0 && tokensAfterCurrent - kept > 0;
  });
  if (candidates.length === 0) {
    return {
      ok: false,
      reason:
        currentThrough > 0
          ? `no safe boundary after the current compaction's end (seq ${currentThrough}) leaves a message to keep: the events since are one unfinished exchange`
          : 'no safe boundary leaves a message to keep: the conversation so far is one unfinished exchange',
    };
  }
  const keptAfter = (seq: number) => suffix[(indexOf.get(seq) ?? n) + 1] ?? 0;
  const through =
    candidates.find((seq) => keptAfter(seq) <= keepTokens) ?? candidates[candidates.length - 1] ?? 0;
  const keptTokens = keptAfter(through);
  const startIndex = events.findIndex((event) => event.seq >= fromSeq);
  const replacedTokens = (suffix[startIndex < 0 ? n : startIndex] ?? 0) - keptTokens;
  return { ok: true, fromSeq, through, keptTokens, replacedTokens };
}
