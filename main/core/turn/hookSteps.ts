import type { EventOf } from '../../common/events.js';
import type { HookEventName } from '../../common/hookEvents.js';
import type { UnusualStop } from '../../common/stopReasons.js';
import { crashPoint } from '../crash.js';
import { claudeToolNames } from '../custom/toolNames.js';
import { hooksFor, runHooks, type HookOutcome, type HookScope } from '../hooks/run.js';
import type { ParsedToolCall } from '../../tools/execute.js';
import type { ToolOutcome } from '../../tools/types.js';
import type { TurnOutcome } from './host.js';
import { appendToolResult, type TurnScope } from './scope.js';
import { unansweredCalls, type CallRecord } from './state.js';

/*
 * Issue #30: where a turn runs the user's hooks (main/core/hooks): before and after a tool, when the model
 * would stop, when a prompt arrives, when the session starts, when an approval waits. Each step appends its
 * `hook_ran` events before acting on them; a resumed turn reads a tool's or a stop's decision back.
 */

/** How often in a row a Stop hook may send the model back to work in one turn. */
export const MAX_STOP_CONTINUATIONS = 3;

const notice = (turn: TurnScope) => turn.host.hooks?.onNotice;

/** What the model reads as the result of a call a hook's `continue: false` kept from running (no stopReason). */
export const HOOK_STOPPED_RESULT = JSON.stringify({ error: 'not run: a hook ended the turn' });

/** The notice of a turn a hook ended (`continue: false`): its `stopReason`, for the user only. */
export function hookStop(event: HookEventName, outcome: Pick<HookOutcome, 'stopReason'>): UnusualStop {
  return {
    kind: 'hook',
    message: `A ${event} hook ended the turn: ${outcome.stopReason ?? 'no reason given'}`,
  };
}

/**
 * Ends a turn a tool hook stopped (`continue: false`): every call of the newest message that has not run
 * (none started, no request waiting) is answered "not run", so the log alone says what happened to each and
 * nothing runs them later; the turn completes with the hook's notice.
 */
export function endTurnByHook(turn: TurnScope, event: HookEventName, outcome: HookOutcome): TurnOutcome {
  for (const record of unansweredCalls(turn.state)) {
    if (record.started || record.request || record.call.name === 'spawn_subagent') continue;
    appendToolResult(turn, record, { content: HOOK_STOPPED_RESULT, isError: true });
  }
  return { status: 'completed', text: '', stop: hookStop(event, outcome) };
}

/** The names a tool's matcher may use: Claude Code's (`Bash`, `Write`…) first, then Keel's. */
function toolNames(tool: string): string[] {
  return claudeToolNames(tool);
}

/** Whether any PreToolUse or PostToolUse hook matches this tool (such a call is settled alone, not in a parallel run). */
export function toolHasHooks(turn: TurnScope, tool: string): boolean {
  const names = toolNames(tool);
  return (
    hooksFor(turn.host, 'PreToolUse', names).length + hooksFor(turn.host, 'PostToolUse', names).length > 0
  );
}

/** Claude Code's `tool_input`: the call's arguments, with `file_path` beside a Keel `path` (an absolute one). */
function toolInput(turn: TurnScope, args: Record<string, unknown>): Record<string, unknown> {
  if (typeof args.path !== 'string' || 'file_path' in args) return args;
  const workspace = turn.host.tools.workspace;
  const file = args.path.startsWith('/') ? args.path : `${workspace}/${args.path}`;
  return { ...args, file_path: file };
}

