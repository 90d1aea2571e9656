import type { SessionEvent } from '../../common/events.js';
import { recordDecision, recordRevocation, type ApprovalDecision } from '../approvals/decide.js';
import type { GrantRecord } from '../approvals/grants.js';
import type { PendingApproval } from '../approvals/state.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { ToolRule } from '../../store/toolRules.js';
import { forgetToolGrant, keepToolGrant, realProjectFolder } from '../mcp/toolRules.js';
import { toolKindOf } from '../approvals/decide.js';
import { ruleForDenial, ruleForGrant } from '../approvals/rules.js';
import { addKeelRule, removeKeelRule } from '../setup/rules.js';
import type { KeptPermissionRule } from '../../store/permissionRules.js';
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
  /** The permission rule an "always" choice kept (allow, or deny for a reject, for the project), shown and revocable (keel rules). */
  always?: KeptPermissionRule;
};

/** Records a grant or denial of a pending request (on a writable log) and keeps a `tool` grant as the project's rule. */
export function decideApproval(
  home: string,
  log: SessionLog,
  decision: ApprovalDecision,
  via: string,
  options: { always?: boolean } = {},
): Decided {
  if (options.always && decision.decision === 'grant' && decision.scope === 'once') {
    throw new HarnessError(
      'invalid_input',
      '"always" needs a scope wider than once (session, a path, a prefix)',
    );
  }
  const result = recordDecision(log, decision);
  if (!result.ok) throw new HarnessError(result.code, result.message);
  const rule = keepToolGrant(home, log, result.recorded, result.request, via);
  const decided: Decided = {
    request: result.request,
    recorded: result.recorded,
    stillPending: result.stillPending,
    rule,
  };
  if (options.always && result.recorded.kind === 'approval_granted') {
    const text = ruleForGrant(result.request.tool, toolKindOf(result.request.tool), result.recorded.scope);
    if (text !== undefined) {
      decided.always = addKeelRule(home, {
        project: projectOf(log),
        action: 'allow',
        rule: text,
        via,
        sessionId: log.id,
        grantSeq: result.recorded.seq,
      });
    }
  }
  // "Reject always" (the editor's reject_always): the refusal kept as a deny rule, so the call is refused next time.
  if (options.always && result.recorded.kind === 'approval_denied') {
    const request = result.request;
    decided.always = addKeelRule(home, {
      project: projectOf(log),
      action: 'deny',
      rule: ruleForDenial(request.tool, toolKindOf(request.tool), request.arguments),
      via,
      sessionId: log.id,
    });
  }
  return decided;
}

function projectOf(log: SessionLog): string {
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (created?.kind !== 'session_created') throw new Error(`session ${log.id} has no session_created event`);
  return realProjectFolder(created.projectFolder);
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
  // A grant kept "always" as a Keel rule: the rule goes with it.
  const text = ruleForGrant(result.grant.tool, toolKindOf(result.grant.tool), result.grant.scope);
  if (text !== undefined) {
    try {
      removeKeelRule(home, {
        project: projectOf(log),
        rule: text,
        action: 'allow',
        via,
        fromSession: log.id,
      });
    } catch {
      // No such rule: the grant was for this session only.
    }
  }
  return { recorded: result.recorded, grant: result.grant };
}
