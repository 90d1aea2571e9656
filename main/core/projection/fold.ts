import type { EventOf, ReasoningPart, SessionEvent, ToolCall, ToolImage } from '../../common/events.js';
import type { Payload, PayloadMessage, ProjectionView } from '../../common/payload.js';
import { HELD_BACK_TOOL } from '../approvals/state.js';
import { formatCustomListed } from './custom.js';
import { formatInstructions } from './instructions.js';
import { formatPlanHandle } from './plan.js';
import { selectView } from './view.js';
import {
  CANCELLED_RESULT,
  CONVERSATION_START_NOTE,
  backgroundEndNeedsNote,
  formatBackgroundEnded,
  SUMMARY_PREFIX,
  formatAttachmentHandles,
  formatFileStaged,
  formatHookContext,
  formatResourceUpdated,
  formatHeldDenied,
  formatInterrupted,
  type ProjectOptions,
} from './format.js';
import {
  continueValidation,
  validatePayload,
  type PayloadValidation,
  type ValidationCursor,
} from './validate.js';

/** Version of `ProjectionFoldState`: a snapshot of another version is rebuilt from events, never read. */
export const FOLD_STATE_VERSION = 4;

/** A call of the body still waiting for its result: the body indexes of its unanswered tool messages, in order. */
type OpenCall = { seq: number; slots: number[] };

/**
 * The serialisable state of a ProjectionFold (what a projection snapshot stores). `body` is the conversation
 * after the head, tool messages included (a cancelled one until its result arrives); `open` maps a call id to
 * the seq of the latest event that made it and the body indexes still unanswered; `held` are the requests of
 * held-back commits a denial is told for.
 */
export type ProjectionFoldState = {
  version: number;
  lastSeq: number;
  compaction?: EventOf<'compaction'>;
  firstUserMessage?: EventOf<'user_message'>;
  instructions?: EventOf<'instructions_loaded'>;
  custom?: EventOf<'custom_listed'>;
  body: PayloadMessage[];
  open: [string, number, number[]][];
  held: EventOf<'approval_request'>[];
  /**
   * Body indexes of tool messages with images and user messages with attachments (each payload gets its own
   * copies: the turn attaches bytes).
   */
  imageSlots: number[];
  bytes: number;
};

/**
 * The projection of a log kept current event by event: `payload` equals `projectView` of the log's view at
 * `lastSeq`, byte for byte, and `apply` extends it with the next event in O(that event). Built from a view
 * (O(view.tail)) or from a snapshot of its state. An event that changes what the whole projection is built
 * from (a `rewound`, or a compaction that takes effect) is refused (`apply` returns false): the caller builds
 * a new fold from the log's view then. Body messages are frozen and shared by every payload it returns.
 */
export class ProjectionFold {
  private usedCallIds: Set<string> | undefined;
  private cursor: (ValidationCursor & { started: boolean }) | undefined;
  private readonly open: Map<string, OpenCall>;
  private readonly held: Map<number, EventOf<'approval_request'>>;

  private constructor(private readonly state: ProjectionFoldState) {
    this.open = new Map(state.open.map(([id, seq, slots]) => [id, { seq, slots: [...slots] }]));
    this.held = new Map(state.held.map((request) => [request.seq, request]));
  }

  /** The fold of a view (what `projectView(view)` projects). */
  static fromView(view: ProjectionView): ProjectionFold {
    const fold = new ProjectionFold({
      version: FOLD_STATE_VERSION,
      lastSeq: 0,
      ...(view.compaction ? { compaction: view.compaction } : {}),
      ...(view.firstUserMessage ? { firstUserMessage: view.firstUserMessage } : {}),
      ...(view.instructions ? { instructions: view.instructions } : {}),
      ...(view.custom ? { custom: view.custom } : {}),
      body: [],
      open: [],
      held: [],
      imageSlots: [],
      bytes: 0,
    });
    fold.usedCallIds = new Set();
    const through = view.compaction?.through ?? 0;
    let last = Math.max(
      view.compaction?.seq ?? 0,
      view.instructions?.seq ?? 0,
      view.custom?.seq ?? 0,
      view.firstUserMessage?.seq ?? 0,
    );
    for (const event of view.tail) {
      if (event.seq > through) fold.foldEvent(event);
      last = Math.max(last, event.seq);
    }
    fold.state.lastSeq = last;
    return fold;
  }

  /** The fold of a whole log (rewinds and compactions resolved as `selectView` does). */
  static fromEvents(events: readonly SessionEvent[]): ProjectionFold {
    const fold = ProjectionFold.fromView(selectView(events));
    const newest = events.at(-1)?.seq ?? 0;
    if (newest > fold.state.lastSeq) fold.state.lastSeq = newest;
    return fold;
  }

