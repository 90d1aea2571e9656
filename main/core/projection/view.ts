import type { EventOf, SessionEvent } from '../../common/events.js';
import type { ProjectionView } from '../../common/payload.js';
import { visibleEvents } from './rewind.js';

/** Options of selectView. */
export type SelectViewOptions = {
  /** Seq of a compaction to ignore, as if it had never been appended (for the compaction inspector). */
  withoutCompaction?: number;
};

/** Thrown by selectView when `withoutCompaction` names a seq that is not a compaction event. */
export class UnknownCompactionError extends Error {
  constructor(readonly seq: number) {
    super(`there is no compaction at seq ${seq}; list the session's compactions and pass one of their seqs`);
    this.name = 'UnknownCompactionError';
  }
}

/**
 * Builds the view a projection needs from a full event list (seq order expected; sorted if not).
 * Compaction in effect: largest `through`, ties to the later seq, skipping `withoutCompaction`.
 * O(all events): the store builds the same view with index lookups instead.
 * Throws UnknownCompactionError if `withoutCompaction` names no compaction event.
 */
export function selectView(events: readonly SessionEvent[], options: SelectViewOptions = {}): ProjectionView {
  // Events a rewind set aside are not part of the conversation (rewind.ts).
  const ordered = visibleEvents(isInSeqOrder(events) ? events : [...events].sort((a, b) => a.seq - b.seq));
  const skip = options.withoutCompaction;
  let skippedFound = false;
  let compaction: EventOf<'compaction'> | undefined;
  let firstUserMessage: EventOf<'user_message'> | undefined;
  let instructions: EventOf<'instructions_loaded'> | undefined;
  let custom: EventOf<'custom_listed'> | undefined;
  for (const event of ordered) {
    if (event.kind === 'user_message' && firstUserMessage === undefined) firstUserMessage = event;
    if (event.kind === 'instructions_loaded') instructions = event;
    if (event.kind === 'custom_listed') custom = event;
    if (event.kind !== 'compaction') continue;
    if (event.seq === skip) {
      skippedFound = true;
      continue;
    }
    // `>=` on through: among equal throughs the later event (a re-run) wins, as events are in seq order.
    if (compaction === undefined || event.through >= compaction.through) compaction = event;
  }
  if (skip !== undefined && !skippedFound) throw new UnknownCompactionError(skip);
  const through = compaction?.through ?? 0;
  const tail = ordered.filter((event) => event.seq > through);
  const view: ProjectionView = { tail };
  if (compaction !== undefined) view.compaction = compaction;
  if (firstUserMessage !== undefined) view.firstUserMessage = firstUserMessage;
  if (instructions !== undefined) view.instructions = instructions;
  if (custom !== undefined) view.custom = custom;
  return view;
}

function isInSeqOrder(events: readonly SessionEvent[]): boolean {
  for (let i = 1; i < events.length; i++) {
    const previous = events[i - 1];
    const current = events[i];
    if (previous !== undefined && current !== undefined && previous.seq >= current.seq) return false;
  }
  return true;
}
