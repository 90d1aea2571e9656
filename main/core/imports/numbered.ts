import type { SessionEvent } from '../../common/events.js';
import { seqReferences, UNANSWERED_AT_IMPORT, type MappedEvent } from './mapped.js';

/*
 * A mapped session's events given their seqs, as the writer (harness/historyImport.ts) stores them: numbered from
 * where the log is, their references to earlier events renumbered, and the calls left open closed. Pure.
 */

/**
 * Numbers mapped events from `firstSeq` (placeholder seq `firstPlaceholder` onwards), drops results of calls
 * an earlier import closed, and renumbers their references to earlier events (`seqOf`: placeholder -> seq).
 */
export function numbered(
  events: readonly MappedEvent[],
  firstPlaceholder: number,
  seqOf: Map<number, number>,
  closed: ReadonlySet<string>,
  firstSeq = firstPlaceholder,
): SessionEvent[] {
  const out: SessionEvent[] = [];
  const resolve = (placeholder: number): number => {
    for (let p = placeholder; p >= 1; p--) {
      const seq = seqOf.get(p);
      if (seq !== undefined) return seq;
      if (p === 1) return 1;
    }
    return 1;
  };
  events.forEach((event, index) => {
    const placeholder = firstPlaceholder + index;
    if (event.kind === 'tool_result' && closed.has(event.toolCallId)) return;
    const seq = firstSeq + out.length;
    seqOf.set(placeholder, seq);
    // seq, at and kind first, as the log stores an event's body after them (logRows.ts bodyText: one stringify).
    const { at, kind, ...body } = event;
    const copy = { seq, at, kind, ...body } as Record<string, unknown>;
    for (const field of seqReferences(event)) copy[field] = resolve(copy[field] as number);
    out.push(copy as SessionEvent);
  });
  return out;
}

/**
 * The calls of the newest assistant message left without a result: each gets one saying so (an error), so
 * a turn here never runs a call another tool made (the turn engine would resume them).
 */
export function closersOf(events: readonly SessionEvent[], firstSeq: number): SessionEvent[] {
  let open: { id: string; name: string }[] = [];
  let at = '';
  for (const event of events) {
    at = event.at;
    if (event.kind === 'assistant_message') open = event.toolCalls.map((c) => ({ id: c.id, name: c.name }));
    else if (event.kind === 'interrupted') open = [];
    else if (event.kind === 'tool_result' || event.kind === 'subagent_result') {
      open = open.filter((call) => call.id !== event.toolCallId);
    }
  }
  return open.map((call, index) => ({
    seq: firstSeq + index,
    at,
    kind: 'tool_result',
    toolCallId: call.id,
    tool: call.name,
    content: UNANSWERED_AT_IMPORT,
    isError: true,
  }));
}
