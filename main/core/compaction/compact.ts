import type { EventOf, ModelPin, SessionEvent, Usage } from '../../common/events.js';
import {
  projectView,
  selectView,
  SUMMARY_PREFIX,
  UnknownCompactionError,
} from '../projection/projectPayload.js';
import type { Payload, ProjectionView } from '../../common/payload.js';
import { formatInstructions } from '../projection/instructions.js';
import { currentPlan, formatPlanHandle } from '../projection/plan.js';
import { visibleEvents } from '../projection/rewind.js';
import type { RetryOptions } from '../../providers/retry.js';
import type { ModelProvider, ToolSpec } from '../../providers/types.js';
import { selectRange } from './range.js';
import { summarizeEvents, summaryOutputTokens, SummaryError } from './summarize.js';
import {
  estimateEventTokens,
  estimateMessageTokens,
  estimatePayloadTokens,
  estimateToolTokens,
  lowSide,
  REPLY_PRIMING_TOKENS,
  type TokenEstimator,
} from './tokens.js';
import { measureContext, type ContextMeasure } from './trigger.js';

/** A compaction event before the log numbers it. */
export type CompactionDraft = Omit<EventOf<'compaction'>, 'seq' | 'at'>;

/** What the next request would look like: the projection view and what the provider last reported. */
export type MeasureRequestInput = {
  view: ProjectionView;
  /**
   * The events after a seq as they are in effect, read on demand instead of from `view.tail` (the turn's hook
   * passes a view without its tail: the measure then costs O(events since the provider's report)).
   */
  eventsAfter?: (seq: number) => readonly SessionEvent[];
  /** The payload as projected, instead of projecting `view` (the log's own projection, kept current). */
  payload?: () => Payload;
  lastUsage?: Usage;
  lastUsageSeq?: number;
  systemPrompt: string;
  tools: readonly ToolSpec[];
  estimator: TokenEstimator;
};

/**
 * Measures the next request of a session (see measureContext): the provider's last report plus the
 * events appended since; after a compaction newer than that report, the compaction's recorded size plus
 * the events appended after it; before any report, the whole projected payload with the tool definitions.
 */
export function measureNextRequest(input: MeasureRequestInput): ContextMeasure {
  const { view, estimator } = input;
  const compaction = view.compaction;
  return measureContext({
    ...(input.lastUsage ? { lastUsage: input.lastUsage } : {}),
    ...(input.lastUsageSeq !== undefined ? { lastUsageSeq: input.lastUsageSeq } : {}),
    ...(compaction ? { compactionSeq: compaction.seq } : {}),
    ...(compaction?.tokensAfter !== undefined ? { compactionTokensAfter: compaction.tokensAfter } : {}),
    appendedAfter: (seq) => {
      let total = 0;
      const events = input.eventsAfter ? input.eventsAfter(seq) : view.tail;
      for (const event of events) if (event.seq > seq) total += estimateEventTokens(event, estimator);
      // Instructions recorded since then head the next request (what they replace is not subtracted).
      if (view.instructions && view.instructions.seq > seq) total += instructionsTokens(view, estimator);
      return total;
    },
    payloadTokens: () =>
      estimatePayloadTokens(
        input.payload ? input.payload() : projectView(view, { system: input.systemPrompt }),
        estimator,
        input.tools,
      ),
  });
}

/** What buildCompaction needs: the whole log, the pinned model and its provider, and the request's fixed parts. */
export type BuildCompactionInput = {
  /** Every event of the session, in seq order. */
  events: readonly SessionEvent[];
  pin: ModelPin;
  provider: ModelProvider;
  estimator: TokenEstimator;
  systemPrompt: string;
  tools: readonly ToolSpec[];
  /** Fraction of the window kept verbatim. */
  keepRecent: number;
  /** The next request's size as measured now (measureNextRequest; recorded as the event's tokensBefore). */
  tokensBefore: number;
  /**
   * `auto` (the turn's hook) skips without asking the model when even a summary at its output cap could
   * not make the request smaller; `manual` (keel compact, the UI button) always asks and only drops a
   * summary that did not help.
   */
  mode: 'auto' | 'manual';
  /** Seq of a compaction to re-run over the same range (appended with `supersedes`). */
  rerun?: number;
  signal?: AbortSignal;
  retry?: Omit<RetryOptions, 'signal'>;
};

/** The outcome of building a compaction; nothing has been appended in any case. */
export type BuildCompactionOutcome =
  | { status: 'compacted'; event: CompactionDraft; requests: number; chunks: number }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string; aborted: boolean };

/**
 * Builds the next compaction without touching the log: picks the range (from the start through a safe
 * boundary, keeping the newest events within keepRecent × window), summarizes the ORIGINAL events of
 * the whole range with the session's model, and measures the payload before and after. Skips when no
 * safe boundary would make the request smaller; reports a failed or stopped summary as `failed`.
 * A re-run reuses the range of the compaction it supersedes and is never skipped for size.
 * Throws UnknownCompactionError if `rerun` names no compaction.
 */
