import type { SessionEvent } from '../../common/events.js';

/** How a child's run ended, as far as its answer to the parent is concerned. */
export type SubagentEnding =
  | { kind: 'completed' }
  /** A limit of its budget stopped it; `reason` says which and by how much. */
  | { kind: 'out_of_budget'; reason: string }
  /** Stopped by the user (with its parent, or on its own); `reason` from its `interrupted` event. */
  | { kind: 'interrupted'; reason: string };

/** The text of the call's subagent_result, and whether the answer had to be cut. */
export type ComposedResult = { content: string; truncated: boolean };

/**
 * The newest non-empty text the child produced: its final answer when it completed, else its last words
 * before it stopped (an assistant message's text or an interruption's partial text). Pure.
 */
export function latestAnswer(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event === undefined || event.kind === 'user_message') return undefined;
    if ((event.kind === 'assistant_message' || event.kind === 'interrupted') && event.content.trim() !== '')
      return event.content.trim();
  }
  return undefined;
}

/** Cuts UTF-8 text to at most `maxBytes` bytes, never inside a character; reports whether it cut. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  // A continuation byte (10xxxxxx) would start the cut inside a character: back up to its first byte.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

/**
 * What enters the parent for a child's run: a status line when it did not complete, the answer cut to
 * `maxBytes` (UTF-8), and the handle of the child session, whose log keeps everything else. Pure.
 */
export function composeResult(input: {
  childId: string;
  answer: string | undefined;
  ending: SubagentEnding;
  maxBytes: number;
}): ComposedResult {
  const { childId, ending } = input;
  const lines: string[] = [];
  if (ending.kind === 'out_of_budget')
    lines.push(`[subagent ${ending.reason}; this is what it had when it stopped]`);
  if (ending.kind === 'interrupted')
    lines.push(`[subagent interrupted (${ending.reason}); this is what it had when it stopped]`);
  const answer = truncateUtf8(input.answer ?? '(the subagent gave no answer)', input.maxBytes);
  lines.push(answer.text);
  if (answer.truncated)
    lines.push(`[answer cut at ${input.maxBytes} bytes; the whole answer is in the child's log]`);
  lines.push(`(child session ${childId}; keel show ${childId})`);
  return { content: lines.join('\n'), truncated: answer.truncated };
}
