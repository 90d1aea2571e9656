import type { EventOf } from '../../common/events.js';
import { claudeToolNames } from '../custom/toolNames.js';
import { hooksFor, runHooks, type HookOutcome, type HookScope } from '../hooks/run.js';
import type { ParsedToolCall } from '../../tools/execute.js';
import type { ToolOutcome } from '../../tools/types.js';
import type { TurnScope } from './scope.js';
import type { CallRecord } from './state.js';

/*
 * Issue #30: where a turn runs the user's hooks (main/core/hooks): before and after a tool, when the model
 * would stop, when a prompt arrives, when the session starts, when an approval waits. Each step appends its
 * `hook_ran` events before acting on them; a resumed turn reads a tool's or a stop's decision back.
 */

/** How often in a row a Stop hook may send the model back to work in one turn. */
export const MAX_STOP_CONTINUATIONS = 3;

const notice = (turn: TurnScope) => turn.host.hooks?.onNotice;

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
): Promise<ToolOutcome> {
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
  return said.length === 0 ? outcome : { ...outcome, content: `${outcome.content}\n${said.join('\n')}` };
}

/**
 * The Stop hooks when the model would end the turn (`assistant`: its final message). A block (exit code 2,
 * `decision: "block"`) is recorded with its reason as context, which sends the model back to work; at most
 * MAX_STOP_CONTINUATIONS times in a row, after which the Stop hooks are not run again in this turn.
 */
export async function stopHooks(turn: TurnScope, assistantSeq: number, continued: number): Promise<boolean> {
  const hooks = hooksFor(turn.host, 'Stop');
  if (hooks.length === 0) return false;
  if (continued >= MAX_STOP_CONTINUATIONS) {
    notice(turn)?.(
      `Stop hooks sent the model back ${continued} times in a row; the turn ends without asking them again`,
    );
    return false;
  }
  const ran = await runHooks(turn, {
    event: 'Stop',
    subject: `stop:${assistantSeq}`,
    hooks,
    input: { stop_hook_active: continued > 0 },
    since: assistantSeq,
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  return ran?.decision === 'block';
}

/**
 * The UserPromptSubmit hooks of a prompt, before it is recorded. `blocked`: the prompt is not recorded and
 * the turn ends with the reason; otherwise the hooks' context follows the prompt (their events are appended
 * after it, so the projection puts it there).
 */
export async function promptHooks(
  turn: TurnScope,
  prompt: string,
): Promise<{ blocked?: string; stop?: string }> {
  const hooks = hooksFor(turn.host, 'UserPromptSubmit');
  if (hooks.length === 0) return {};
  const ran = await runHooks(turn, {
    event: 'UserPromptSubmit',
    subject: `prompt:${turn.state.lastSeq + 1}`,
    hooks,
    input: { prompt },
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
  });
  if (ran?.decision === 'block') return { blocked: ran.reason ?? 'blocked by a UserPromptSubmit hook' };
  if (ran?.stop) return { stop: ran.reason ?? 'a UserPromptSubmit hook ended the turn' };
  return {};
}

/** SessionStart hooks, once per session (source `startup`), when its first turn starts. */
export async function sessionStartHooks(turn: TurnScope): Promise<void> {
  const hooks = hooksFor(turn.host, 'SessionStart', ['startup']);
  if (hooks.length === 0 || turn.state.turns > 0) return;
  await runHooks(turn, {
    event: 'SessionStart',
    subject: 'session',
    hooks,
    input: { source: 'startup' },
    since: 1,
    ...(notice(turn) ? { onNotice: notice(turn) } : {}),
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
 * PreCompact hooks (trigger `auto`) once a compaction is decided, before it starts: they cannot stop it (the
 * formats give them no block), their runs are recorded.
 */
export async function preCompactHooks(scope: HookScope): Promise<void> {
  const hooks = hooksFor(scope.host, 'PreCompact', ['auto']);
  if (hooks.length === 0) return;
  await runHooks(scope, {
    event: 'PreCompact',
    subject: `compact:${scope.state.lastSeq}`,
    hooks,
    input: { trigger: 'auto', custom_instructions: '' },
    since: scope.state.lastSeq,
    ...(scope.host.hooks?.onNotice ? { onNotice: scope.host.hooks.onNotice } : {}),
  });
}
