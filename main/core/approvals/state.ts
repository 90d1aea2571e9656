import type { EventOf, SessionEvent } from '../../common/events.js';
import { importMarkOf, isImportedSeq, type ImportMark } from '../log/imported.js';

/**
 * The `tool` of the approval request a commit records for the protected paths it held back (not a model's
 * call: its toolCallId names no call). Granted (once), the next commit writes them; denied, they are dropped.
 */
export const HELD_BACK_TOOL = 'commit_protected';

/** The kinds `pendingApprovals` needs (a request and every decision that answers one): read them by index. */
export const APPROVAL_KINDS = [
  'approval_request',
  'approval_granted',
  'approval_denied',
  'plan_approved',
  'plan_rejected',
] as const;

/** An approval request with no decision yet. */
export type PendingApproval = EventOf<'approval_request'>;

/**
 * Requests that no approval_granted or approval_denied (a plan's: plan_approved, plan_rejected) has answered, oldest first. Pure. A request that came
 * open with an imported file (`mark`, read from `events` when they start with session_created) is not one:
 * its call asks again here (turn/state.ts), so what is approved is what runs.
 */
export function pendingApprovals(
  events: readonly SessionEvent[],
  mark: ImportMark | undefined = markOf(events),
): PendingApproval[] {
  const pending = new Map<number, PendingApproval>();
  for (const event of events) {
    if (event.kind === 'approval_request' && isImportedSeq(mark, event.seq)) continue;
    if (event.kind === 'approval_request') pending.set(event.seq, event);
    else if (
      event.kind === 'approval_granted' ||
      event.kind === 'approval_denied' ||
      event.kind === 'plan_approved' ||
      event.kind === 'plan_rejected'
    )
      pending.delete(event.requestSeq);
  }
  return [...pending.values()];
}

function markOf(events: readonly SessionEvent[]): ImportMark | undefined {
  const first = events[0];
  return first?.kind === 'session_created' ? importMarkOf(first) : undefined;
}

/**
 * Checks that a decision may be recorded: the request exists and is still pending. Returns the request, or
 * an error message a person can act on. Only this path moves the state machine; nothing a model writes can.
 */
export function checkDecision(
  events: readonly SessionEvent[],
  requestSeq: number | undefined,
): { ok: true; request: PendingApproval } | { ok: false; error: string } {
  const pending = pendingApprovals(events);
  if (requestSeq === undefined) {
    if (pending.length === 0) return { ok: false, error: 'there is no pending approval in this session' };
    if (pending.length > 1) {
      return {
        ok: false,
        error: `there are ${pending.length} pending approvals: name one with --request ${pending.map((p) => p.seq).join('|')}`,
      };
    }
    return { ok: true, request: pending[0] as PendingApproval };
  }
  const request = pending.find((p) => p.seq === requestSeq);
  if (request) return { ok: true, request };
  const exists = events.some((e) => e.kind === 'approval_request' && e.seq === requestSeq);
  if (exists && isImportedSeq(markOf(events), requestSeq)) {
    return {
      ok: false,
      error: `approval request ${requestSeq} came with the imported file: its call asks again when the session resumes`,
    };
  }
  return {
    ok: false,
    error: exists
      ? `approval request ${requestSeq} was already decided`
      : `event ${requestSeq} is not an approval request`,
  };
}
