import type { EventOf, SessionEvent, Usage } from '../../common/events.js';
import { clip } from '../../common/text.js';
import type { TraceEntry } from '../log/sessionLog.js';
import { costOf } from '../../providers/catalogue.js';
import type { SessionTraceSource, SummarizeOptions } from './types.js';
import type {
  SessionTraceSummary,
  StageKind,
  SubagentTrace,
  TimelineStage,
  TokenCounts,
  TokensAndCost,
  TurnPoint,
  TurnTraceSummary,
} from '../../common/traceSchema.js';

/** Default levels of subagents nested under a session's turns. */
export const DEFAULT_TRACE_DEPTH = 3;
const PROMPT_CHARS = 200;

/** Zero tokens, zero cost, cost known. */
export function emptyTokens(): TokensAndCost {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    costKnown: true,
  };
}

/** Adds `usage` (priced for `model`) to `into`, in place; an unpriced model makes the cost unknown. */
export function addUsage(into: TokensAndCost, usage: Usage, model: string): void {
  into.inputTokens += usage.inputTokens;
  into.outputTokens += usage.outputTokens;
  into.cacheReadTokens += usage.cacheReadTokens ?? 0;
  into.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  if (usage.reasoningTokens) into.reasoningTokens = (into.reasoningTokens ?? 0) + usage.reasoningTokens;
  const cost = costOf(usage, model);
  if (cost === undefined) into.costKnown = false;
  else into.costUsd += cost;
}

/** cacheRead / (input + cacheRead + cacheWrite): the share of prompt tokens served from the cache; null when none. */
export function cacheHitRate(tokens: TokenCounts): number | null {
  const prompt = tokens.inputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens;
  return prompt === 0 ? null : tokens.cacheReadTokens / prompt;
}

/**
 * Summarises one session from its events and trace records: each turn's timeline (projection, request,
 * time to first token, stream, retries, each tool with its call id, approval waits from approval_request.at
 * to the decision's at, compactions, checkout work) with offsets from the turn's start; tokens and cost per
 * turn from the recorded assistant messages (priced with the catalogue); session totals, the per-turn chart
 * series and the cache hit rate; subagents nested under the turn that spawned them (through `loadChild`,
 * at most `maxDepth` levels, never the same session twice). Pure apart from what `loadChild` does.
 */
export function summarizeSession(
  source: SessionTraceSource,
  options: SummarizeOptions = {},
): SessionTraceSummary {
  return summarize(source, options, 0, new Set());
}

function summarize(
  source: SessionTraceSource,
  options: SummarizeOptions,
  depth: number,
  seen: Set<string>,
): SessionTraceSummary {
  const created = source.events.find(
    (event): event is EventOf<'session_created'> => event.kind === 'session_created',
  );
  const sessionId = created?.sessionId ?? 'unknown';
  const within = new Set(seen).add(sessionId);
  const decisions = decisionsByRequest(source.events);
  const results = new Map<string, EventOf<'subagent_result'>>();
  for (const event of source.events) if (event.kind === 'subagent_result') results.set(event.childId, event);

  const turns = new Map<number, TurnBuilder>();
  const turnFor = (turn: number): TurnBuilder => {
    let builder = turns.get(turn);
    if (!builder) {
      builder = newTurn(turn);
      turns.set(turn, builder);
    }
    return builder;
  };

  let turn = 0;
  let model = created?.model ?? 'unknown';
  for (const event of source.events) {
    if (event.kind === 'user_message') turn += 1;
    if (event.kind === 'model_changed') model = event.model;
    if (event.kind === 'session_created') continue;
    const builder = turnFor(turn);
    builder.firstAt ??= event.at;
    builder.lastAt = event.at;
    switch (event.kind) {
      case 'user_message':
        builder.prompt ??= clip(event.content, PROMPT_CHARS);
        builder.promptAt ??= event.at;
        break;
      case 'assistant_message':
        builder.requests += 1;
        if (event.usage) addUsage(builder.tokens, event.usage, event.model ?? model);
        break;
      case 'compaction':
        builder.compactionEvents += 1;
        break;
      case 'approval_request':
        builder.stages.push(approvalWait(event, decisions.get(event.seq), options.now));
        break;
      case 'subagent_started':
        builder.subagents.push(subagent(event, results.get(event.childId), options, depth, within));
        break;
      default:
        break;
    }
  }
  for (const entry of source.trace) addTraceEntry(turnFor(entry.turn), entry);

  const summaries = [...turns.values()]
    .filter((builder) => builder.turn > 0 || builder.stages.length > 0 || builder.requests > 0)
    .sort((a, b) => a.turn - b.turn)
    .map(finishTurn);
  return sessionSummary(sessionId, created?.model ?? model, summaries);
}

