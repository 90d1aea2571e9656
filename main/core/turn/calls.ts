import type { EventOf } from '../../common/events.js';
import { planModeRefusal } from '../approvals/policy.js';
import { remainingOf } from './budget.js';
import { parseToolCall, runParsed, type ParsedToolCall } from '../../tools/execute.js';
import { errorOutcome } from '../../tools/outcome.js';
import type { CallPreview, ExpectedImages } from '../../tools/types.js';
import { crashPoint } from '../crash.js';
import { decideGate, keyFor, type HookSaid } from './gate.js';
import {
  approvalNotification,
  endTurnByHook,
  postToolUse,
  preToolUse,
  rewrittenArguments,
} from './hookSteps.js';
import { parallelRun, settleParallelRun } from './parallel.js';
import type { TurnOutcome } from './host.js';
import { settleUnknownOutcome } from './resume.js';
import { appendToolResult, awaitingApproval, stopTurn, toolContextFor, type TurnScope } from './scope.js';
import { unansweredCalls, type CallRecord } from './state.js';

/**
 * Resolves every unanswered call of the newest assistant message, in order: each passes the mode's registry,
 * the policy and grants, then the approval gate, and runs in the box. Consecutive reads the gate lets run
 * (parallel.ts) run together, their results appended in call order. Returns an outcome when the turn must
 * stop (an approval is pending, the user stopped it, a subagent failed), else undefined.
 */
export async function settleCalls(turn: TurnScope): Promise<TurnOutcome | undefined> {
  const records = unansweredCalls(turn.state);
  for (let index = 0; index < records.length;) {
    if (turn.signal.aborted) return stopTurn(turn);
    const run = await parallelRun(turn, records.slice(index));
    if (run.length > 1) {
      const outcome = await settleParallelRun(turn, run);
      if (outcome) return outcome;
      index += run.length;
      continue;
    }
    const outcome = await settleCall(turn, records[index] as CallRecord);
    if (outcome) return outcome;
    index++;
  }
  return undefined;
}

/** A preview of a call that can apply. */
type OkPreview = Extract<CallPreview, { ok: true }>;

async function settleCall(turn: TurnScope, record: CallRecord): Promise<TurnOutcome | undefined> {
  const { host } = turn;
  let parsed = parseToolCall(host.registry, record.call);
  // Issue #30: the PreToolUse hooks decide first (read back from the log once they ran: never asked twice).
  let hook: HookSaid | undefined;
  if (parsed.ok && parsed.call.tool.kind !== 'subagent') {
    // A started call ran on its hooks' rewritten input: only that is taken back (its decision was acted on).
    const pre = await preToolUse(turn, record, parsed.call);
    if (pre) crashPoint('after_hook_decision');
    // continue: false wins over any decision: this call and the message's others do not run, the turn ends.
    if (pre?.stop && !record.started) return endTurnByHook(turn, 'PreToolUse', pre);
    if (pre?.decision === 'deny' && !record.started) {
      appendToolResult(turn, record, {
        content: JSON.stringify({
          error: `refused by a PreToolUse hook: ${pre.reason ?? 'no reason given'}`,
        }),
        isError: true,
      });
      return undefined;
    }
    if (pre?.updatedInput) {
      const args = rewrittenArguments(parsed.call.args, pre.updatedInput);
      parsed = parseToolCall(host.registry, { ...record.call, arguments: args });
      hook = { arguments: args };
    }
    if (pre?.decision === 'allow' || pre?.decision === 'ask')
      hook = { ...hook, action: pre.decision, reason: pre.reason ?? '' };
  }
  if (!parsed.ok) {
    appendToolResult(turn, record, {
      ...parsed.outcome,
      content: host.tools.redactor.redact(parsed.outcome.content),
    });
    return undefined;
  }
  // Plan mode refuses a subagent before it starts: its child would write under the session's policy.
  const planRefusal = turn.state.planMode ? planModeRefusal(parsed.call.tool) : undefined;
  if (parsed.call.tool.kind === 'subagent' && planRefusal !== undefined && !record.started) {
    appendToolResult(turn, record, errorOutcome(planRefusal));
    return undefined;
  }
  // Before the approval checks: a subagent call's request and decision are the child's, mirrored here.
  if (parsed.call.tool.kind === 'subagent') {
    // The child's tools work in this session's folder: they change it like this turn's own.
    await turn.beforeChanges();
    return settleSubagent(turn, record, parsed.call);
  }
  if (record.request && !record.decision) return awaitingApproval(turn.state);
  // Issue #30: a plan's decision is its present_plan call's result; the fold already switched the policy.
  if (record.decision?.kind === 'plan_approved' || record.decision?.kind === 'plan_rejected') {
    appendToolResult(turn, record, { content: planAnswer(record.decision), isError: false });
    return undefined;
  }
  if (record.decision?.kind === 'approval_denied') {
    const reason = record.decision.reason ? `: ${record.decision.reason}` : '';
    appendToolResult(turn, record, {
      content: JSON.stringify({ error: `denied by the user${reason}` }),
      isError: true,
    });
    return undefined;
  }
  const granted = record.decision?.kind === 'approval_granted';
  if (record.started) {
    if (parsed.call.tool.kind !== 'read') await turn.beforeChanges();
    return settleUnknownOutcome(turn, record, parsed.call, granted);
  }
  if (!granted) {
    const gated = await gate(turn, record, parsed.call, hook);
    if (gated.stop) return gated.stop;
    if (gated.preview === undefined) return undefined;
    return execute(turn, record, parsed.call, false, gated.preview);
  }
  crashPoint('after_approval_before_execute');
  return execute(turn, record, parsed.call, true);
}

