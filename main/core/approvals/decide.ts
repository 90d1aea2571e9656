import type { ApprovalScope, NewEvent, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { createToolRegistry } from '../../tools/registry.js';
import { checkFetchUrl } from '../../sandbox/fetchTarget.js';
import type { ToolKind } from '../../tools/types.js';
import { checkRevocation, listGrants, type GrantRecord } from './grants.js';
import { checkDecision, HELD_BACK_TOOL, pendingApprovals, type PendingApproval } from './state.js';
import type { ScopeKind } from '../../common/harnessViews.js';
import { PRESENT_PLAN_TOOL } from '../../common/planEvents.js';

/*
 * The front door for moving the approval state machine: the app's approvals.decide / grants.revoke and the
 * CLI's keel approve / deny / revoke call these and only word the outcome. Results are values, never throws
 * for a refused decision.
 */

/** A person's answer to an approval request (the only pending one when `requestSeq` is absent). */
export type ApprovalDecision = { requestSeq?: number } & (
  { decision: 'grant'; scope: ApprovalScope } | { decision: 'deny'; reason?: string }
);

/**
 * Why a decision or a revocation was refused: `invalid_state` (the log says no), `invalid_input` (the scope),
 * `not_found` (the event named is no grant).
 */
export type Refusal = { ok: false; code: 'invalid_state' | 'invalid_input' | 'not_found'; message: string };

/**
 * The kinds of scope a grant can have: once, the whole session, the MCP tool in this project from now on (a
 * rule in the home), a path glob, a command prefix.
 */
export type { ScopeKind };

/** True for a tool an MCP server gave the registry (`mcp__<server>__<tool>`; no built-in is named so). */
export const isMcpTool = (tool: string): boolean => tool.startsWith('mcp__');

const TOOLS = createToolRegistry('write', { subagents: true });

/** What the named tool does (edit, command, read, subagent), from its own description; undefined if unknown. */
export function toolKindOf(tool: string): ToolKind | undefined {
  return TOOLS.get(tool)?.kind;
}

/**
 * The scopes a grant of `request` may take, the one rule the approval panel offers and a decision checks: a
 * call whose outcome is unknown (resumed after a crash) only once; an MCP tool also by tool (this project's
 * later sessions too); a command also by prefix; a file change also by path glob.
 */
export function allowedScopes(request: PendingApproval): ScopeKind[] {
  if (request.unknownOutcome || request.tool === HELD_BACK_TOOL) return ['once'];
  if (isMcpTool(request.tool)) return ['once', 'session', 'tool'];
  // Issue #32: a fetch is approved for its host, never for every host at once.
  if (request.tool === 'web_fetch') return ['once', 'domain'];
  const kind = toolKindOf(request.tool);
  if (kind === 'command') return ['once', 'session', 'prefix'];
  if (kind === 'edit') return ['once', 'session', 'path'];
  return ['once', 'session'];
}

const scopeKindOf = (scope: ApprovalScope): ScopeKind =>
  scope === 'once' || scope === 'session' || scope === 'tool'
    ? scope
    : scope.startsWith('prefix:')
      ? 'prefix'
      : scope.startsWith('domain:')
        ? 'domain'
        : 'path';

/** Pure: the event that answers the request, or why it may not be answered so (see allowedScopes). */
export function decideApproval(
  events: readonly SessionEvent[],
  decision: ApprovalDecision,
): { ok: true; request: PendingApproval; event: NewEvent } | Refusal {
  const checked = checkDecision(events, decision.requestSeq);
  if (!checked.ok) return { ok: false, code: 'invalid_state', message: checked.error };
  const request = checked.request;
  // A plan is answered by plan_approved / plan_rejected (approvals/plan.ts), which choose what follows it.
  if (request.tool === PRESENT_PLAN_TOOL) {
    return {
      ok: false,
      code: 'invalid_input',
      message: `request ${request.seq} is a plan: approve it with keel plan SESSION --approve [--policy P] or send it back with --reject "comments"`,
    };
  }
  if (decision.decision === 'deny') {
    return {
      ok: true,
      request,
      event: {
        kind: 'approval_denied',
        requestSeq: request.seq,
        ...(decision.reason ? { reason: decision.reason } : {}),
      },
    };
  }
  const kind = scopeKindOf(decision.scope);
  if (!allowedScopes(request).includes(kind)) {
    const message = request.unknownOutcome
      ? `request ${request.seq} re-runs a call whose outcome is unknown: only the scope "once" applies`
      : request.tool === HELD_BACK_TOOL
        ? `request ${request.seq} holds back protected files of one commit: only the scope "once" applies`
        : request.tool === 'web_fetch'
          ? `request ${request.seq} is a web_fetch call: grant it once or for its host (domain:HOST)`
          : kind === 'tool'
            ? `the scope "tool" is for MCP tools; request ${request.seq} is a ${request.tool} call (use once or session)`
            : kind === 'prefix'
              ? `a prefix scope is for commands; request ${request.seq} is a ${request.tool} call`
              : kind === 'domain'
                ? `a domain scope is for web_fetch; request ${request.seq} is a ${request.tool} call`
                : `a path scope is for file changes; request ${request.seq} is a ${request.tool} call`;
    return { ok: false, code: 'invalid_input', message };
  }
  if (kind === 'domain') {
    const host = fetchHostOf(request.arguments);
    if (host !== decision.scope.slice('domain:'.length)) {
      return {
        ok: false,
        code: 'invalid_input',
        message: `request ${request.seq} fetches from ${host ?? 'an unreadable URL'}: a domain grant names that host (domain:${host ?? 'HOST'})`,
      };
    }
  }
  return {
    ok: true,
    request,
    event: { kind: 'approval_granted', requestSeq: request.seq, scope: decision.scope },
  };
}

/** The host a web_fetch request's arguments name (as the tool reads its URL), or undefined. */
export function fetchHostOf(argumentsText: string): string | undefined {
  try {
    const url = (JSON.parse(argumentsText) as { url?: unknown }).url;
    if (typeof url !== 'string') return undefined;
    const checked = checkFetchUrl(url);
    return checked.ok ? checked.target.host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records a decision in a log held for writing, against the seq it was decided on (a concurrent write makes
 * it stale). Returns the appended event and whether requests of the same turn still wait.
 */
export function recordDecision(
  log: SessionLog,
  decision: ApprovalDecision,
): { ok: true; request: PendingApproval; recorded: SessionEvent; stillPending: boolean } | Refusal {
  const lastSeq = log.lastSeq();
  const decided = decideApproval(log.read(), decision);
  if (!decided.ok) return decided;
  const appended = log.append(decided.event, { expectedLastSeq: lastSeq });
  if (!appended.ok)
    return { ok: false, code: 'invalid_state', message: 'the session changed meanwhile: try again' };
  const recorded = appended.events[0] as SessionEvent;
  const stillPending = pendingApprovals(log.read({ fromSeq: decided.request.seq })).length > 0;
  return { ok: true, request: decided.request, recorded, stillPending };
}

/**
 * Revokes a grant wider than `once` that is still in effect, with an approval_revoked event, so the next
 * matching call asks again. Returns the event and the grant as it now reads.
 */
export function recordRevocation(
  log: SessionLog,
  grantSeq: number,
  reason?: string,
): { ok: true; recorded: SessionEvent; grant: GrantRecord } | Refusal {
  const lastSeq = log.lastSeq();
  const events = log.read();
  const checked = checkRevocation(events, grantSeq);
  if (!checked.ok) {
    const isGrant = events.some((event) => event.seq === grantSeq && event.kind === 'approval_granted');
    return { ok: false, code: isGrant ? 'invalid_state' : 'not_found', message: checked.error };
  }
  const appended = log.append(
    { kind: 'approval_revoked', grantSeq, ...(reason ? { reason } : {}) },
    { expectedLastSeq: lastSeq },
  );
  if (!appended.ok)
    return { ok: false, code: 'invalid_state', message: 'the session changed meanwhile: try again' };
  const grant = listGrants(log.read()).find((record) => record.seq === grantSeq) ?? checked.grant;
  return { ok: true, recorded: appended.events[0] as SessionEvent, grant };
}
