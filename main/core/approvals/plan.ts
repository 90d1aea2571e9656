import { PRESENT_PLAN_TOOL, planTextOf, type PlanPolicy } from '../../common/planEvents.js';
import type { NewEvent, SessionEvent, ToolMode } from '../../common/events.js';
import { policyChangeProblem } from './policy.js';
import { checkDecision, pendingApprovals, type PendingApproval } from './state.js';

/*
 * Issue #30, plan mode: the pure rules of a plan's decision and of turning plan mode on or off. A plan is the
 * approval request of a present_plan call; only these decisions (plan_approved, plan_rejected) answer it.
 */

/** A person's answer to the plan waiting (the only one when `requestSeq` is absent). */
export type PlanDecision = { requestSeq?: number } & (
  { decision: 'approve'; policy: PlanPolicy } | { decision: 'reject'; comments: string }
);

/** A plan waiting for its decision: its request and the plan's markdown. */
export type PendingPlan = { request: PendingApproval; plan: string };

/** The plans waiting (present_plan requests without a decision), oldest first. Pure. */
export function pendingPlans(events: readonly SessionEvent[]): PendingPlan[] {
  return pendingApprovals(events)
    .filter((request) => request.tool === PRESENT_PLAN_TOOL)
    .map((request) => ({ request, plan: planTextOf(request.arguments) ?? request.arguments }));
}

/** Pure: the event that answers the plan, or why it may not be answered so. */
export function decidePlanEvent(
  events: readonly SessionEvent[],
  toolMode: ToolMode,
  decision: PlanDecision,
): { ok: true; request: PendingApproval; event: NewEvent } | { ok: false; message: string } {
  let requestSeq = decision.requestSeq;
  if (requestSeq === undefined) {
    const plans = pendingPlans(events);
    if (plans.length === 0)
      return { ok: false, message: 'no plan is waiting for a decision in this session' };
    requestSeq = (plans[0] as PendingPlan).request.seq;
  }
  const checked = checkDecision(events, requestSeq);
  if (!checked.ok) return { ok: false, message: checked.error };
  const { request } = checked;
  if (request.tool !== PRESENT_PLAN_TOOL) {
    return {
      ok: false,
      message: `request ${request.seq} is a ${request.tool} call, not a plan: answer it with keel approve / keel deny`,
    };
  }
  if (decision.decision === 'reject') {
    const comments = decision.comments.trim();
    if (comments === '')
      return { ok: false, message: 'say what to change: sending a plan back needs comments' };
    return { ok: true, request, event: { kind: 'plan_rejected', requestSeq: request.seq, comments } };
  }
  const problem = policyChangeProblem(toolMode, decision.policy);
  if (problem) return { ok: false, message: problem };
  return {
    ok: true,
    request,
    event: { kind: 'plan_approved', requestSeq: request.seq, policy: decision.policy },
  };
}

/**
 * Whether plan mode may be turned `active` (on or off) now: a read-only session cannot implement a plan; a
 * plan waiting is answered by its decision, not by leaving plan mode. Returns why not, or undefined.
 */
export function planModeProblem(
  events: readonly SessionEvent[],
  toolMode: ToolMode,
  active: boolean,
): string | undefined {
  if (active && toolMode === 'read-only')
    return 'this session was created read-only: it cannot implement a plan; start a new session to plan and write';
  if (pendingPlans(events).length > 0)
    return 'a plan is waiting: approve it (choosing a policy) or send it back with comments first';
  return undefined;
}
