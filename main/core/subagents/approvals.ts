import type { EventOf, NewEvent } from '../../common/events.js';

/**
 * A child's approval request as the parent records it: an approval_request for the parent's spawn_subagent
 * call that carries the child's tool, arguments, diff and unknown-outcome flag, so the user sees exactly what
 * is asked and `keel approve PARENT` applies the same checks (prefix scopes only for commands, `once` only
 * for an unknown outcome). Pure.
 */
export function mirrorRequest(
  childId: string,
  toolCallId: string,
  request: EventOf<'approval_request'>,
): Extract<NewEvent, { kind: 'approval_request' }> {
  return {
    kind: 'approval_request',
    toolCallId,
    tool: request.tool,
    arguments: request.arguments,
    reason: `subagent ${childId} asks (its request ${request.seq}): ${request.reason ?? 'approval needed'}`,
    ...(request.diff === undefined ? {} : { diff: request.diff }),
    ...(request.unknownOutcome ? { unknownOutcome: true } : {}),
  };
}

/**
 * The child's pending request a parent's mirrored request stands for: same tool, arguments, diff and
 * unknown-outcome flag. Undefined when it was answered in the child directly (nothing to forward). Pure.
 */
export function findMirrored(
  pending: readonly EventOf<'approval_request'>[],
  mirror: EventOf<'approval_request'>,
): EventOf<'approval_request'> | undefined {
  return pending.find(
    (request) =>
      request.tool === mirror.tool &&
      request.arguments === mirror.arguments &&
      request.diff === mirror.diff &&
      Boolean(request.unknownOutcome) === Boolean(mirror.unknownOutcome),
  );
}

/** The user's decision on the mirror, as the child's decision on its own request. Pure. */
export function forwardedDecision(
  decision: EventOf<'approval_granted'> | EventOf<'approval_denied'>,
  childRequestSeq: number,
): Extract<NewEvent, { kind: 'approval_granted' | 'approval_denied' }> {
  if (decision.kind === 'approval_granted')
    return { kind: 'approval_granted', requestSeq: childRequestSeq, scope: decision.scope };
  return {
    kind: 'approval_denied',
    requestSeq: childRequestSeq,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  };
}
