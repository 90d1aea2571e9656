// The projection as it was before ProjectionFold (a one-pass projectTail over the view), kept as the
// reference the fold is checked against: same events, same payload, byte for byte.
import type {
  EventOf,
  ImageMimeType,
  ReasoningPart,
  SessionEvent,
  ToolCall,
} from '../../../../main/common/events.js';
import type { Payload, PayloadMessage, ProjectionView } from '../../../../main/common/payload.js';
import { HELD_BACK_TOOL } from '../../../../main/core/approvals/state.js';
import { formatCustomListed } from '../../../../main/core/projection/custom.js';
import { formatInstructions } from '../../../../main/core/projection/instructions.js';
import { formatPlanHandle } from '../../../../main/core/projection/plan.js';
import {
  CANCELLED_RESULT,
  CONVERSATION_START_NOTE,
  SUMMARY_PREFIX,
  backgroundEndNeedsNote,
  formatBackgroundEnded,
  formatFileStaged,
  formatHeldDenied,
  formatInterrupted,
  UnknownCompactionError,
  type ProjectOptions,
  type SelectViewOptions,
} from '../../../../main/core/projection/index.js';
import { visibleEvents } from '../../../../main/core/projection/rewind.js';

/**
 * Builds the view a projection needs from a full event list (seq order expected; sorted if not).
 * Compaction in effect: largest `through`, ties to the later seq, skipping `withoutCompaction`.
 * O(all events): the store builds the same view with index lookups instead.
 * Throws UnknownCompactionError if `withoutCompaction` names no compaction event.
 */
function selectView(events: readonly SessionEvent[], options: SelectViewOptions = {}): ProjectionView {
  // Events a rewind set aside are not part of the conversation (rewind.ts).
  const ordered = visibleEvents(isInSeqOrder(events) ? events : [...events].sort((a, b) => a.seq - b.seq));
  const skip = options.withoutCompaction;
  let skippedFound = false;
  let compaction: EventOf<'compaction'> | undefined;
  let firstUserMessage: EventOf<'user_message'> | undefined;
  let instructions: EventOf<'instructions_loaded'> | undefined;
  let custom: EventOf<'custom_listed'> | undefined;
  for (const event of ordered) {
    if (event.kind === 'user_message' && firstUserMessage === undefined) firstUserMessage = event;
    if (event.kind === 'instructions_loaded') instructions = event;
    if (event.kind === 'custom_listed') custom = event;
    if (event.kind !== 'compaction') continue;
    if (event.seq === skip) {
      skippedFound = true;
      continue;
    }
    // `>=` on through: among equal throughs the later event (a re-run) wins, as events are in seq order.
    if (compaction === undefined || event.through >= compaction.through) compaction = event;
  }
  if (skip !== undefined && !skippedFound) throw new UnknownCompactionError(skip);
  const through = compaction?.through ?? 0;
  const tail = ordered.filter((event) => event.seq > through);
  const view: ProjectionView = { tail };
  if (compaction !== undefined) view.compaction = compaction;
  if (firstUserMessage !== undefined) view.firstUserMessage = firstUserMessage;
  if (instructions !== undefined) view.instructions = instructions;
  if (custom !== undefined) view.custom = custom;
  return view;
}

/**
 * Projects a view to a provider payload in O(view.tail): it reads nothing but the view.
 * Guarantees validatePayload(result).ok, and prefix stability under appends (see README.md).
 */
function projectView(view: ProjectionView, options: ProjectOptions): Payload {
  const head: PayloadMessage[] = [];
  if (options.system.trim() !== '') head.push({ role: 'system', content: options.system });
  const instructions = view.instructions && formatInstructions(view.instructions);
  if (instructions !== undefined) head.push({ role: 'system', content: instructions });
  const custom = view.custom && formatCustomListed(view.custom);
  if (custom !== undefined) head.push({ role: 'system', content: custom });
  const compaction = view.compaction;
  const through = compaction?.through ?? 0;
  if (compaction !== undefined) {
    head.push({ role: 'system', content: SUMMARY_PREFIX + compaction.summary });
    // The plan the summary replaced the todo calls of: a handle, so the model keeps working from it.
    const plan = formatPlanHandle(compaction.plan);
    if (plan !== undefined) head.push({ role: 'system', content: plan });
    const first = view.firstUserMessage;
    // The pinned goal: repeated only when the summary swallowed it; after `through` it is in the tail.
    if (first !== undefined && first.seq <= through && hasText(first.content)) {
      head.push({ role: 'user', content: first.content });
    }
  }

  const blocks = projectTail(view.tail, through);

  const messages = head;
  let sawConversation = head.some((message) => message.role !== 'system');
  for (const block of blocks) {
    // Providers (Anthropic) require the conversation to open with a user turn.
    if (!sawConversation && block.message.role !== 'user') {
      messages.push({ role: 'user', content: CONVERSATION_START_NOTE });
    }
    sawConversation = true;
    messages.push(block.message);
    for (const slot of block.calls) {
      messages.push({
        role: 'tool',
        content: slot.answer ?? CANCELLED_RESULT,
        toolCallId: slot.payloadId,
        ...(slot.answer !== undefined && slot.images
          ? { images: slot.images.map((image) => ({ ...image })) }
          : {}),
      });
    }
  }
  return { messages };
}

/** Projects a full event list: projectView(selectView(events, options), options). O(all events). */
export function referenceProjectPayload(
  events: readonly SessionEvent[],
  options: ProjectOptions & SelectViewOptions,
): Payload {
  const selectOptions: SelectViewOptions = {};
  if (options.withoutCompaction !== undefined) selectOptions.withoutCompaction = options.withoutCompaction;
  return projectView(selectView(events, selectOptions), { system: options.system });
}

