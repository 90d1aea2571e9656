import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import type { ToolContext, ToolOutcome } from '../../tools/types.js';
import { CANCELLED_RESULT } from '../projection/projectPayload.js';
import type { Caps, Spend } from './budget.js';
import type { TurnHost, TurnOutcome } from './host.js';
import { unansweredCalls, type CallRecord, type SessionState } from './state.js';

/** The reason an `interrupted` event gives when the user stopped the turn. */
export const STOPPED = 'stopped by the user';

/** What the parts of one running turn share: its host, its state, its signal, and the only ways it records. */
export interface TurnScope {
  readonly host: TurnHost;
  /** Kept current with the log: every append goes through `append`. */
  readonly state: SessionState;
  /** The turn's own signal: aborted by the host's signal, the stop file, or a subagent budget. */
  readonly signal: AbortSignal;
  /** Appends one event, applies it to the state and tells subscribers; throws if the log moved under the turn. */
  append(event: NewEvent): SessionEvent;
  /** Adds one stage to the turn's trace (written after each model request and when the turn ends). */
  record(stage: string, started: number, detail?: unknown): void;
  /** The host's `beforeChanges`, run at most once per turn; awaited before a tool that can change files. */
  beforeChanges(): Promise<void>;
  /**
   * The caps in effect (the session's, within the host's ceiling) and what was spent against them, subagents
   * included; undefined when no cap is set (#31).
   */
  budget(): { caps: Caps; spend: Spend } | undefined;
}

/** Why the turn was stopped: the abort reason when it is text (a subagent budget), else `fallback`. */
export function stopReason<T extends string | undefined>(turn: TurnScope, fallback: T): string | T {
  const reason: unknown = turn.signal.reason;
  return typeof reason === 'string' ? reason : fallback;
}

/** The `reasoning` field of an `interrupted` event: the reasoning text streamed before the stop, if any. */
export function reasoningOf(text: string): { reasoning?: [{ type: 'reasoning_text'; text: string }] } {
  return text === '' ? {} : { reasoning: [{ type: 'reasoning_text', text }] };
}

/**
 * Appends `interrupted` with the partial text, the reasoning streamed so far (kept to be shown; the
 * projection never replays it) and the reason, when there is one; the turn ends interrupted.
 */
export function interruptTurn(
  turn: TurnScope,
  partial: string,
  reason: string | undefined,
  partialReasoning = '',
): TurnOutcome {
  turn.append({
    kind: 'interrupted',
    content: partial,
    toolCalls: [],
    ...reasoningOf(partialReasoning),
    ...(reason ? { reason } : {}),
  });
  return { status: 'interrupted' };
}

/**
 * Ends a stopped turn: `interrupted` with no partial text, for the user or with the abort's own reason. Every
 * call of the newest message the turn never ran (not started, no request waiting for the user) first gets a
 * cancelled result, the text the projection gives an unanswered call, so the log alone says what happened to
 * each call (an `interrupted` closes the message: nothing would ever run or answer them).
 */
export function stopTurn(turn: TurnScope): TurnOutcome {
  for (const record of unansweredCalls(turn.state)) {
    // A started call is settled on resume; a subagent's child session answers for its call.
    if (record.started || record.request || record.call.name === 'spawn_subagent') continue;
    appendToolResult(turn, record, { content: CANCELLED_RESULT, isError: true });
  }
  return interruptTurn(turn, '', stopReason(turn, STOPPED));
}

/** The turn ends waiting for the user: every request of the newest message still without a decision. */
export function awaitingApproval(state: SessionState): TurnOutcome {
  const pending = unansweredCalls(state)
    .filter((r) => r.request !== undefined && r.decision === undefined)
    .map((r) => r.request as EventOf<'approval_request'>);
  return { status: 'awaiting_approval', pending };
}

/** The tool context of one call: the session's, plus the call's key, the turn's signal and its live output. */
export function toolContextFor(
  turn: TurnScope,
  key: string,
  record: CallRecord,
  approved: boolean,
): ToolContext {
  return {
    ...turn.host.tools,
    idempotencyKey: key,
    toolCallId: record.call.id,
    signal: turn.signal,
    approved,
    onOutput: (chunk) => turn.host.hooks?.onToolOutput?.(record.call.id, chunk),
  };
}

/** Appends the call's `tool_result`: the outcome's content and every fact it carries (status, artifact, images). */
export function appendToolResult(
  turn: TurnScope,
  record: CallRecord,
  outcome: ToolOutcome,
  key?: string,
): void {
  turn.append({
    kind: 'tool_result',
    toolCallId: record.call.id,
    tool: record.call.name,
    content: outcome.content,
    ...(outcome.isError ? { isError: true } : {}),
    ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
    ...(outcome.signal !== undefined ? { signal: outcome.signal } : {}),
    ...(outcome.artifact ? { artifact: outcome.artifact } : {}),
    ...(outcome.images?.length ? { images: outcome.images } : {}),
    ...(key ? { idempotencyKey: key } : {}),
    ...(outcome.preImageHash !== undefined ? { preImageHash: outcome.preImageHash } : {}),
    ...(outcome.postImageHash ? { postImageHash: outcome.postImageHash } : {}),
    ...(outcome.diff ? { diff: outcome.diff } : {}),
    ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
  });
  // After the result, so the call stays answered by the event right after its start (issue #32).
  for (const fact of outcome.background ?? []) turn.append(fact);
}
