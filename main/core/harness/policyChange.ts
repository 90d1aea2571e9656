import { Policy, type SessionEvent, type ToolMode } from '../../common/events.js';
import { policyChangeProblem } from '../approvals/policy.js';
import type { SessionLog } from '../log/sessionLog.js';
import { loadSessionState } from '../turn/loadState.js';
import { HarnessError } from './errors.js';

/** What a policy change did: the policy before, and the event recorded (none when it was already so). */
export type PolicyChange = { policy: Policy; previous: Policy; events: SessionEvent[] };

/**
 * The policy `wanted` names, checked against the session (`policy` and `toolMode` as folded): refused for a
 * name that is not a policy and for a writing policy in a session created read-only (its tool set has no
 * write tools). Used before a change is recorded or queued for a running turn's next request.
 */
export function checkPolicyChange(state: { policy: Policy; toolMode: ToolMode }, wanted: string): Policy {
  const parsed = Policy.safeParse(wanted);
  if (!parsed.success) {
    throw new HarnessError(
      'invalid_input',
      `unknown policy "${wanted}": use read-only, ask, auto-edit or full-auto`,
    );
  }
  const problem = policyChangeProblem(state.toolMode, parsed.data);
  if (problem) throw new HarnessError('invalid_input', problem);
  return parsed.data;
}

/**
 * Issue #37: the one policy change every host records (`keel policy`, the app's header, ACP's session mode):
 * a `policy_changed` event, as checkPolicyChange allows it. The caller holds the session's lease (`log` is
 * open for writing).
 */
export function changePolicy(log: SessionLog, wanted: string): PolicyChange {
  const state = loadSessionState(log);
  const policy = checkPolicyChange(state, wanted);
  if (state.policy === policy) return { policy, previous: state.policy, events: [] };
  const appended = log.append({ kind: 'policy_changed', policy }, { expectedLastSeq: log.lastSeq() });
  if (!appended.ok) throw new HarnessError('invalid_state', 'the session changed meanwhile: try again');
  return { policy, previous: state.policy, events: appended.events };
}
