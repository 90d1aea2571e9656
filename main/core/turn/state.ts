import { toolGrantsEndedBy, type ActiveGrant } from '../approvals/grants.js';
import { importedPolicy, importMarkOf, isImportedSeq, type ImportMark } from '../log/imported.js';
import { addSpend, type Caps, type Spend } from './budget.js';
import type {
  EventOf,
  ModelPin,
  Policy,
  SessionEvent,
  ToolCall,
  ToolMode,
  Usage,
} from '../../common/events.js';

/** What the log says about one tool call the model made. */
export type CallRecord = {
  call: ToolCall;
  /** Seq of the assistant_message that made the call, and the call's position in it. */
  assistantSeq: number;
  index: number;
  started?: EventOf<'tool_call_started'>;
  resultSeq?: number;
  /** The newest approval request for this call and its decision, if any (a plan's: plan_approved / plan_rejected). */
  request?: EventOf<'approval_request'>;
  decision?:
    | EventOf<'approval_granted'>
    | EventOf<'approval_denied'>
    | EventOf<'plan_approved'>
    | EventOf<'plan_rejected'>;
};

/**
 * The turn engine's view of a session, folded from its events in one pass and kept current by applying
 * each appended event: the pinned model, the policy, grants, and the state of every tool call of the newest
 * assistant message. Pure data; `applyEvent` has no side effects.
 */
export type SessionState = {
  sessionId: string;
  projectFolder: string;
  toolMode: ToolMode;
  policy: Policy;
  /** Issue #30: plan mode is on (plan_mode_changed), until a plan_approved ends it: only reads and present_plan run. */
  planMode: boolean;
  pin: ModelPin;
  /** Seq of the event that set the pin (session_created or the newest model_changed). */
  pinSeq: number;
  /** Set when the session was imported: events up to `imported.through` came from the file (imported.ts). */
  imported?: ImportMark;
  systemPrompt?: string;
  lastSeq: number;
  /** Number of user messages: turn N is the Nth. */
  turns: number;
  /** Calls of the newest assistant message, in order. */
  openCalls: CallRecord[];
  /** Every approval request by seq (for grant lookup and decisions). */
  requests: Map<number, EventOf<'approval_request'>>;
  grants: Map<number, ActiveGrant>;
  /** The newest tool_rules_applied not from an imported file: the project's tool rules in effect. */
  toolRules?: EventOf<'tool_rules_applied'>;
  /** The newest permission_rules_applied not from an imported file: the permission rules in effect. */
  permissionRules?: EventOf<'permission_rules_applied'>;
  /** The newest event that decides whether the model should be asked next. */
  lastConversational?: SessionEvent;
  /** Usage of the newest assistant message (the compaction trigger measures from it). */
  lastUsage?: Usage;
  lastUsageSeq?: number;
  totals: {
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    /** Of outputTokens, those spent reasoning (where the provider reported them). */
    reasoningTokens: number;
  };
  /** The session's spend caps, from its budget_set events (#31). */
  caps: Caps;
  /**
   * What the session spent (its requests and compaction summaries; subagents are added by the turn), kept
   * current by `applyEvent` once set: `loadSessionState` sets it when a cap is in effect, `foldSession` when given
   * an empty one to fold into.
   */
  spend?: Spend;
  /** Children started by subagent calls, in order: their spend counts against this session's caps. */
  children: string[];
  /** Assistant messages in a row, newest last, that ended with the provider's `pause_turn`. */
  pausedInARow: number;
};