type TurnBuilder = {
  turn: number;
  prompt?: string;
  promptAt?: string;
  firstAt?: string;
  lastAt?: string;
  requests: number;
  compactionEvents: number;
  tokens: TokensAndCost;
  stages: Omit<TimelineStage, 'startOffsetMs'>[];
  /** time_to_first_token records waiting for their stream record, to make the request bar. */
  openRequest?: { startedAt: string };
  subagents: SubagentTrace[];
};

function newTurn(turn: number): TurnBuilder {
  return { turn, requests: 0, compactionEvents: 0, tokens: emptyTokens(), stages: [], subagents: [] };
}

function stageKind(name: string): StageKind {
  if (name.startsWith('tool:')) return 'tool';
  if (name.startsWith('persistent_')) return 'persistent';
  switch (name) {
    case 'projection':
    case 'request':
    case 'time_to_first_token':
    case 'stream':
    case 'retry':
    case 'compaction':
      return name;
    default:
      return 'other';
  }
}

/** Stages that only mark a moment and carry no duration worth a bar. */
const MARKERS = new Set(['usage', 'harness_turn', 'budget_check']);

function addTraceEntry(builder: TurnBuilder, entry: TraceEntry): void {
  if (MARKERS.has(entry.stage)) return;
  const kind = stageKind(entry.stage);
  const detail = isRecord(entry.detail) ? entry.detail : undefined;
  let durationMs = entry.durationMs ?? 0;
  // A retry is recorded when it is scheduled; the wait it causes is its delay.
  if (kind === 'retry' && typeof detail?.['delayMs'] === 'number') durationMs = detail['delayMs'];
  const stage: Omit<TimelineStage, 'startOffsetMs'> = {
    kind,
    name: entry.stage,
    startedAt: entry.startedAt,
    durationMs,
    ...(kind === 'tool' ? { tool: entry.stage.slice('tool:'.length) } : {}),
    ...(typeof detail?.['toolCallId'] === 'string' ? { toolCallId: detail['toolCallId'] } : {}),
    ...(entry.detail === undefined ? {} : { detail: entry.detail }),
  };
  builder.stages.push(stage);
  // The engine records time_to_first_token from the request's start and the stream from the first token:
  // together they make the request's bar.
  if (kind === 'time_to_first_token') builder.openRequest = { startedAt: entry.startedAt };
  if (kind === 'stream' && builder.openRequest) {
    const start = Date.parse(builder.openRequest.startedAt);
    const end = Date.parse(entry.startedAt) + durationMs;
    builder.stages.push({
      kind: 'request',
      name: 'request',
      startedAt: builder.openRequest.startedAt,
      durationMs: Math.max(0, end - start),
    });
    builder.openRequest = undefined;
  }
}

function approvalWait(
  request: EventOf<'approval_request'>,
  decision: EventOf<'approval_granted'> | EventOf<'approval_denied'> | undefined,
  now: Date | undefined,
): Omit<TimelineStage, 'startOffsetMs'> {
  const start = Date.parse(request.at);
  const base = {
    kind: 'approval_wait' as const,
    name: 'approval_wait',
    startedAt: request.at,
    tool: request.tool,
    toolCallId: request.toolCallId,
    requestSeq: request.seq,
  };
  if (decision) {
    return {
      ...base,
      durationMs: Math.max(0, Date.parse(decision.at) - start),
      decision: decision.kind === 'approval_granted' ? 'granted' : 'denied',
    };
  }
  return { ...base, durationMs: now ? Math.max(0, now.getTime() - start) : 0, pending: true };
}

function decisionsByRequest(
  events: readonly SessionEvent[],
): Map<number, EventOf<'approval_granted'> | EventOf<'approval_denied'>> {
  const decisions = new Map<number, EventOf<'approval_granted'> | EventOf<'approval_denied'>>();
  for (const event of events) {
    if (
      (event.kind === 'approval_granted' || event.kind === 'approval_denied') &&
      !decisions.has(event.requestSeq)
    )
      decisions.set(event.requestSeq, event);
  }
  return decisions;
}

