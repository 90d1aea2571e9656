import { describeBackgroundEnd } from '../../common/backgroundEvents.js';
import type { SessionEvent, Usage } from '../../common/events.js';
import type { Payload } from '../../common/payload.js';
import { ProviderError } from '../../providers/errors.js';
import { withRetries, type RetryOptions } from '../../providers/retry.js';
import type { ModelProvider } from '../../providers/types.js';
import { MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, type TokenEstimator } from './tokens.js';
import { formatAttachmentHandles } from '../projection/format.js';

/**
 * The fixed system text of every summary request. It never changes between requests, sessions or
 * versions of a session, holds no clock, id or path, and is never the main conversation's system
 * prompt: a summary request is a separate request and cannot disturb the conversation's cached prefix.
 */
export const SUMMARY_SYSTEM_PROMPT = [
  'You are the compaction summarizer of Keel, a coding agent. The early part of a long session is replaced by your summary: the agent reads it instead of the original events and must be able to continue the work from it.',
  'Write the summary in these sections, each under its own markdown heading, in this order:',
  "## Objective: what the user wants, in the user's own words (quote them).",
  '## Constraints: every rule or limit the user stated (for example "staging only", "do not touch migrations"), copied verbatim, one per line, even if it was said only once. Never drop, merge or soften one.',
  '## Decisions: what has been decided and why, so it is not reopened.',
  '## Work done: what is finished, with its results.',
  '## In flight: what was under way at the end of the events, and what is left to do.',
  '## Handles: file paths, artifact handles, commands and event numbers (#seq) where the details are; point to them instead of copying their content.',
  'Be specific: names, paths, numbers, error messages. Write only what the events show.',
  'When the input is several partial summaries of consecutive parts of one session, merge them into one summary with the same sections, keeping every objective quote, constraint and handle of every part.',
].join('\n');

/** The section headings a summary is asked for, in order. */
export const SUMMARY_SECTIONS = [
  'Objective',
  'Constraints',
  'Decisions',
  'Work done',
  'In flight',
  'Handles',
] as const;

/** Sizes of the summary requests for one context window. */
export type SummaryPlan = {
  /** Output cap of each summary request. */
  maxOutputTokens: number;
  /** Transcript tokens one request may carry (what is left of the window after the fixed parts). */
  chunkTokens: number;
  /** The objective as quoted in summary requests (clipped only if it alone would crowd the window). */
  objective: string;
};

/** Part of the window a summary request may fill; the rest absorbs the estimate's error. */
const REQUEST_SHARE = 0.85;
/** Smallest transcript chunk worth a request. */
const MIN_CHUNK_TOKENS = 120;

/** The output cap for summaries: 12% of the window, at least 200 and at most 4,096 tokens. */
export function summaryOutputTokens(contextWindow: number): number {
  return Math.max(200, Math.min(4096, Math.floor(contextWindow * 0.12)));
}

/** Keeps the head and the tail of `text` within `maxChars`, saying what was left out and where it is. */
export function clipText(text: string, maxChars: number, where: string): string {
  if (text.length <= maxChars) return text;
  const head = Math.max(0, Math.floor(maxChars * 0.7));
  const tail = Math.max(0, maxChars - head);
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${omitted} characters omitted; the full text is ${where}]\n${tail > 0 ? text.slice(-tail) : ''}`;
}

/**
 * Plans the summary requests for a window: the output cap, and how many transcript tokens fit beside
 * the fixed system text and the quoted objective. Throws if the window cannot hold a useful request.
 */
export function planSummary(contextWindow: number, pinned: string, estimator: TokenEstimator): SummaryPlan {
  const maxOutputTokens = summaryOutputTokens(contextWindow);
  const objectiveBudget = Math.floor(contextWindow * 0.2);
  let objective = pinned;
  // maxChars shrinks on every pass, so this ends even when the clipping note alone exceeds the budget.
  for (let maxChars = pinned.length; maxChars > 0 && estimator.count(objective) > objectiveBudget;) {
    maxChars = Math.floor(maxChars * 0.7);
    objective = clipText(pinned, maxChars, 'the first user message');
  }
  const fixed =
    REPLY_PRIMING_TOKENS +
    2 * MESSAGE_OVERHEAD_TOKENS +
    estimator.count(SUMMARY_SYSTEM_PROMPT) +
    estimator.count(requestHeader(objective, 1, 1, { index: 1, count: 1 }));
  const chunkTokens = Math.floor(contextWindow * REQUEST_SHARE) - maxOutputTokens - fixed;
  if (chunkTokens < MIN_CHUNK_TOKENS) {
    throw new Error(
      `a context window of ${contextWindow} tokens is too small to summarize in (it leaves ${chunkTokens} tokens for the events)`,
    );
  }
  return { maxOutputTokens, chunkTokens, objective };
}

/**
 * One event as a transcript entry: `#seq who: text`, with tool calls, results, approvals and other facts
 * rendered as handles. No timestamps and no call ids or session ids (only seqs, which never change), so
 * the same events always render to the same bytes. Compactions and session_created render to nothing:
 * a summary is always made from original events, never from an earlier summary.
 */
