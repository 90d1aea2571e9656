import { z } from 'zod';
import type { HookDecision, HookEventName } from '../../common/hookEvents.js';

/*
 * What a hook's run says, read as Claude Code's hooks reference defines it (Codex's hooks read the same):
 * - exit 0: stdout may be JSON (below); otherwise, for UserPromptSubmit and SessionStart, stdout is context
 *   for the model; for the others it is only shown.
 * - exit 2: a blocking error, stderr the reason: PreToolUse refuses the call, UserPromptSubmit refuses the
 *   prompt, PostToolUse and Stop hand the reason to the model (Stop: the turn goes on); for SessionStart,
 *   PreCompact and Notification it is only shown.
 * - any other exit, a timeout, a failure to start: a non-blocking error, shown, never an allow.
 * SessionEnd blocks, stops and tells the model nothing: only `systemMessage` and `suppressOutput` count.
 * JSON (exit 0): `continue: false` + `stopReason` (every event: the turn ends once the hooks ran, over any
 * decision; Stop / SubagentStop then do not go on even when a hook blocks; the reason is the user's, not the
 * model's), `systemMessage`, `suppressOutput` (stdout is not kept in the run's record); `decision: "block"` +
 * `reason` (UserPromptSubmit, PostToolUse, Stop, SubagentStop; PreToolUse's older `"approve"` / `"block"`);
 * `hookSpecificOutput`: `permissionDecision` allow / deny / ask + `permissionDecisionReason` and
 * `updatedInput` (PreToolUse), `additionalContext` (UserPromptSubmit, SessionStart, PostToolUse).
 */

/** What one run produced. */
export type HookRun = {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  startError?: string;
  timeoutMs: number;
};

/** What one run decided, before redaction. */
export type HookVerdict = {
  decision: HookDecision;
  reason?: string;
  /** For the model. */
  context?: string;
  updatedInput?: Record<string, unknown>;
  /** `continue: false`: the turn ends. */
  stop?: boolean;
  /** With `stop`: the hook's `stopReason`, for the user. */
  stopReason?: string;
  /** `suppressOutput: true`: stdout is not kept. */
  suppressOutput?: boolean;
  systemMessage?: string;
};

const HookJson = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(['approve', 'block']).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

/** Events whose plain stdout (exit 0) is context for the model. */
const STDOUT_IS_CONTEXT = new Set<HookEventName>(['UserPromptSubmit', 'SessionStart']);
/** Events a block (exit 2, `decision: "block"`) acts on; for the others it is only shown. */
const CAN_BLOCK = new Set<HookEventName>([
  'PreToolUse',
  'UserPromptSubmit',
  'PostToolUse',
  'Stop',
  'SubagentStop',
]);
/** Events whose block sends the model back to work; `continue: false` wins over it. */
const STOP_EVENTS = new Set<HookEventName>(['Stop', 'SubagentStop']);

/** The verdict of one run of a hook for `event`. Pure. */
export function readHookRun(event: HookEventName, run: HookRun): HookVerdict {
  if (run.startError !== undefined)
    return { decision: 'error', reason: `the hook could not run: ${run.startError}` };
  if (run.timedOut)
    return {
      decision: 'error',
      reason: `the hook did not finish within ${run.timeoutMs / 1000} s and was stopped`,
    };
  const stderr = run.stderr.trim();
  if (run.exitCode === 2) {
    const reason = stderr || 'blocked by the hook (exit code 2, no reason given)';
    if (!CAN_BLOCK.has(event)) return { decision: 'none', reason };
    return { decision: event === 'PreToolUse' ? 'deny' : 'block', reason, context: reason };
  }
  if (run.exitCode !== 0)
    return {
      decision: 'error',
      reason: `the hook failed (exit code ${run.exitCode})${stderr ? `: ${stderr}` : ''}`,
    };
  const stdout = run.stdout.trim();
  const json = parseJsonObject(stdout);
  if (json === undefined) {
    if (stdout !== '' && STDOUT_IS_CONTEXT.has(event)) return { decision: 'none', context: stdout };
    return { decision: 'none' };
  }
  const parsed = HookJson.safeParse(json);
  if (!parsed.success)
    return {
      decision: 'error',
      reason: `the hook's JSON output is not the hooks format: ${parsed.error.issues[0]?.message}`,
    };
  return verdictOfJson(event, parsed.data);
}

function verdictOfJson(event: HookEventName, out: z.infer<typeof HookJson>): HookVerdict {
  const specific = out.hookSpecificOutput;
  const verdict: HookVerdict = { decision: 'none' };
  // The session is over: nothing is left to stop, and nothing said reaches a model (Claude Code: SessionEnd
  // cannot block; its output is only shown).
  if (event === 'SessionEnd') {
    if (out.suppressOutput === true) verdict.suppressOutput = true;
    if (out.systemMessage) verdict.systemMessage = out.systemMessage;
    return verdict;
  }
  if (out.continue === false) {
    verdict.stop = true;
    if (out.stopReason) verdict.stopReason = out.stopReason;
  }
  if (out.suppressOutput === true) verdict.suppressOutput = true;
  if (out.systemMessage) verdict.systemMessage = out.systemMessage;
  if (specific?.additionalContext && event !== 'PreToolUse') verdict.context = specific.additionalContext;
  if (event === 'PreToolUse') {
    const legacy = out.decision === 'approve' ? 'allow' : out.decision === 'block' ? 'deny' : undefined;
    const decision = specific?.permissionDecision ?? legacy;
    if (decision) verdict.decision = decision;
    const reason = specific?.permissionDecisionReason ?? out.reason;
    if (reason) verdict.reason = reason;
    if (decision === 'deny') verdict.context = reason ?? 'refused by a PreToolUse hook';
    if (specific?.updatedInput && decision !== 'deny') verdict.updatedInput = specific.updatedInput;
    return verdict;
  }
  // `continue: false` on a Stop hook ends the turn even when it also blocks (the reference: it takes precedence).
  if (out.decision === 'block' && CAN_BLOCK.has(event) && !(verdict.stop && STOP_EVENTS.has(event))) {
    verdict.decision = 'block';
    verdict.reason = out.reason ?? `blocked by a ${event} hook`;
    verdict.context = [verdict.reason, verdict.context].filter(Boolean).join('\n');
  }
  return verdict;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
