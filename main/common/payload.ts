import type { AttachmentMimeType } from './attachments.js';
import type { EventOf, ImageMimeType, ReasoningPart, SessionEvent, ToolCall } from './events.js';

/**
 * An image of a tool message: its artifact (from tool_result.images) and, once the turn has read it for the
 * request, its bytes as base64. A provider that takes images in tool results sends `data`; the others, or an
 * image whose bytes could not be read, get a text note.
 */
export type PayloadImage = { handle: string; mimeType: ImageMimeType; data?: string };

/**
 * A file attached to a user message (user_message.attachments): its artifact and, once the turn has read it
 * for the request (and the model takes its type), its bytes as base64. Without `data` a provider sends a note.
 */
export type PayloadAttachment = {
  handle: string;
  mimeType: AttachmentMimeType;
  name?: string;
  data?: string;
};

/**
 * One provider-neutral message. `toolCalls` and `reasoning` only on assistant messages, `toolCallId` only on
 * tool messages. `reasoning` is the message's reasoning as its event logged it; each provider sends back
 * the parts of its own format and ignores the rest.
 */
export type PayloadMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  /** Tool messages only: the tool failed (its result is an error); Anthropic is told with `is_error`. */
  isError?: true;
  /** Tool messages only: the images the result holds, in order. */
  images?: PayloadImage[];
  /** User messages only: the files attached to the prompt, in order (issue #32). */
  attachments?: PayloadAttachment[];
  reasoning?: ReasoningPart[];
  /**
   * The model that produced `reasoning` (the event's `model`): signatures and encrypted reasoning are bound to
   * it, so a provider replays them only to that model.
   */
  reasoningModel?: string;
};

/**
 * What a provider request is built from; providers translate it to their wire format. `environment` is the
 * volatile context of this one request (date, OS, git, box, policy): sent after every message, never
 * logged, never part of the cached prefix.
 */
export type Payload = { messages: PayloadMessage[]; environment?: string };

/**
 * The part of a log a projection needs, so projecting costs O(events after the newest compaction):
 * the compaction in effect (if any), the first user message (the pinned goal), the newest project
 * instructions and every event after the compaction's `through` (all events when there is none), in seq order.
 */
export type ProjectionView = {
  compaction?: EventOf<'compaction'>;
  firstUserMessage?: EventOf<'user_message'>;
  instructions?: EventOf<'instructions_loaded'>;
  /** Issue #30: the newest custom_listed (skills and custom agents), projected after the instructions. */
  custom?: EventOf<'custom_listed'>;
  tail: readonly SessionEvent[];
};