export function renderEvent(event: SessionEvent, maxChars: number): string | undefined {
  const at = `event #${event.seq}`;
  const text = (value: string) => clipText(value, maxChars, at);
  const calls = (list: readonly { name: string; arguments: string }[]) =>
    list
      .map((call) => `\n  → ${call.name} ${clipText(call.arguments, Math.min(maxChars, 2000), at)}`)
      .join('');
  switch (event.kind) {
    case 'user_message':
      return `#${event.seq} user: ${text(event.content)}${formatAttachmentHandles(event.attachments)}`;
    case 'assistant_message':
      return `#${event.seq} assistant: ${text(event.content)}${calls(event.toolCalls)}`;
    case 'interrupted':
      return `#${event.seq} assistant (interrupted${event.reason ? `: ${event.reason}` : ''}): ${text(event.content)}${calls(event.toolCalls)}`;
    case 'tool_result': {
      const facts = [
        event.isError ? 'error' : undefined,
        event.exitCode !== undefined && event.exitCode !== null ? `exit ${event.exitCode}` : undefined,
        event.artifact ? `artifact ${event.artifact}` : undefined,
        event.diff ? 'diff recorded' : undefined,
      ].filter((fact): fact is string => fact !== undefined);
      return `#${event.seq} result of ${event.tool ?? 'tool'}${facts.length ? ` (${facts.join(', ')})` : ''}: ${text(event.content)}`;
    }
    case 'approval_request':
      return `#${event.seq} approval asked for ${event.tool} ${clipText(event.arguments, Math.min(maxChars, 2000), at)}${event.reason ? ` (${event.reason})` : ''}`;
    case 'approval_granted':
      return `#${event.seq} the user approved request #${event.requestSeq} (scope ${event.scope})`;
    case 'approval_denied':
      return `#${event.seq} the user denied request #${event.requestSeq}${event.reason ? `: ${text(event.reason)}` : ''}`;
    case 'approval_revoked':
      return `#${event.seq} the user revoked grant #${event.grantSeq}${event.reason ? `: ${event.reason}` : ''}`;
    case 'file_staged':
      return `#${event.seq} file staged: ${event.path} (${event.size} bytes${event.mediaType ? `, ${event.mediaType}` : ''})`;
    // Issue #32: which background commands run and how they ended, so a summary keeps what is still running.
    case 'background_started':
      return `#${event.seq} background command ${event.handle} started: ${clipText(event.command, Math.min(maxChars, 2000), at)}`;
    case 'background_exited':
      return `#${event.seq} background command ${event.handle} is not running: ${describeBackgroundEnd(event)}`;
    case 'persistent_commit':
      return `#${event.seq} committed to ${event.dir}: ${event.files.map((file) => file.path).join(', ')}${event.diffArtifact ? ` (diff: artifact ${event.diffArtifact})` : ''}`;
    case 'subagent_started':
      return `#${event.seq} subagent ${event.childId} started (tools: ${event.tools.join(', ')}): ${text(event.task)}`;
    case 'subagent_result':
      return `#${event.seq} subagent ${event.childId} returned${event.outOfBudget ? ' (out of budget)' : ''}: ${text(event.content)}`;
    case 'model_changed':
      return `#${event.seq} model switched to ${event.provider}:${event.model}`;
    case 'reasoning_changed':
      return `#${event.seq} reasoning effort set to ${event.effort}`;
    case 'policy_changed':
      return `#${event.seq} approval policy set to ${event.policy}`;
    case 'error':
      return `#${event.seq} error${event.code ? ` (${event.code})` : ''}: ${text(event.message)}`;
    case 'tool_call_started':
    case 'compaction':
    case 'session_created':
    case 'instructions_loaded':
      return undefined;
  }
}

