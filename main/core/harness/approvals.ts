import type { SessionEvent } from '../../common/events.js';
import { recordDecision, recordRevocation, type ApprovalDecision } from '../approvals/decide.js';
import type { GrantRecord } from '../approvals/grants.js';
import type { PendingApproval } from '../approvals/state.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { ToolRule } from '../../store/toolRules.js';
import { forgetToolGrant, keepToolGrant } from '../mcp/toolRules.js';
import { HarnessError } from './errors.js';

/*
 * Deciding and revoking approvals, for every host: the decision goes in the log, and a grant with scope
 * `tool` is also kept as the project's rule in the home (later sessions of the project run the MCP tool
 * without asking); its revocation forgets the rule. A refusal (the log says no, a bad scope, no such grant)
 * is a HarnessError with its code. `via` names the host in the rule's history ('the app', 'keel approve').
 */

/** What deciding recorded: the request, its event, whether others still wait, and the project rule kept. */
export type Decided = {
  request: PendingApproval;
  recorded: SessionEvent;
  stillPending: boolean;
  rule: ToolRule | undefined;
};

/** Records a grant or denial of a pending request (on a writable log) and keeps a `tool` grant as the project's rule. */
export function decideApproval(
  home: string,
  log: SessionLog,
  decision: ApprovalDecision,
  via: string,
): Decided {
  const result = recordDecision(log, decision);
  if (!result.ok) throw new HarnessError(result.code, result.message);
  const rule = keepToolGrant(home, log, result.recorded, result.request, via);
  return { request: result.request, recorded: result.recorded, stillPending: result.stillPending, rule };
}

/** Revokes a grant (on a writable log); a `tool` grant's project rule goes with it. */
export function revokeGrant(
  home: string,
  log: SessionLog,
  grantSeq: number,
  reason: string | undefined,
  via: string,
): { recorded: SessionEvent; grant: GrantRecord } {
  const result = recordRevocation(log, grantSeq, reason);
  if (!result.ok) throw new HarnessError(result.code, result.message);
  forgetToolGrant(home, log, result.grant, via);
  return { recorded: result.recorded, grant: result.grant };
}
