import type { SessionEvent } from '../../common/events.js';
import {
  decidePlanEvent,
  pendingPlans,
  planModeProblem,
  type PendingPlan,
  type PlanDecision,
} from '../approvals/plan.js';
import { APPROVAL_KINDS } from '../approvals/state.js';
import type { SessionLog } from '../log/sessionLog.js';
import { loadSessionState } from '../turn/loadState.js';
import { HarnessError } from './errors.js';
import { withWritableSession } from './lock.js';

/*
 * Issue #30, plan mode, for every host (the app, keel run --plan / keel plan, keel acp): turning plan mode on
 * or off and deciding a plan are events in the log, written here once; hosts only word the outcome.
 */

export type { PendingPlan, PlanDecision };

/**
 * Turns plan mode on or off in a log held for writing; appends plan_mode_changed only when it changes.
 * Refused (HarnessError invalid_state) for a read-only session, or while a plan waits for its decision.
 */
export function applyPlanMode(log: SessionLog, active: boolean): SessionEvent | undefined {
  const state = loadSessionState(log);
  if (state.planMode === active) return undefined;
  const problem = planModeProblem(log.readKinds(APPROVAL_KINDS, { validate: false }), state.toolMode, active);
  if (problem) throw new HarnessError('invalid_state', problem);
  const appended = log.append({ kind: 'plan_mode_changed', active }, { expectedLastSeq: state.lastSeq });
  if (!appended.ok) throw new HarnessError('invalid_state', 'the session changed meanwhile: try again');
  return appended.events[0];
}

/** `applyPlanMode` for a session by id (takes its writer lease). Returns the event, or undefined when unchanged. */
export function setPlanMode(
  home: string,
  sessionId: string,
  active: boolean,
): Promise<SessionEvent | undefined> {
  return withWritableSession(home, sessionId, (log) => Promise.resolve(applyPlanMode(log, active)));
}

/** What deciding a plan recorded: the request (with its plan) and the event. */
export type PlanDecided = { request: PendingPlan['request']; plan: string; recorded: SessionEvent };

/**
 * Records a plan's decision in a log held for writing: plan_approved (plan mode ends, the session continues
 * in the chosen policy) or plan_rejected (the comments are the model's next reading; plan mode stays on).
 * The turn goes on when a host resumes it. Refusals are HarnessErrors (`invalid_state`).
 */
export function decidePlan(log: SessionLog, decision: PlanDecision): PlanDecided {
  const lastSeq = log.lastSeq();
  const events = log.read();
  const state = loadSessionState(log);
  const decided = decidePlanEvent(events, state.toolMode, decision);
  if (!decided.ok) throw new HarnessError('invalid_state', decided.message);
  const appended = log.append(decided.event, { expectedLastSeq: lastSeq });
  if (!appended.ok) throw new HarnessError('invalid_state', 'the session changed meanwhile: try again');
  const plan = pendingPlans(events).find((p) => p.request.seq === decided.request.seq)?.plan ?? '';
  return { request: decided.request, plan, recorded: appended.events[0] as SessionEvent };
}

/** The plans waiting in a session's events (a host shows the newest). */
export { pendingPlans };
