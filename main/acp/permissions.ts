import type { PermissionOption, RequestPermissionOutcome } from '@agentclientprotocol/sdk';
import type { ApprovalScope, SessionEvent } from '../common/events.js';
import type { ScopeKind } from '../core/harness/index.js';

/*
 * Keel's approval gates as ACP permission options. Pure. What the editor offers is only what Keel would take
 * for the request (`allowedScopes`): allow once → scope `once`; allow always → `session` (this session), or for
 * an MCP tool also `tool` (the project's rule, as the app's "always in this project"); reject → a denial;
 * reject always → a denial and the project's deny rule (decideApproval's `always`: the call is refused next
 * time, before any policy). The answer becomes the same decision `keel approve` / `keel deny` and the app record.
 */

type Request = Extract<SessionEvent, { kind: 'approval_request' }>;

/** The decision an option stands for (a decideApproval input without its request seq). */
export type OptionDecision =
  | { decision: 'grant'; scope: ApprovalScope; always?: undefined }
  | { decision: 'deny'; reason: string; always?: true };

const OPTION_IDS = {
  once: 'allow_once',
  session: 'allow_session',
  tool: 'allow_tool_in_project',
  domain: 'allow_host_in_session',
  reject: 'reject',
  rejectAlways: 'reject_always_in_project',
} as const;

/** The options the editor shows for a request, given the scopes Keel allows for it. */
export function permissionOptions(
  request: Request,
  scopes: readonly ScopeKind[],
  host?: string,
): PermissionOption[] {
  const options: PermissionOption[] = [];
  if (scopes.includes('once'))
    options.push({ optionId: OPTION_IDS.once, name: 'Allow once', kind: 'allow_once' });
  if (scopes.includes('session')) {
    options.push({
      optionId: OPTION_IDS.session,
      name: `Always allow ${request.tool} in this session`,
      kind: 'allow_always',
    });
  }
  if (scopes.includes('domain') && host !== undefined) {
    // Issue #32: a web_fetch is allowed for its host, never for every host.
    options.push({
      optionId: OPTION_IDS.domain,
      name: `Always allow ${host} in this session`,
      kind: 'allow_always',
    });
  }
  if (scopes.includes('tool')) {
    options.push({
      optionId: OPTION_IDS.tool,
      name: `Always allow ${request.tool} in this project`,
      kind: 'allow_always',
    });
  }
  options.push({ optionId: OPTION_IDS.reject, name: 'Reject', kind: 'reject_once' });
  options.push({
    optionId: OPTION_IDS.rejectAlways,
    name: `Always reject this ${request.tool} call in this project`,
    kind: 'reject_always',
  });
  return options;
}

/**
 * The decision the editor's answer stands for; undefined when the prompt was cancelled (the request stays
 * pending in the log, to be answered later here, in the app or with `keel approve`). An option Keel did not
 * offer is refused (the client's word is checked like any input).
 */
export function decisionOf(
  outcome: RequestPermissionOutcome,
  scopes: readonly ScopeKind[],
  host?: string,
): OptionDecision | undefined {
  if (outcome.outcome !== 'selected') return undefined;
  switch (outcome.optionId) {
    case OPTION_IDS.once:
      if (scopes.includes('once')) return { decision: 'grant', scope: 'once' };
      break;
    case OPTION_IDS.session:
      if (scopes.includes('session')) return { decision: 'grant', scope: 'session' };
      break;
    case OPTION_IDS.tool:
      if (scopes.includes('tool')) return { decision: 'grant', scope: 'tool' };
      break;
    case OPTION_IDS.domain:
      if (scopes.includes('domain') && host !== undefined)
        return { decision: 'grant', scope: `domain:${host}` };
      break;
    case OPTION_IDS.reject:
      return { decision: 'deny', reason: 'rejected in the editor' };
    case OPTION_IDS.rejectAlways:
      return { decision: 'deny', reason: 'rejected always in the editor', always: true };
  }
  throw new Error(`the editor chose option "${outcome.optionId}", which Keel did not offer for this request`);
}