  /**
   * A fold from a stored state; throws when it is not one this version wrote (the caller rebuilds from
   * events). Checks the shape of every body message, not where it came from: the snapshot's hash does that.
   */
  static fromState(state: unknown): ProjectionFold {
    const s = state as ProjectionFoldState;
    const ok =
      typeof s === 'object' &&
      s !== null &&
      s.version === FOLD_STATE_VERSION &&
      Number.isInteger(s.lastSeq) &&
      Array.isArray(s.body) &&
      Array.isArray(s.open) &&
      Array.isArray(s.held) &&
      Array.isArray(s.imageSlots) &&
      s.imageSlots.every(
        (slot) =>
          Number.isInteger(slot) &&
          (Array.isArray(s.body[slot]?.images) || Array.isArray(s.body[slot]?.attachments)),
      ) &&
      typeof s.bytes === 'number' &&
      s.body.every(isMessage) &&
      s.open.every((o) => isOpenCall(o, s.body));
    if (!ok) throw new Error('not a projection state of this version');
    for (const message of s.body) Object.freeze(message);
    return new ProjectionFold(s);
  }

  /** Seq of the newest event folded in. */
  get lastSeq(): number {
    return this.state.lastSeq;
  }

  /** Messages after the head (what a snapshot is worth writing for). */
  get size(): number {
    return this.state.body.length;
  }

  /** Rough size of the body's text, for a cache's memory budget. */
  get bytes(): number {
    return this.state.bytes;
  }

  /** The compaction, first user message and instructions in effect (what the head is built from). */
  get head(): Omit<ProjectionView, 'tail'> {
    const { compaction, firstUserMessage, instructions, custom } = this.state;
    return {
      ...(compaction ? { compaction } : {}),
      ...(firstUserMessage ? { firstUserMessage } : {}),
      ...(instructions ? { instructions } : {}),
      ...(custom ? { custom } : {}),
    };
  }

  /** The state to store; shares the fold's objects, so serialise it before the next `apply`. */
  toState(): ProjectionFoldState {
    return {
      ...this.state,
      open: [...this.open].map(([id, call]): [string, number, number[]] => [id, call.seq, call.slots]),
      held: [...this.held.values()],
    };
  }

  /**
   * Folds in the next event (seq must be greater than `lastSeq`). Returns false, changing nothing, for an
   * event after which the projection must be rebuilt from the log's view: a `rewound`, or a compaction that
   * takes effect (largest `through`, ties to the later one).
   */
  apply(event: SessionEvent): boolean {
    const { state } = this;
    if (event.seq <= state.lastSeq) throw new Error(`event ${event.seq} is already in the projection`);
    if (event.kind === 'rewound') return false;
    if (event.kind === 'compaction' && (!state.compaction || event.through >= state.compaction.through)) {
      return false;
    }
    this.foldEvent(event);
    state.lastSeq = event.seq;
    return true;
  }

  /** The payload, equal to `projectView` of the log's view at `lastSeq`. O(messages) to copy, no re-projection. */
  payload(options: ProjectOptions): Payload {
    const head = this.headMessages(options.system);
    const body = this.state.body;
    const sawConversation = head.some((message) => message.role !== 'system');
    // Providers (Anthropic) require the conversation to open with a user turn.
    const note = !sawConversation && body.length > 0 && body[0]?.role !== 'user';
    if (note) head.push({ role: 'user', content: CONVERSATION_START_NOTE });
    const messages = head.concat(body);
    // The turn writes each image's bytes into its payload: those few messages are copies, never the fold's.
    for (const slot of this.state.imageSlots) {
      const message = body[slot] as PayloadMessage;
      messages[head.length + slot] = message.attachments
        ? { ...message, attachments: message.attachments.map((file) => ({ ...file })) }
        : { ...message, images: (message.images ?? []).map((image) => ({ ...image })) };
    }
    return { messages };
  }

