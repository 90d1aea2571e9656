import type { NewEvent } from '../../common/events.js';
import { findGrant, prefixGrantGap, ruleGrants } from '../approvals/grants.js';
import { evaluatePolicy, planModeRefusal } from '../approvals/policy.js';
import { evaluateRules, type PermissionRule } from '../approvals/rules.js';
import type { ParsedToolCall } from '../../tools/execute.js';
import type { CallPreview, CallSubject, ToolOutcome } from '../../tools/types.js';
import { toolContextFor, type TurnScope } from './scope.js';
import type { CallRecord, SessionState } from './state.js';

/**
 * What the approval gate says about a call not yet decided, before anything is appended: `run` (the
 * policy allows it, or a grant covers it; with the preview it decided on, which running it reuses: one plan
 * per file change), `answer` (it cannot apply, or the policy denies it: this outcome is its result), or `ask`
 * (this approval request is appended and the turn waits).
 */
export type GateDecision =
  | { action: 'run'; preview: Extract<CallPreview, { ok: true }> }
  | { action: 'answer'; outcome: ToolOutcome }
  | { action: 'ask'; request: Extract<NewEvent, { kind: 'approval_request' }> };

/**
 * What the call's PreToolUse hooks said (issue #30): `ask` forces an approval request; `allow` runs the call as
 * an approval would, but never over a deny rule, a policy's refusal or a protected path; `arguments`: the
 * hook's rewritten input, which the request shows (and which runs).
 */
export type HookSaid = { action?: 'allow' | 'ask'; reason?: string; arguments?: string };

/** The call answered with this error, as its result (nothing runs). */
function refused(message: string): GateDecision {
  return { action: 'answer', outcome: { content: JSON.stringify({ error: message }), isError: true } };
}

/** The approval request the turn appends for the call and then waits on (`args`: what it shows, redacted). */
function asking(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  args: string,
  reason: string,
  diff?: string,
): GateDecision {
  return {
    action: 'ask',
    request: {
      kind: 'approval_request',
      toolCallId: record.call.id,
      tool: parsed.tool.name,
      arguments: turn.host.tools.redactor.redact(args),
      reason,
      ...(diff ? { diff } : {}),
    },
  };
}

/** The key a call's side effects carry: derived from the event that requested it, never from the attempt. */
export function keyFor(state: SessionState, record: CallRecord): string {
  if (record.started) return record.started.idempotencyKey;
  if (record.decision?.kind === 'approval_granted' && record.request)
    return `ev${record.request.seq}-${record.call.name}`;
  const sameTool = state.openCalls.filter((r) => r.call.name === record.call.name);
  const suffix = sameTool.length > 1 ? `.${sameTool.indexOf(record) + 1}` : '';
  return `ev${record.assistantSeq}-${record.call.name}${suffix}`;
}

/**
 * Policy, grants and protection for a call not yet decided, from the tool's own preview. Appends nothing,
 * so it can be asked again (the parallel reads ask it of every call before one runs).
 */
export async function decideGate(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  hook?: HookSaid,
): Promise<GateDecision> {
  const { host, state } = turn;
  const planned = planGate(turn, record, parsed);
  if (planned) return planned;
  const ctx = toolContextFor(turn, keyFor(state, record), record, false);
  const preview = await parsed.tool.preview(parsed.args, ctx);
  if (!preview.ok) return { action: 'answer', outcome: preview.outcome };
  const rule = ruleFor(state, parsed, preview.subject);
  const ruleSaid = rule ? `the rule ${rule.action} ${rule.rule} (${rule.source})` : '';
  // A deny rule refuses over every policy, full-auto included, and over every grant.
  if (rule?.action === 'deny') return refused(`refused by ${ruleSaid}`);
  const decision = evaluatePolicy({
    policy: state.policy,
    kind: parsed.tool.kind,
    protectedReason: preview.protectedReason,
    sandboxAvailable: host.sandboxAvailable,
  });
  const hookAsks = hook?.action === 'ask';
  if (decision.action === 'allow' && rule?.action !== 'ask' && !preview.asks && !hookAsks)
    return { action: 'run', preview };
  if (decision.action === 'deny') return refused(decision.reason);
  let reason = decision.action === 'ask' ? decision.reason : (preview.asks ?? '');
  if (rule?.action === 'ask')
    reason = reason ? `${reason}; ${ruleSaid} asks first` : `${ruleSaid} asks first`;
  if (hookAsks) {
    const said = `a PreToolUse hook asks first${hook.reason ? `: ${hook.reason}` : ''}`;
    reason = reason ? `${reason}; ${said}` : said;
  }
  // A hook's allow stands for the user's approval, short of a protected path, an ask rule or what the call itself
  // asks (web_fetch of a host off the allowlist: the network is the person's to open).
  if (hook?.action === 'allow' && !preview.protectedReason && rule?.action !== 'ask' && !preview.asks)
    return { action: 'run', preview };
  if (!preview.protectedReason && rule?.action !== 'ask' && !hookAsks) {
    // An allow rule runs the call as a grant would (a command only as a prefix grant covers it).
    if (rule?.action === 'allow') return { action: 'run', preview };
    // The session's grants and the project's tool rules the log says are in effect (tool_rules_applied).
    const grants = [...state.grants.values(), ...ruleGrants(state.toolRules)];
    const grant = findGrant({ tool: parsed.tool.name, ...preview.subject }, grants);
    if (grant) return { action: 'run', preview };
    // A prefix grant that starts the command but not its flags (find -exec): the person asked sees why.
    const command = preview.subject.command;
    const gap = command === undefined ? undefined : prefixGrantGap(command, grants);
    if (gap !== undefined) reason = `${reason}; ${gap}`;
  }
  if (preview.note) reason = reason ? `${reason}; ${preview.note}` : preview.note;
  return asking(turn, record, parsed, hook?.arguments ?? record.call.arguments, reason, preview.diff);
}

/**
 * Issue #30: plan mode refuses what is not a read, before any preview (an edit's diff is not even planned);
 * present_plan always waits for the user in plan mode (no grant or rule answers it) and is an error outside.
 */
function planGate(turn: TurnScope, record: CallRecord, parsed: ParsedToolCall): GateDecision | undefined {
  const { state } = turn;
  if (parsed.tool.kind === 'plan') {
    if (!state.planMode)
      return refused(
        'plan mode is off: there is no plan to present; go on with the task (or ask in your reply)',
      );
    return asking(
      turn,
      record,
      parsed,
      record.call.arguments,
      'the plan waits for your approval: approve it with a policy, or send it back with comments',
    );
  }
  const refusal = state.planMode ? planModeRefusal(parsed.tool) : undefined;
  return refusal === undefined ? undefined : refused(refusal);
}

/** The permission rule that decides this call (deny, then ask, then allow), from the rules the log holds. */
function ruleFor(
  state: TurnScope['state'],
  parsed: ParsedToolCall,
  subject: CallSubject,
): PermissionRule | undefined {
  const applied = state.permissionRules;
  if (!applied || applied.rules.length === 0) return undefined;
  const args = parsed.args as { url?: unknown } | undefined;
  return evaluateRules(
    applied.rules,
    {
      tool: parsed.tool.name,
      kind: parsed.tool.kind,
      ...subject,
      ...(typeof args?.url === 'string' ? { url: args.url } : {}),
    },
    { projectFolder: applied.project, ...(applied.userHome ? { userHome: applied.userHome } : {}) },
  );
}