export async function buildCompaction(input: BuildCompactionInput): Promise<BuildCompactionOutcome> {
  const { estimator, pin, tools, systemPrompt } = input;
  // A summary covers the conversation in effect: what a rewind set aside is never summarised.
  const events = visibleEvents(input.events);
  const view = selectView(events);
  const first = view.firstUserMessage;
  const pinned = first?.content ?? '';
  const tokensOf = (event: SessionEvent) => estimateEventTokens(event, estimator);

  let fromSeq: number;
  let through: number;
  let keptTokens: number;
  if (input.rerun !== undefined) {
    const target = events.find((event) => event.seq === input.rerun);
    if (target?.kind !== 'compaction') throw new UnknownCompactionError(input.rerun);
    through = target.through;
    fromSeq = target.fromSeq ?? firstMessageSeq(events);
    keptTokens = events.filter((event) => event.seq > through).reduce((sum, e) => sum + tokensOf(e), 0);
  } else {
    const range = selectRange({
      events,
      currentThrough: view.compaction?.through ?? 0,
      fromSeq: view.compaction?.fromSeq ?? firstMessageSeq(events),
      keepTokens: Math.floor(pin.contextWindow * input.keepRecent),
      tokensOf,
    });
    if (!range.ok) return { status: 'skipped', reason: range.reason };
    ({ fromSeq, through, keptTokens } = range);
    // Cheapest possible outcome: fixed parts + kept events + a summary at its cap. Not smaller: do not ask.
    const fixed =
      REPLY_PRIMING_TOKENS +
      estimateToolTokens(tools, estimator) +
      (systemPrompt.trim() === ''
        ? 0
        : estimateMessageTokens({ role: 'system', content: systemPrompt }, estimator)) +
      (first && first.seq <= through
        ? estimateMessageTokens({ role: 'user', content: pinned }, estimator)
        : 0) +
      instructionsTokens(view, estimator);
    const predicted = fixed + keptTokens + summaryOutputTokens(pin.contextWindow);
    if (input.mode === 'auto' && predicted >= input.tokensBefore) {
      return {
        status: 'skipped',
        reason: `no safe boundary gives a smaller request: keeping events after #${through} (${keptTokens} tokens) with a summary would take up to ${predicted} tokens, the request is ${input.tokensBefore} now`,
      };
    }
  }

  // The plan as of `through`: its todo calls are summarized away, so the projection re-states it as a handle.
  const plan = currentPlan(events.filter((event) => event.seq <= through))?.items;
  const planHandle = formatPlanHandle(plan);

  const originals = events.filter(
    (event) => event.seq >= fromSeq && event.seq <= through && event.kind !== 'compaction',
  );
  let summary: string;
  let requests: number;
  let chunks: number;
  let usage: Usage | undefined;
  try {
    ({ summary, requests, chunks, usage } = await summarizeEvents({
      events: originals,
      pinned,
      provider: input.provider,
      model: pin.model,
      contextWindow: pin.contextWindow,
      estimator,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.retry ? { retry: input.retry } : {}),
    }));
  } catch (error) {
    if (error instanceof SummaryError)
      return { status: 'failed', reason: error.message, aborted: error.aborted };
    return {
      status: 'failed',
      reason: error instanceof Error ? error.message : String(error),
      aborted: false,
    };
  }

  const draft: CompactionDraft = {
    kind: 'compaction',
    fromSeq,
    through,
    summary,
    pinned,
    tokensBefore: Math.max(0, Math.round(input.tokensBefore)),
    tokensAfter: 0,
    model: pin.model,
    ...(usage ? { usage } : {}),
    ...(input.rerun !== undefined ? { supersedes: input.rerun } : {}),
    ...(planHandle !== undefined && plan ? { plan } : {}),
  };
  const lastSeq = events[events.length - 1]?.seq ?? 0;
  const after: ProjectionView = {
    compaction: { ...draft, seq: lastSeq + 1, at: '' },
    ...(first ? { firstUserMessage: first } : {}),
    ...(view.instructions ? { instructions: view.instructions } : {}),
    ...(view.custom ? { custom: view.custom } : {}),
    tail: events.filter((event) => event.seq > through),
  };
  // Rebased on the measured size, so the estimate's error on everything kept (tool definitions, system
  // prompt, kept events) cancels out and tokensAfter can stand in for the provider's report until the next
  // request reports again. What was removed is counted on the low side and what was added (the summary
  // and the pinned goal) on the high side: an unknown tokenizer can only make it an over-count.
  const low = lowSide(estimator);
  const lowOf = (v: ProjectionView) =>
    estimatePayloadTokens(projectView(v, { system: systemPrompt }), low, tools);
  const added = [SUMMARY_PREFIX + summary, pinned, ...(planHandle === undefined ? [] : [planHandle])];
  const margin = added.reduce((sum, text) => sum + estimator.count(text) - low.count(text), 0);
  draft.tokensAfter = Math.max(0, Math.round(input.tokensBefore - lowOf(view) + lowOf(after) + margin));
  if (input.rerun === undefined && draft.tokensAfter >= input.tokensBefore) {
    return {
      status: 'skipped',
      reason: `the summary would not make the request smaller (${input.tokensBefore} tokens before, ${draft.tokensAfter} after); nothing was appended`,
    };
  }
  return { status: 'compacted', event: draft, requests, chunks };
}

/** Estimated tokens of the project instructions message the view's requests carry (0 without one). */
function instructionsTokens(view: ProjectionView, estimator: TokenEstimator): number {
  const text = view.instructions && formatInstructions(view.instructions);
  return text === undefined ? 0 : estimateMessageTokens({ role: 'system', content: text }, estimator);
}

/** The first seq a summary covers: the first event after session_created. */
function firstMessageSeq(events: readonly SessionEvent[]): number {
  return events.find((event) => event.kind !== 'session_created')?.seq ?? 1;
}
