// Which recorded changes a revert names: a turn's, or one change event. Pure functions over events.
import type { ChangedFile, EventOf, SessionEvent } from '../../common/events.js';
import { visibleEvents } from '../projection/rewind.js';

/**
 * What to revert: every change a turn made (its n-th user message up to the next), one change event, or every
 * commit in effect after a seq (a rewind with its files).
 */
export type RevertTarget = { turn: number } | { seq: number } | { after: number };

/** A recorded change of one folder: a persistent_commit, or a changes_reverted (reverting it restores). */
export type ChangeEvent = EventOf<'persistent_commit'> | EventOf<'changes_reverted'>;

/** A revert target that names nothing revertible; the message says what to ask for instead. */
export class RevertTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevertTargetError';
  }
}

/** True for the kinds a revert can undo. */
export function isChangeEvent(event: SessionEvent): event is ChangeEvent {
  return event.kind === 'persistent_commit' || event.kind === 'changes_reverted';
}

/** True when the file's change is a change (not found already written) and both its sides' bytes were kept. */
export function isRevertible(file: ChangedFile): boolean {
  if (file.preHash === file.postHash) return true;
  return (
    (file.preHash === null || file.preMode !== undefined) &&
    (file.postHash === null || file.postMode !== undefined)
  );
}

/**
 * The change events `target` names, oldest first. A turn's are the persistent_commit events from its user
 * message to the next one (a commit of its leftovers at the next turn's start included); reverts recorded
 * there are not the turn's own changes and are left out. Throws RevertTargetError when the turn or event
 * does not exist or changed nothing.
 */
export function changesOf(events: readonly SessionEvent[], target: RevertTarget): ChangeEvent[] {
  if ('seq' in target) {
    const event = events.find((e) => e.seq === target.seq);
    if (event === undefined) throw new RevertTargetError(`there is no event ${target.seq} in this session`);
    if (!isChangeEvent(event)) {
      throw new RevertTargetError(
        `event ${target.seq} is a ${event.kind}, not a change of a folder (persistent_commit or changes_reverted)`,
      );
    }
    return [event];
  }
  if ('after' in target) {
    return visibleEvents(events).filter(
      (e): e is EventOf<'persistent_commit'> =>
        e.kind === 'persistent_commit' && e.seq > target.after && e.files.length > 0,
    );
  }
  const starts = events.filter((e) => e.kind === 'user_message').map((e) => e.seq);
  const from = starts[target.turn - 1];
  if (from === undefined) {
    throw new RevertTargetError(`there is no turn ${target.turn}: this session has ${starts.length} turns`);
  }
  const to = starts[target.turn] ?? Number.POSITIVE_INFINITY;
  const found = events.filter(
    (e): e is EventOf<'persistent_commit'> =>
      e.kind === 'persistent_commit' && e.seq > from && e.seq < to && e.files.length > 0,
  );
  if (found.length === 0)
    throw new RevertTargetError(
      `turn ${target.turn} changed no file of the project: there is nothing to revert`,
    );
  return found;
}