/** One rendered event with its estimated tokens. */
export type TranscriptEntry = { seq: number; text: string; tokens: number };

/**
 * Renders events to transcript entries, each small enough for one request: an entry that alone would
 * exceed `chunkTokens` is clipped further (head and tail kept, the event's seq named).
 */
export function renderTranscript(
  events: readonly SessionEvent[],
  chunkTokens: number,
  estimator: TokenEstimator,
): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const event of events) {
    let maxChars = chunkTokens * 3;
    let text = renderEvent(event, maxChars);
    if (text === undefined) continue;
    let tokens = estimator.count(text) + 1;
    while (tokens > chunkTokens && maxChars > 64) {
      maxChars = Math.floor(maxChars * 0.6);
      text = renderEvent(event, maxChars) ?? '';
      tokens = estimator.count(text) + 1;
    }
    entries.push({ seq: event.seq, text, tokens });
  }
  return entries;
}

/** Packs entries in order into chunks of at most `chunkTokens` (an entry never splits). */
export function chunkEntries<T extends { tokens: number }>(
  entries: readonly T[],
  chunkTokens: number,
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const entry of entries) {
    if (current.length > 0 && size + entry.tokens > chunkTokens) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(entry);
    size += entry.tokens;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function requestHeader(
  objective: string,
  fromSeq: number,
  through: number,
  part: { index: number; count: number },
): string {
  const which = part.count > 1 ? ` (part ${part.index} of ${part.count})` : '';
  return `The session's objective (its first user message, verbatim):\n<<<\n${objective}\n>>>\n\nEvents #${fromSeq}–#${through}${which}:\n`;
}

/** The request that summarizes one run of original events. Deterministic: same events, same bytes. */
export function buildRangeRequest(
  objective: string,
  entries: readonly TranscriptEntry[],
  part: { index: number; count: number } = { index: 1, count: 1 },
): Payload {
  const fromSeq = entries[0]?.seq ?? 0;
  const through = entries[entries.length - 1]?.seq ?? 0;
  const transcript = entries.map((entry) => entry.text).join('\n');
  return {
    messages: [
      { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
      { role: 'user', content: requestHeader(objective, fromSeq, through, part) + transcript },
    ],
  };
}

/** A summary of consecutive original events made in this compaction, the input of a merge. */
export type PartialSummary = { fromSeq: number; through: number; summary: string; tokens: number };

/** The request that merges partial summaries (made from originals in this same compaction) into one. */
export function buildMergeRequest(objective: string, parts: readonly PartialSummary[]): Payload {
  const fromSeq = parts[0]?.fromSeq ?? 0;
  const through = parts[parts.length - 1]?.through ?? 0;
  const body = parts
    .map((part, i) => `### Part ${i + 1}: events #${part.fromSeq}–#${part.through}\n${part.summary}`)
    .join('\n\n');
  return {
    messages: [
      { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
      {
        role: 'user',
        content: `The session's objective (its first user message, verbatim):\n<<<\n${objective}\n>>>\n\nPartial summaries of events #${fromSeq}–#${through}, in order; merge them into one summary:\n\n${body}`,
      },
    ],
  };
}

/** What summarizeEvents needs. */
export type SummarizeInput = {
  /** The original events of the whole range, in seq order. */
  events: readonly SessionEvent[];
  /** The first user message, quoted in every request as the objective. */
  pinned: string;
  provider: ModelProvider;
  model: string;
  contextWindow: number;
  estimator: TokenEstimator;
  signal?: AbortSignal;
  retry?: Omit<RetryOptions, 'signal'>;
};

/** A finished summary and how many model requests it took. */
export type SummaryResult = {
  summary: string;
  requests: number;
  chunks: number;
  /** The summary requests' usage summed, where the provider reported it (#31: compaction is spend too). */
  usage?: Usage;
};

/** Thrown when a summary request fails, returns nothing, or is stopped; the log has not been touched. */
export class SummaryError extends Error {
  constructor(
    message: string,
    /** True when the request was stopped by the user (the turn's signal). */
    readonly aborted: boolean,
  ) {
    super(message);
    this.name = 'SummaryError';
  }
}

/**
 * Summarizes original events with the session's own model: in one request when they fit the window,
 * else chunk by chunk (each chunk from originals) and then by merging those chunk summaries, in groups
 * that fit, until one is left. Never reads an earlier compaction's summary. Throws SummaryError.
 */
export async function summarizeEvents(input: SummarizeInput): Promise<SummaryResult> {
  const { estimator } = input;
  const plan = planSummary(input.contextWindow, input.pinned, estimator);
  const entries = renderTranscript(input.events, plan.chunkTokens, estimator);
  if (entries.length === 0) throw new SummaryError('the range has no events to summarize', false);
  const chunks = chunkEntries(entries, plan.chunkTokens);
  let requests = 0;
  let usage: Usage | undefined;
  const ask = async (payload: Payload): Promise<string> => {
    requests++;
    const answer = await requestSummary(input, payload, plan.maxOutputTokens);
    if (answer.usage) usage = addUsage(usage, answer.usage);
    return answer.text;
  };

  let parts: PartialSummary[] = [];
  for (const [i, chunk] of chunks.entries()) {
    const summary = await ask(
      buildRangeRequest(plan.objective, chunk, { index: i + 1, count: chunks.length }),
    );
    parts.push({
      fromSeq: chunk[0]?.seq ?? 0,
      through: chunk[chunk.length - 1]?.seq ?? 0,
      summary,
      tokens: estimator.count(summary) + 16,
    });
  }
  while (parts.length > 1) {
    let groups = chunkEntries(parts, plan.chunkTokens);
    // Summaries longer than their cap (a provider that ignores it): merge pairwise so this still ends.
    if (groups.length === parts.length) groups = pairUp(parts);
    const merged: PartialSummary[] = [];
    for (const group of groups) {
      if (group.length === 1) {
        merged.push(group[0] as PartialSummary);
        continue;
      }
      const summary = await ask(buildMergeRequest(plan.objective, group));
      merged.push({
        fromSeq: group[0]?.fromSeq ?? 0,
        through: group[group.length - 1]?.through ?? 0,
        summary,
        tokens: estimator.count(summary) + 16,
      });
    }
    parts = merged;
  }
  return {
    summary: (parts[0] as PartialSummary).summary,
    requests,
    chunks: chunks.length,
    ...(usage ? { usage } : {}),
  };
}

function pairUp<T>(items: readonly T[]): T[][] {
  const pairs: T[][] = [];
  for (let i = 0; i < items.length; i += 2) pairs.push(items.slice(i, i + 2));
  return pairs;
}

/** Two usages added, kind by kind (an estimate in either makes the sum one). */
function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return { ...b };
  const sum = (x: number | undefined, y: number | undefined) =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  const cacheRead = sum(a.cacheReadTokens, b.cacheReadTokens);
  const cacheWrite = sum(a.cacheWriteTokens, b.cacheWriteTokens);
  const reasoning = sum(a.reasoningTokens, b.reasoningTokens);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cacheRead === undefined ? {} : { cacheReadTokens: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteTokens: cacheWrite }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
    ...(a.estimated || b.estimated ? { estimated: true as const } : {}),
  };
}

async function requestSummary(
  input: SummarizeInput,
  payload: Payload,
  maxOutputTokens: number,
): Promise<{ text: string; usage?: Usage }> {
  const signal = input.signal;
  let text = '';
  let usage: Usage | undefined;
  try {
    const stream = withRetries(
      () =>
        input.provider.stream({
          payload,
          tools: [],
          model: input.model,
          maxOutputTokens,
          ...(signal ? { signal } : {}),
        }),
      { ...input.retry, ...(signal ? { signal } : {}) },
    );
    for await (const event of stream) {
      if (event.type === 'done') {
        text = event.message.content;
        usage = event.message.usage;
      }
    }
  } catch (error) {
    const aborted = signal?.aborted === true || (error instanceof ProviderError && error.code === 'aborted');
    const reason = error instanceof Error ? error.message : String(error);
    throw new SummaryError(
      aborted ? 'the summary request was stopped' : `the summary request failed: ${reason}`,
      aborted,
    );
  }
  if (signal?.aborted) throw new SummaryError('the summary request was stopped', true);
  if (text.trim() === '') throw new SummaryError('the model returned an empty summary', false);
  return { text: text.trim(), ...(usage ? { usage } : {}) };
}