/** Folds a whole log (its first event must be session_created). */
export function foldSession(events: readonly SessionEvent[], options: { spend?: Spend } = {}): SessionState {
  const first = events[0];
  if (!first || first.kind !== 'session_created')
    throw new Error('a session log starts with session_created');
  const state: SessionState = {
    sessionId: first.sessionId,
    projectFolder: first.projectFolder,
    toolMode: first.toolMode,
    policy: first.policy,
    planMode: false,
    pin: {
      provider: first.provider,
      model: first.model,
      baseUrl: first.baseUrl,
      contextWindow: first.contextWindow,
      ...(first.reasoningEffort ? { reasoningEffort: first.reasoningEffort } : {}),
      ...(first.local ? { local: first.local } : {}),
    },
    pinSeq: first.seq,
    systemPrompt: first.systemPrompt,
    lastSeq: first.seq,
    turns: 0,
    openCalls: [],
    requests: new Map(),
    grants: new Map(),
    ...(options.spend ? { spend: options.spend } : {}),
    totals: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    caps: {},
    children: [],
    pausedInARow: 0,
  };
  const mark = importMarkOf(first);
  if (mark) {
    state.imported = mark;
    state.policy = importedPolicy(first.policy);
  }
  for (let i = 1; i < events.length; i++) applyEvent(state, events[i] as SessionEvent);
  // A request the file left open was put to someone else, its arguments maybe not its call's: it does not
  // stand here, so the call asks again with a request built from what would run.
  for (const record of state.openCalls) {
    if (record.request && !record.decision && isImportedSeq(mark, record.request.seq)) delete record.request;
  }
  return state;
}

function callFor(state: SessionState, toolCallId: string): CallRecord | undefined {
  return state.openCalls.find((record) => record.call.id === toolCallId);
}

/** Applies one appended event to the state, in place. */
export function applyEvent(state: SessionState, event: SessionEvent): void {
  state.lastSeq = event.seq;
  switch (event.kind) {
    case 'user_message':
      state.turns++;
      state.lastConversational = event;
      break;
    case 'assistant_message':
      state.openCalls = event.toolCalls.map((call, index) => ({ call, assistantSeq: event.seq, index }));
      state.lastConversational = event;
      state.pausedInARow = event.stopReason === 'pause_turn' ? state.pausedInARow + 1 : 0;
      if (event.usage && state.spend)
        addSpend(state.spend, 'requests', event.usage, event.model ?? state.pin.model);
      if (event.usage) {
        state.lastUsage = event.usage;
        state.lastUsageSeq = event.seq;
        state.totals.inputTokens += event.usage.inputTokens;
        state.totals.outputTokens += event.usage.outputTokens;
        state.totals.cacheReadTokens += event.usage.cacheReadTokens ?? 0;
        state.totals.cacheWriteTokens += event.usage.cacheWriteTokens ?? 0;
        state.totals.reasoningTokens += event.usage.reasoningTokens ?? 0;
      }
      break;
    case 'compaction':
      if (event.usage && state.spend)
        addSpend(state.spend, 'compaction', event.usage, event.model ?? state.pin.model);
      break;
    case 'budget_set':
      state.caps = capsAfter(state.caps, event);
      break;
    case 'subagent_started':
      if (!state.children.includes(event.childId)) state.children.push(event.childId);
      break;
    case 'tool_call_started': {
      const record = callFor(state, event.toolCallId);
      if (record) record.started = event;
      break;
    }
    case 'tool_result':
    case 'subagent_result': {
      const record = event.toolCallId ? callFor(state, event.toolCallId) : undefined;
      if (record && record.resultSeq === undefined) record.resultSeq = event.seq;
      state.lastConversational = event;
      break;
    }
    case 'approval_request': {
      state.requests.set(event.seq, event);
      const record = callFor(state, event.toolCallId);
      if (record) {
        record.request = event;
        delete record.decision;
      }
      break;
    }
    case 'approval_granted':
    case 'approval_denied': {
      const request = state.requests.get(event.requestSeq);
      const record = request ? callFor(state, request.toolCallId) : undefined;
      if (event.kind === 'approval_granted' && isImportedSeq(state.imported, event.seq)) {
        // A grant from an imported file authorises nothing here: its call asks again (a new request).
        if (record && record.request?.seq === event.requestSeq) {
          delete record.request;
          delete record.decision;
        }
        break;
      }
      if (record && record.request?.seq === event.requestSeq) record.decision = event;
      if (event.kind === 'approval_granted' && request && event.scope !== 'once') {
        state.grants.set(event.seq, {
          seq: event.seq,
          requestSeq: event.requestSeq,
          tool: request.tool,
          scope: event.scope,
        });
      }
      break;
    }
    case 'approval_revoked':
      state.grants.delete(event.grantSeq);
      break;
    case 'tool_rules_applied':
      // Rules that came with an imported file were someone's decision elsewhere: in effect nowhere here.
      if (isImportedSeq(state.imported, event.seq)) break;
      state.toolRules = event;
      for (const seq of toolGrantsEndedBy(event, state.grants.values())) state.grants.delete(seq);
      break;
    case 'permission_rules_applied':
      // Rules that came with an imported file were someone else's setup: in effect nowhere here.
      if (!isImportedSeq(state.imported, event.seq)) state.permissionRules = event;
      break;
    case 'hook_ran':
      // Issue #30: a Stop hook's block sends the model back to work with its reason (turn/hookSteps.ts).
      // A run that also said `continue: false` ended the turn instead (hookSteps.ts).
      if (
        (event.event === 'Stop' || event.event === 'SubagentStop') &&
        event.decision === 'block' &&
        !event.stop
      )
        state.lastConversational = event;
      break;
    case 'interrupted':
      state.openCalls = [];
      state.lastConversational = event;
      break;
    case 'error':
      state.lastConversational = event;
      break;
    case 'model_changed':
      state.pinSeq = event.seq;
      state.pin = {
        provider: event.provider,
        model: event.model,
        baseUrl: event.baseUrl,
        contextWindow: event.contextWindow,
        ...(event.reasoningEffort ? { reasoningEffort: event.reasoningEffort } : {}),
        ...(event.local ? { local: event.local } : {}),
      };
      break;
    case 'reasoning_changed':
      // The pin's effort only: pinSeq stays, so an imported endpoint is still unconfirmed.
      state.pin = { ...state.pin, reasoningEffort: event.effort };
      break;
    case 'policy_changed':
      state.policy = isImportedSeq(state.imported, event.seq) ? importedPolicy(event.policy) : event.policy;
      break;
    case 'plan_mode_changed':
      state.planMode = event.active;
      break;
    case 'plan_approved':
    case 'plan_rejected':
      applyPlanDecision(state, event);
      break;
    default:
      break;
  }
}