/** What the model reads as present_plan's result once the user decided (the comments verbatim). */
function planAnswer(decision: EventOf<'plan_approved'> | EventOf<'plan_rejected'>): string {
  if (decision.kind === 'plan_approved') {
    return (
      `The user approved your plan. Plan mode is off and the session's policy is now ${decision.policy}: ` +
      'implement the plan now, step by step (keep the todo list current).'
    );
  }
  return (
    'The user sent your plan back; you are still in plan mode. Revise the plan with their comments and ' +
    `present it again with present_plan.\n\nThe user's comments:\n${decision.comments}`
  );
}

/**
 * A spawn_subagent call: the runner starts (or resumes) the child session and appends what answers the call;
 * the engine only ends the turn the way the runner reports (approval pending, stopped, failed).
 */
async function settleSubagent(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
): Promise<TurnOutcome | undefined> {
  const runner = turn.host.subagents;
  if (!runner) {
    appendToolResult(turn, record, errorOutcome('subagents are not available in this session'));
    return undefined;
  }
  const started = Date.now();
  const budget = turn.budget();
  const settled = await runner.settle({
    record,
    args: parsed.args,
    state: turn.state,
    signal: turn.signal,
    append: (event) => turn.append(event),
    ...(budget ? { remaining: remainingOf(budget.caps, budget.spend) } : {}),
  });
  turn.record(`tool:${parsed.tool.name}`, started, { toolCallId: record.call.id, status: settled.status });
  switch (settled.status) {
    case 'awaiting_approval':
      return awaitingApproval(turn.state);
    case 'interrupted':
      return stopTurn(turn);
    case 'failed':
      turn.append({ kind: 'error', message: settled.error, code: 'subagent_failed' });
      return { status: 'failed', error: settled.error };
    default:
      return undefined;
  }
}

/**
 * The gate for a call not yet decided (gate.ts): appends the call's tool error (it cannot apply), a denial,
 * or an approval request when needed. `preview`: the call may run, on this preview; `stop`: the turn waits.
 */
async function gate(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  hook?: HookSaid,
): Promise<{ stop?: TurnOutcome; preview?: OkPreview }> {
  const decision = await decideGate(turn, record, parsed, hook);
  if (decision.action === 'run') return { preview: decision.preview };
  if (decision.action === 'answer') {
    appendToolResult(turn, record, decision.outcome);
    return {};
  }
  const request = turn.append(decision.request);
  if (request.kind === 'approval_request') await approvalNotification(turn, request);
  return { stop: awaitingApproval(turn.state) };
}

/**
 * Runs an allowed call: `tool_call_started` first (with the images a `recorded_images` tool will apply, after
 * checking an approved change still has the approved diff), then the tool, then its `tool_result`. `gated`:
 * the preview the gate just let it run on, whose plan is written as it is; after an approval (time has
 * passed) the call is previewed again.
 */
async function execute(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  approved: boolean,
  gated?: OkPreview,
): Promise<TurnOutcome | undefined> {
  if (parsed.tool.kind !== 'read') await turn.beforeChanges();
  const key = keyFor(turn.state, record);
  const ctx = toolContextFor(turn, key, record, approved);
  const { resume } = parsed.tool;
  let images: ExpectedImages | undefined;
  let plan: unknown;
  if (resume.rule === 'recorded_images') {
    const preview = gated ?? (await parsed.tool.preview(parsed.args, ctx));
    if (!preview.ok) {
      appendToolResult(turn, record, preview.outcome);
      return undefined;
    }
    if (approved && record.request?.diff !== undefined && preview.diff !== record.request.diff) {
      appendToolResult(
        turn,
        record,
        errorOutcome(
          'the file changed after the edit was approved; it was not applied (read it again and redo the edit)',
        ),
      );
      return undefined;
    }
    images = preview.images;
    plan = preview.plan;
  }
  turn.append({
    kind: 'tool_call_started',
    toolCallId: record.call.id,
    tool: parsed.tool.name,
    idempotencyKey: key,
    ...(images ?? {}),
  });
  crashPoint('after_tool_started');
  const started = Date.now();
  const ran =
    images && resume.rule === 'recorded_images'
      ? await resume.applyOnce(parsed.args, ctx, images, plan)
      : await runParsed(parsed, ctx);
  // Issue #30: PostToolUse hooks (a formatter) run before the result is recorded; what they say follows it.
  const post = await postToolUse(turn, record, parsed, ran);
  const { outcome } = post;
  turn.record(`tool:${parsed.tool.name}`, started, { toolCallId: record.call.id, isError: outcome.isError });
  crashPoint('after_tool_executed_before_result');
  appendToolResult(turn, record, outcome, key);
  if (turn.signal.aborted) return stopTurn(turn);
  // A PostToolUse hook's continue: false: the call ran and is answered; the rest of the message does not run.
  if (post.stop) return endTurnByHook(turn, 'PostToolUse', post.stop);
  return undefined;
}