/** One call of an assistant message, answered by the first result that names it (else cancelled). */
type CallSlot = {
  payloadId: string;
  answer?: string;
  images?: { handle: string; mimeType: ImageMimeType }[];
};

/** A conversational message and, for the assistant, the slots its tool messages fill right after it. */
type Block = { message: PayloadMessage; calls: CallSlot[] };

/** One pass over the tail; results are placed in their call's slot, so nothing ever separates the two. */
function projectTail(tail: readonly SessionEvent[], through: number): Block[] {
  const blocks: Block[] = [];
  const usedCallIds = new Set<string>();
  // Call id -> the slots of the latest event that made a call with that id: results only look backwards.
  const openById = new Map<string, { seq: number; slots: CallSlot[] }>();
  // Requests of held-back commits (no model call answers them): a denial is told to the model.
  const heldRequests = new Map<number, EventOf<'approval_request'>>();

  const addAssistant = (
    seq: number,
    content: string,
    toolCalls: readonly ToolCall[],
    reasoning?: readonly ReasoningPart[],
    model?: string,
  ): void => {
    // Logged as the provider returned it, so replayed unchanged (signatures check the exact bytes).
    const withReasoning = reasoning?.length
      ? { reasoning: [...reasoning], ...(model !== undefined ? { reasoningModel: model } : {}) }
      : {};
    if (toolCalls.length === 0) {
      if (hasText(content))
        blocks.push({ message: { role: 'assistant', content, ...withReasoning }, calls: [] });
      return;
    }
    const calls: CallSlot[] = [];
    const payloadCalls: ToolCall[] = [];
    for (const call of toolCalls) {
      const payloadId = uniqueCallId(call.id, seq, usedCallIds);
      usedCallIds.add(payloadId);
      const slot: CallSlot = { payloadId };
      calls.push(slot);
      payloadCalls.push({ id: payloadId, name: call.name, arguments: call.arguments });
      const same = openById.get(call.id);
      if (same !== undefined && same.seq === seq) same.slots.push(slot);
      else openById.set(call.id, { seq, slots: [slot] });
    }
    blocks.push({
      message: { role: 'assistant', content, toolCalls: payloadCalls, ...withReasoning },
      calls,
    });
  };

  const answer = (
    toolCallId: string | undefined,
    content: string,
    images?: readonly { handle: string; mimeType: ImageMimeType }[],
  ): void => {
    if (toolCallId === undefined) return;
    // No slot: the call is not in the payload (before the compaction, or never made): an orphan, dropped.
    const slot = openById.get(toolCallId)?.slots.find((candidate) => candidate.answer === undefined);
    // Every slot answered: a duplicate result; the first one is kept.
    if (slot !== undefined) {
      slot.answer = content;
      if (images?.length) slot.images = images.map(({ handle, mimeType }) => ({ handle, mimeType }));
    }
  };

  for (const event of tail) {
    if (event.seq <= through) continue;
    switch (event.kind) {
      case 'user_message':
        if (hasText(event.content))
          blocks.push({ message: { role: 'user', content: event.content }, calls: [] });
        break;
      case 'assistant_message':
        addAssistant(event.seq, event.content, event.toolCalls, event.reasoning, event.model);
        break;
      case 'interrupted':
        // Its reasoning is not replayed: a block cut off mid-stream has no signature, and providers reject it.
        addAssistant(event.seq, formatInterrupted(event), event.toolCalls);
        break;
      case 'tool_result':
        answer(event.toolCallId, event.content, event.images);
        break;
      case 'subagent_result':
        answer(event.toolCallId, event.content);
        break;
      case 'file_staged':
        blocks.push({ message: { role: 'user', content: formatFileStaged(event) }, calls: [] });
        break;
      case 'background_exited':
        if (backgroundEndNeedsNote(event))
          blocks.push({ message: { role: 'user', content: formatBackgroundEnded(event) }, calls: [] });
        break;
      case 'approval_request':
        if (event.tool === HELD_BACK_TOOL) heldRequests.set(event.seq, event);
        break;
      case 'approval_denied': {
        const request = heldRequests.get(event.requestSeq);
        if (request !== undefined) {
          blocks.push({ message: { role: 'user', content: formatHeldDenied(request, event) }, calls: [] });
        }
        break;
      }
      default:
        // Approvals, tool_call_started, compactions, commits, model/policy changes, errors and
        // session_created are facts about the session, not messages; instructions_loaded is projected
        // in the head (the newest one), not where it sits in the log.
        break;
    }
  }
  return blocks;
}

/** Providers reject a repeated tool-call id in one request; a repeat gets a suffix derived from its event. */
function uniqueCallId(id: string, seq: number, used: ReadonlySet<string>): string {
  if (!used.has(id)) return id;
  const base = `${id}_ev${seq}`;
  let candidate = base;
  for (let n = 2; used.has(candidate); n++) candidate = `${base}_${n}`;
  return candidate;
}

/** Anthropic rejects user/assistant text that is empty or only whitespace. */
function hasText(content: string): boolean {
  return content.trim() !== '';
}

function isInSeqOrder(events: readonly SessionEvent[]): boolean {
  for (let i = 1; i < events.length; i++) {
    const previous = events[i - 1];
    const current = events[i];
    if (previous !== undefined && current !== undefined && previous.seq >= current.seq) return false;
  }
  return true;
}