  /**
   * validatePayload of a payload this fold returned (optionally with an environment added): the head is
   * checked whole, the body only from where the last check stopped (its messages are frozen, and a result
   * filling a cancelled slot keeps that message's role and call id). Any other payload is checked whole.
   */
  validate(payload: Payload): PayloadValidation {
    const body = this.state.body;
    const offset = payload.messages.length - body.length;
    const same = (index: number): boolean => {
      const given = payload.messages[offset + index];
      const kept = body[index];
      // A message with images is a copy (payload): the same call id and content stand for the same message.
      if (given === kept) return true;
      if (given?.attachments !== undefined) return given.content === kept?.content;
      return given?.images !== undefined && given.toolCallId === kept?.toolCallId;
    };
    const ours = offset >= 0 && (body.length === 0 || (same(0) && same(body.length - 1)));
    if (!ours) return validatePayload(payload);
    const headCursor: ValidationCursor = {
      index: 0,
      seenCallIds: new Set(),
      conversationStarted: false,
      problems: [],
    };
    const head = payload.messages.slice(0, offset);
    continueValidation(head, headCursor);
    if (this.cursor === undefined || this.cursor.started !== headCursor.conversationStarted) {
      this.cursor = {
        index: 0,
        seenCallIds: new Set(),
        conversationStarted: headCursor.conversationStarted,
        problems: [],
        started: headCursor.conversationStarted,
      };
    }
    continueValidation(body, this.cursor);
    const problems = [
      ...headCursor.problems,
      ...this.cursor.problems.map((problem) => ({ ...problem, index: problem.index + offset })),
    ];
    if (payload.environment !== undefined && payload.environment.trim() === '') {
      problems.push({
        index: payload.messages.length,
        message: 'the environment block is blank (Anthropic rejects blank text)',
      });
    }
    return problems.length === 0 ? { ok: true } : { ok: false, problems };
  }

  private headMessages(system: string): PayloadMessage[] {
    const { compaction, instructions, custom, firstUserMessage } = this.state;
    const head: PayloadMessage[] = [];
    if (system.trim() !== '') head.push({ role: 'system', content: system });
    const formatted = instructions && formatInstructions(instructions);
    if (formatted !== undefined) head.push({ role: 'system', content: formatted });
    const listed = custom && formatCustomListed(custom);
    if (listed !== undefined) head.push({ role: 'system', content: listed });
    if (compaction !== undefined) {
      head.push({ role: 'system', content: SUMMARY_PREFIX + compaction.summary });
      // The plan the summary replaced the todo calls of: a handle, so the model keeps working from it.
      const plan = formatPlanHandle(compaction.plan);
      if (plan !== undefined) head.push({ role: 'system', content: plan });
      // The pinned goal: repeated only when the summary swallowed it; after `through` it is in the body.
      if (
        firstUserMessage !== undefined &&
        firstUserMessage.seq <= compaction.through &&
        hasText(firstUserMessage.content)
      ) {
        // Its files are not re-sent once the summary swallowed their turn: their handles stay named.
        head.push({
          role: 'user',
          content:
            firstUserMessage.content +
            formatAttachmentHandles(firstUserMessage.attachments, 'attached earlier, not re-sent'),
        });
      }
    }
    return head;
  }

  private push(message: PayloadMessage): number {
    this.state.bytes += message.content.length;
    return this.state.body.push(Object.freeze(message)) - 1;
  }

  /** One event of the conversation after `through`; results fill their call's slot, so nothing separates them. */
  private foldEvent(event: SessionEvent): void {
    const { state, held } = this;
    if (event.kind === 'user_message' && state.firstUserMessage === undefined) state.firstUserMessage = event;
    switch (event.kind) {
      case 'user_message':
        if (event.attachments?.length) {
          // A prompt's files ride with it (handles only: the turn reads the bytes for the request).
          const attachments = event.attachments.map(({ handle, mimeType, name }) => ({
            handle,
            mimeType,
            ...(name !== undefined ? { name } : {}),
          }));
          state.imageSlots.push(this.push({ role: 'user', content: event.content, attachments }));
        } else if (hasText(event.content)) this.push({ role: 'user', content: event.content });
        break;
      case 'assistant_message':
        this.addAssistant(event.seq, event.content, event.toolCalls, event.reasoning, event.model);
        break;
      case 'interrupted':
        // Its reasoning is not replayed: a block cut off mid-stream has no signature, and providers reject it.
        this.addAssistant(event.seq, formatInterrupted(event), event.toolCalls);
        break;
      case 'tool_result':
        this.answer(event.toolCallId, event.content, event.images, event.isError);
        break;
      case 'subagent_result':
        this.answer(event.toolCallId, event.content);
        break;
      case 'file_staged':
        this.push({ role: 'user', content: formatFileStaged(event) });
        break;
      case 'background_exited':
        // Issue #32: an end no call's result told (a stop, a crash, an exit between turns) is said where it sits.
        if (backgroundEndNeedsNote(event)) this.push({ role: 'user', content: formatBackgroundEnded(event) });
        break;
      case 'hook_ran':
        // A PostToolUse hook's words ride in its call's result (turn/hookSteps.ts); the others' are a user turn.
        // A refused prompt's reason is the user's to read (the prompt itself was never recorded).
        if (
          event.context !== undefined &&
          event.event !== 'PostToolUse' &&
          event.decision !== 'deny' &&
          !(event.event === 'UserPromptSubmit' && event.decision === 'block')
        )
          this.push({ role: 'user', content: formatHookContext(event) });
        break;
      case 'mcp_resource_updated':
        this.push({ role: 'user', content: formatResourceUpdated(event) });
        break;
      case 'approval_request':
        if (event.tool === HELD_BACK_TOOL) held.set(event.seq, event);
        break;
      case 'approval_denied': {
        const request = held.get(event.requestSeq);
        if (request !== undefined) this.push({ role: 'user', content: formatHeldDenied(request, event) });
        break;
      }
      case 'instructions_loaded':
        // Projected in the head (the newest one), not where it sits in the log.
        state.instructions = event;
        break;
      case 'custom_listed':
        // Projected in the head (the newest one), like the instructions.
        state.custom = event;
        break;
      default:
        // Approvals, tool_call_started, compactions not in effect, commits, model/policy changes, errors and
        // session_created are facts about the session, not messages.
        break;
    }
  }

