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

/*
 * Issue #30: a plan (present_plan) is not a tool call to allow: the editor approves it with the policy the
 * session goes on in, or keeps planning (Keel's plan_approved / plan_rejected, as the app's plan card and
 * `keel plan` record them). An editor's permission question has no text field: keeping planning sends the plan
 * back with a fixed sentence for the model.
 */

const PLAN_OPTIONS = {
  ask: { optionId: 'plan_approve_ask', name: 'Approve the plan; ask before each change', kind: 'allow_once' },
  'auto-edit': {
    optionId: 'plan_approve_auto_edit',
    name: 'Approve the plan; edit without asking',
    kind: 'allow_always',
  },
  'full-auto': {
    optionId: 'plan_approve_full_auto',
    name: 'Approve the plan; edit and run commands without asking',
    kind: 'allow_always',
  },
} as const satisfies Record<string, PermissionOption>;
const KEEP_PLANNING: PermissionOption = {
  optionId: 'plan_keep_planning',
  name: 'Keep planning',
  kind: 'reject_once',
};

/** What the model reads when the editor kept planning (no comments can come through a permission question). */
export const KEEP_PLANNING_COMMENTS =
  'The user chose to keep planning in their editor (no comments): ask what to change, or revise the plan.';

/** The options the editor shows for a plan waiting for its decision. */
export function planOptions(): PermissionOption[] {
  return [...Object.values(PLAN_OPTIONS), KEEP_PLANNING];
}

/** The plan decision the editor's answer stands for; undefined when cancelled; an unknown option is refused. */
export function planDecisionOf(
  outcome: RequestPermissionOutcome,
):
  | { decision: 'approve'; policy: keyof typeof PLAN_OPTIONS }
  | { decision: 'reject'; comments: string }
  | undefined {
  if (outcome.outcome !== 'selected') return undefined;
  if (outcome.optionId === KEEP_PLANNING.optionId)
    return { decision: 'reject', comments: KEEP_PLANNING_COMMENTS };
  for (const [policy, option] of Object.entries(PLAN_OPTIONS))
    if (option.optionId === outcome.optionId)
      return { decision: 'approve', policy: policy as keyof typeof PLAN_OPTIONS };
  throw new Error(`the editor chose option "${outcome.optionId}", which Keel did not offer for this plan`);
}
