import { Policy, type SessionEvent } from '../../common/events.js';
import { policyChangeProblem } from '../approvals/policy.js';
import type { SessionLog } from '../log/sessionLog.js';
import { loadSessionState } from '../turn/loadState.js';
import { HarnessError } from './errors.js';

/** What a policy change did: the policy before, and the event recorded (none when it was already so). */
export type PolicyChange = { policy: Policy; previous: Policy; events: SessionEvent[] };

/**
 * Issue #37: the one policy change every host records (`keel policy`, the app's header, ACP's session mode):
 * a `policy_changed` event, refused for a session created read-only (its tool set has no write tools) and
 * for a name that is not a policy. The caller holds the session's lease (`log` is open for writing).
 */
export function changePolicy(log: SessionLog, wanted: string): PolicyChange {
  const parsed = Policy.safeParse(wanted);
  if (!parsed.success) {
    throw new HarnessError(
      'invalid_input',
      `unknown policy "${wanted}": use read-only, ask, auto-edit or full-auto`,
    );
  }
  const state = loadSessionState(log);
  const problem = policyChangeProblem(state.toolMode, parsed.data);
  if (problem) throw new HarnessError('invalid_input', problem);
  if (state.policy === parsed.data) return { policy: parsed.data, previous: state.policy, events: [] };
  const appended = log.append(
    { kind: 'policy_changed', policy: parsed.data },
    { expectedLastSeq: log.lastSeq() },
  );
  if (!appended.ok) throw new HarnessError('invalid_state', 'the session changed meanwhile: try again');
  return { policy: parsed.data, previous: state.policy, events: appended.events };
}