  private addAssistant(
    seq: number,
    content: string,
    toolCalls: readonly ToolCall[],
    reasoning?: readonly ReasoningPart[],
    model?: string,
  ): void {
    // Logged as the provider returned it, so replayed unchanged (signatures check the exact bytes).
    const withReasoning = reasoning?.length
      ? { reasoning: [...reasoning], ...(model !== undefined ? { reasoningModel: model } : {}) }
      : {};
    if (toolCalls.length === 0) {
      if (hasText(content)) this.push({ role: 'assistant', content, ...withReasoning });
      return;
    }
    const { open } = this;
    const used = this.callIds();
    const payloadCalls: ToolCall[] = [];
    const payloadIds: string[] = [];
    for (const call of toolCalls) {
      const payloadId = uniqueCallId(call.id, seq, used);
      used.add(payloadId);
      payloadIds.push(payloadId);
      payloadCalls.push({ id: payloadId, name: call.name, arguments: call.arguments });
    }
    this.push({ role: 'assistant', content, toolCalls: payloadCalls, ...withReasoning });
    toolCalls.forEach((call, i) => {
      const slot = this.push({
        role: 'tool',
        content: CANCELLED_RESULT,
        toolCallId: payloadIds[i],
      });
      // A result answers the latest event that made a call with its id.
      const same = open.get(call.id);
      if (same !== undefined && same.seq === seq) same.slots.push(slot);
      else open.set(call.id, { seq, slots: [slot] });
    });
  }

  private answer(
    toolCallId: string | undefined,
    content: string,
    images?: readonly ToolImage[],
    isError?: boolean,
  ): void {
    const { open } = this;
    if (toolCallId === undefined) return;
    // No open slot: the call is not in the payload (before the compaction, or never made), or every slot was
    // answered already (a duplicate result: the first one is kept). Either way the result is dropped.
    const call = open.get(toolCallId);
    const slot = call?.slots.shift();
    if (call === undefined || slot === undefined) return;
    if (call.slots.length === 0) open.delete(toolCallId);
    const cancelled = this.state.body[slot] as PayloadMessage;
    this.state.bytes += content.length - cancelled.content.length;
    const shown = images?.length
      ? { images: images.map(({ handle, mimeType }) => ({ handle, mimeType })) }
      : {};
    this.state.body[slot] = Object.freeze({
      role: 'tool',
      content,
      toolCallId: cancelled.toolCallId as string,
      ...(isError ? { isError: true as const } : {}),
      ...shown,
    });
    if (images?.length) this.state.imageSlots.push(slot);
  }

  /** Call ids already in the body (providers reject a repeated one); rebuilt once after a snapshot is read. */
  private callIds(): Set<string> {
    if (this.usedCallIds === undefined) {
      const used = new Set<string>();
      for (const message of this.state.body) for (const call of message.toolCalls ?? []) used.add(call.id);
      this.usedCallIds = used;
    }
    return this.usedCallIds;
  }
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

const ROLES: ReadonlySet<unknown> = new Set(['system', 'user', 'assistant', 'tool']);

function isMessage(value: unknown): value is PayloadMessage {
  const message = value as PayloadMessage;
  return (
    typeof message === 'object' &&
    message !== null &&
    ROLES.has(message.role) &&
    typeof message.content === 'string' &&
    (message.toolCalls === undefined || Array.isArray(message.toolCalls)) &&
    (message.images === undefined || Array.isArray(message.images)) &&
    (message.attachments === undefined || Array.isArray(message.attachments)) &&
    (message.reasoning === undefined || Array.isArray(message.reasoning))
  );
}

/** An open call of a stored state: its unanswered slots are tool messages of the body. */
function isOpenCall(value: unknown, body: readonly PayloadMessage[]): boolean {
  const [id, seq, slots] = value as [unknown, unknown, unknown];
  return (
    Array.isArray(value) &&
    typeof id === 'string' &&
    Number.isInteger(seq) &&
    Array.isArray(slots) &&
    slots.every((slot) => Number.isInteger(slot) && body[slot as number]?.role === 'tool')
  );
}