/** The PreToolUse hooks of a call (run, or read back from the log). Undefined when none matches. */
export function preToolUse(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
): Promise<HookOutcome | undefined> {
  const names = toolNames(parsed.tool.name);
  return runHooks(turn, {
    event: 'PreToolUse',
    subject: `call:${record.call.id}`,
    hooks: hooksFor(turn.host, 'PreToolUse', names),
    input: {
      tool_name: names[0],
      tool_input: toolInput(turn, parsed.args),
      tool_use_id: record.call.id,
    },
    since: record.assistantSeq,
    ...(record.started ? { replayOnly: true } : {}),
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
}

/**
 * A hook's `updatedInput` as the call's arguments: the alias `file_path` added for the hook is taken back
 * into `path` (a hook may rewrite either) unless the tool has its own `file_path`.
 */
export function rewrittenArguments(
  original: Record<string, unknown>,
  updated: Record<string, unknown>,
): string {
  const next = { ...updated };
  if (!('file_path' in original) && 'file_path' in next) {
    if (typeof next.file_path === 'string' && next.path === original.path) next.path = next.file_path;
    delete next.file_path;
  }
  return JSON.stringify(next);
}

/**
 * The PostToolUse hooks of a call that ran (before its result is appended, so a crash between them settles
 * the call as any started call). Returns the outcome with what the hooks told the model added after it.
 */
export async function postToolUse(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  outcome: ToolOutcome,
): Promise<{ outcome: ToolOutcome; stop?: HookOutcome }> {
  const names = toolNames(parsed.tool.name);
  const ran = await runHooks(turn, {
    event: 'PostToolUse',
    subject: `call:${record.call.id}`,
    hooks: hooksFor(turn.host, 'PostToolUse', names),
    input: {
      tool_name: names[0],
      tool_input: toolInput(turn, parsed.args),
      tool_response: { content: outcome.content, isError: outcome.isError, success: !outcome.isError },
      tool_use_id: record.call.id,
    },
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  const said = (ran?.runs ?? []).flatMap((run) =>
    run.context ? [`[PostToolUse hook ${run.source}: ${run.context}]`] : [],
  );
  const told =
    said.length === 0 ? outcome : { ...outcome, content: `${outcome.content}\n${said.join('\n')}` };
  return { outcome: told, ...(ran?.stop ? { stop: ran } : {}) };
}

/**
 * The Stop hooks when the model would end the turn (`assistant`: its final message; a subagent's session runs
 * its parent's SubagentStop hooks instead). A block (exit code 2, `decision: "block"`) is recorded with its
 * reason as context and `again` sends the model back to work, at most MAX_STOP_CONTINUATIONS times in a row,
 * after which the hooks are not run again in this turn; `stop` (a `continue: false`) ends the turn over a block.
 * `continued`: the times the turn's Stop hooks sent the model back so far; unknown (a turn this process
 * resumed), it is counted from the log, so `stop_hook_active` and the bound hold across a crash. The count used
 * comes back as `continued`.
 */
export async function stopHooks(
  turn: TurnScope,
  assistant: EventOf<'assistant_message'>,
  known: number | undefined,
): Promise<{ again?: true; stop?: UnusualStop; continued: number }> {
  const event = turn.host.stopEvent ?? 'Stop';
  const hooks = hooksFor(turn.host, event);
  if (hooks.length === 0) return { continued: known ?? 0 };
  const continued = known ?? stopBlocksOfTurn(turn, event, assistant.seq);
  if (continued >= MAX_STOP_CONTINUATIONS) {
    notice(turn)?.(
      `${event} hooks sent the model back ${continued} times in a row; the turn ends without asking them again`,
    );
    return { continued };
  }
  const ran = await runHooks(turn, {
    event,
    subject: `stop:${assistant.seq}`,
    hooks,
    input: { stop_hook_active: continued > 0, last_assistant_message: assistant.content },
    since: assistant.seq,
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  if (ran && !ran.replayed) crashPoint('after_stop_hook_decision');
  if (ran?.stop) return { stop: hookStop(event, ran), continued };
  return ran?.decision === 'block' ? { again: true, continued } : { continued };
}

/** The blocks of this turn's Stop (or SubagentStop) hooks before `assistantSeq`'s own, read from the log. */
function stopBlocksOfTurn(turn: TurnScope, event: HookEventName, assistantSeq: number): number {
  const { log } = turn.host;
  const since = log.lastSeqOfKind('user_message') ?? 0;
  return log
    .read({ fromSeq: since + 1, toSeq: assistantSeq - 1, validate: false })
    .filter((e) => e.kind === 'hook_ran' && e.event === event && e.decision === 'block' && !e.stop).length;
}

/**
 * The UserPromptSubmit hooks of a prompt, before it is recorded. `blocked`: the prompt is not recorded and
 * the turn ends with the reason; otherwise the hooks' context follows the prompt (their events are appended
 * after it, so the projection puts it there).
 */
export async function promptHooks(
  turn: TurnScope,
  prompt: string,
): Promise<{ blocked?: string; stop?: UnusualStop }> {
  const hooks = hooksFor(turn.host, 'UserPromptSubmit');
  if (hooks.length === 0) return {};
  const ran = await runHooks(turn, {
    event: 'UserPromptSubmit',
    subject: `prompt:${turn.state.lastSeq + 1}`,
    hooks,
    input: { prompt },
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  // continue: false wins over a block: the prompt is not processed either way, the user reads the stopReason.
  if (ran?.stop) return { stop: hookStop('UserPromptSubmit', ran) };
  if (ran?.decision === 'block') return { blocked: ran.reason ?? 'blocked by a UserPromptSubmit hook' };
  return {};
}

/**
 * SessionStart hooks before a prompt, with the source Keel has an equivalent of: `startup` on a session's first
 * prompt (once: read back after), `resume` on the first prompt this process runs of a session that has turns
 * (the host says so: `TurnHost.resumed`; `keel run --session`, the app after a restart, an ACP load, a fork).
 * A `continue: false` of a run made now ends the turn before the prompt is recorded; read back, it does not.
 */
export async function sessionStartHooks(turn: TurnScope): Promise<UnusualStop | undefined> {
  const source = turn.state.turns === 0 ? 'startup' : turn.host.resumed ? 'resume' : undefined;
  if (source === undefined) return undefined;
  const hooks = hooksFor(turn.host, 'SessionStart', [source]);
  if (hooks.length === 0) return undefined;
  const ran = await runHooks(turn, {
    event: 'SessionStart',
    subject: source === 'startup' ? 'session' : `resume:${turn.state.lastSeq + 1}`,
    hooks,
    input: { source },
    ...(source === 'startup' ? { since: 1 } : {}),
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  return ran?.stop && !ran.replayed ? hookStop('SessionStart', ran) : undefined;
}

/**
 * SessionStart hooks with source `compact` once after each compaction (an automatic one inside the turn, or one
 * the user ran: then when the next turn starts), so a hook can give back what the summary dropped; their
 * context follows the compaction. Read back once recorded (subject `compact:<seq>`).
 */
export async function afterCompactionHooks(scope: HookScope): Promise<HookOutcome | undefined> {
  const hooks = hooksFor(scope.host, 'SessionStart', ['compact']);
  const seq = hooks.length === 0 ? undefined : scope.host.log.lastSeqOfKind('compaction');
  if (seq === undefined) return undefined;
  return runHooks(scope, {
    event: 'SessionStart',
    subject: `compact:${seq}`,
    hooks,
    input: { source: 'compact' },
    since: seq,
    ...(scope.host.hooks?.onNotice ? { onNotice: scope.host.hooks.onNotice } : {}),
  });
}

/** Notification hooks when the turn waits for the user's approval (Claude Code's `permission_prompt`). */
export async function approvalNotification(
  turn: TurnScope,
  request: EventOf<'approval_request'>,
): Promise<void> {
  const hooks = hooksFor(turn.host, 'Notification', ['permission_prompt']);
  if (hooks.length === 0) return;
  await runHooks(turn, {
    event: 'Notification',
    subject: `request:${request.seq}`,
    hooks,
    input: {
      message: `Keel needs your permission to use ${request.tool}`,
      notification_type: 'permission_prompt',
    },
    since: request.seq,
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
}

/**
 * PreCompact hooks once a compaction is decided, before it starts: `auto` inside a turn, `manual` when the user
 * compacts (`keel compact`, the app; harness/compaction.ts), with the user's instructions when there are any.
 * The formats give them no block; a `continue: false` (made now, not read back) means the compaction does not
 * start (`stop`, with the hooks' stopReason).
 */
export async function preCompactHooks(
  scope: HookScope,
  trigger: 'auto' | 'manual' = 'auto',
  instructions = '',
): Promise<HookOutcome | undefined> {
  const hooks = hooksFor(scope.host, 'PreCompact', [trigger]);
  if (hooks.length === 0) return undefined;
  return runHooks(scope, {
    event: 'PreCompact',
    subject: `compact:${scope.state.lastSeq}`,
    hooks,
    input: { trigger, custom_instructions: instructions },
    since: scope.state.lastSeq,
    ...(scope.host.hooks?.onNotice ? { onNotice: scope.host.hooks.onNotice } : {}),
  });
}