function subagent(
  started: EventOf<'subagent_started'>,
  result: EventOf<'subagent_result'> | undefined,
  options: SummarizeOptions,
  depth: number,
  seen: Set<string>,
): SubagentTrace {
  const base: SubagentTrace = {
    childId: started.childId,
    ...(started.toolCallId ? { toolCallId: started.toolCallId } : {}),
    task: clip(started.task, PROMPT_CHARS),
    startedSeq: started.seq,
    finished: result !== undefined,
    ...(result?.outOfBudget ? { outOfBudget: true } : {}),
  };
  if (!options.loadChild) return base;
  if (seen.has(started.childId)) return { ...base, missing: 'cycle' };
  const maxDepth = options.maxDepth ?? DEFAULT_TRACE_DEPTH;
  if (depth + 1 > maxDepth) return { ...base, missing: 'depth_limit' };
  const child = options.loadChild(started.childId);
  if (!child) return { ...base, missing: 'not_found' };
  return { ...base, summary: summarize(child, options, depth + 1, seen) };
}

function finishTurn(builder: TurnBuilder): TurnTraceSummary {
  const starts = builder.stages.map((stage) => Date.parse(stage.startedAt));
  const ends = builder.stages.map((stage) => Date.parse(stage.startedAt) + stage.durationMs);
  const anchor = builder.promptAt ?? builder.firstAt;
  if (anchor !== undefined) starts.push(Date.parse(anchor));
  if (builder.lastAt !== undefined) ends.push(Date.parse(builder.lastAt));
  const valid = (values: number[]) => values.filter((value) => Number.isFinite(value));
  const start = valid(starts).length > 0 ? Math.min(...valid(starts)) : 0;
  const end = valid(ends).length > 0 ? Math.max(...valid(ends)) : start;
  const stages: TimelineStage[] = builder.stages
    .map((stage, index) => ({ stage, index, at: Date.parse(stage.startedAt) }))
    // A request bar encloses its time-to-first-token bar that starts with it: list the request first.
    .sort((a, b) => a.at - b.at || nestRank(a.stage.kind) - nestRank(b.stage.kind) || a.index - b.index)
    .map(({ stage, at }) => ({ ...stage, startOffsetMs: Number.isFinite(at) ? Math.max(0, at - start) : 0 }));
  const count = (kind: StageKind) => stages.filter((stage) => stage.kind === kind).length;
  return {
    turn: builder.turn,
    ...(builder.prompt === undefined ? {} : { prompt: builder.prompt }),
    startedAt: new Date(start).toISOString(),
    durationMs: Math.max(0, end - start),
    stages,
    requests: builder.requests,
    retries: count('retry'),
    tools: count('tool'),
    compactions: Math.max(builder.compactionEvents, count('compaction')),
    approvalWaitMs: stages
      .filter((stage) => stage.kind === 'approval_wait')
      .reduce((sum, stage) => sum + stage.durationMs, 0),
    ...builder.tokens,
    subagents: builder.subagents,
  };
}

function nestRank(kind: StageKind): number {
  return kind === 'request' ? 0 : 1;
}

function sessionSummary(sessionId: string, model: string, turns: TurnTraceSummary[]): SessionTraceSummary {
  const tokens = emptyTokens();
  let requests = 0;
  let durationMs = 0;
  let approvalWaitMs = 0;
  for (const turn of turns) {
    addTokens(tokens, turn);
    requests += turn.requests;
    durationMs += turn.durationMs;
    approvalWaitMs += turn.approvalWaitMs;
  }
  const withSubagents = { ...tokens };
  for (const turn of turns) {
    for (const child of turn.subagents)
      if (child.summary) addTokens(withSubagents, child.summary.totalsWithSubagents);
  }
  const perTurn: TurnPoint[] = turns.map((turn) => ({
    turn: turn.turn,
    inputTokens: turn.inputTokens,
    outputTokens: turn.outputTokens,
    cacheReadTokens: turn.cacheReadTokens,
    cacheWriteTokens: turn.cacheWriteTokens,
    totalTokens: turn.inputTokens + turn.outputTokens + turn.cacheReadTokens + turn.cacheWriteTokens,
    ...(turn.reasoningTokens ? { reasoningTokens: turn.reasoningTokens } : {}),
    costUsd: turn.costUsd,
  }));
  return {
    sessionId,
    model,
    turns,
    totals: {
      ...tokens,
      turns: turns.filter((turn) => turn.turn > 0).length,
      requests,
      durationMs,
      approvalWaitMs,
      cacheHitRate: cacheHitRate(tokens),
    },
    totalsWithSubagents: withSubagents,
    perTurn,
  };
}

function addTokens(into: TokensAndCost, from: TokensAndCost): void {
  into.inputTokens += from.inputTokens;
  into.outputTokens += from.outputTokens;
  into.cacheReadTokens += from.cacheReadTokens;
  into.cacheWriteTokens += from.cacheWriteTokens;
  if (from.reasoningTokens) into.reasoningTokens = (into.reasoningTokens ?? 0) + from.reasoningTokens;
  into.costUsd += from.costUsd;
  into.costKnown &&= from.costKnown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