/**
 * A plan's decision answers its present_plan call like an approval's; an approval also ends plan mode and
 * sets the policy the user chose. One from an imported file decided nothing here: the call asks again.
 */
function applyPlanDecision(
  state: SessionState,
  event: EventOf<'plan_approved'> | EventOf<'plan_rejected'>,
): void {
  const request = state.requests.get(event.requestSeq);
  const record = request ? callFor(state, request.toolCallId) : undefined;
  const current = record && record.request?.seq === event.requestSeq ? record : undefined;
  if (isImportedSeq(state.imported, event.seq)) {
    if (current) {
      delete current.request;
      delete current.decision;
    }
    return;
  }
  if (current) current.decision = event;
  if (event.kind === 'plan_approved') {
    state.planMode = false;
    state.policy = event.policy;
  }
}

/** The caps after a budget_set: a field given replaces its cap (null removes it); an absent one stays. */
export function capsAfter(caps: Caps, event: EventOf<'budget_set'>): Caps {
  const next: Caps = { ...caps };
  if (event.usd !== undefined) {
    if (event.usd === null) delete next.usd;
    else next.usd = event.usd;
  }
  if (event.tokens !== undefined) {
    if (event.tokens === null) delete next.tokens;
    else next.tokens = event.tokens;
  }
  return next;
}

/** Calls of the newest assistant message that have no result yet, in order. */
export function unansweredCalls(state: SessionState): CallRecord[] {
  return state.openCalls.filter((record) => record.resultSeq === undefined);
}

/**
 * Replies in a row ending with Anthropic's `pause_turn` (a server tool still working) that Keel continues by
 * sending the conversation back as it is; after that many, the turn ends with the pause as its notice.
 */
export const MAX_PAUSE_CONTINUATIONS = 5;

/**
 * Whether the model should be asked next: after a user message, tool results, an interruption or an
 * error (resume continues the turn), or a reply the provider paused (at most MAX_PAUSE_CONTINUATIONS in a
 * row); not after a final answer, and not while calls are unanswered.
 */
export function needsModel(state: SessionState): boolean {
  if (unansweredCalls(state).length > 0) return false;
  const last = state.lastConversational;
  if (!last) return false;
  if (last.kind === 'assistant_message')
    return (
      last.toolCalls.length > 0 ||
      (last.stopReason === 'pause_turn' && state.pausedInARow <= MAX_PAUSE_CONTINUATIONS)
    );
  return true;
}
