import { createHash } from 'node:crypto';
import { MAX_IMAGE_BYTES, sniffAttachmentType, type UserAttachment } from '../../common/attachments.js';
import type {
  ImageMimeType,
  ModelPin,
  NewEvent,
  ReasoningPart,
  ToolCall,
  ToolImage,
  Usage,
} from '../../common/events.js';

/*
 * A session of another tool as Keel events, before it is written. The mappers (claudeCode.ts, codex.ts)
 * build it from the source file in order; the door (harness/historyImport.ts) numbers, redacts and writes it.
 * Nothing here reads or writes a file but the source it is given.
 */

/** The tools whose history Keel imports. */
export const IMPORT_TOOLS = ['claude-code', 'codex'] as const;
export type ImportTool = (typeof IMPORT_TOOLS)[number];

/**
 * An event as a mapper makes it: no seq, `at` the original time. A field naming an earlier event
 * (rewound.toSeq, compaction.through and fromSeq) holds a placeholder seq: the event's index in
 * `events` + 2 (session_created is 1). The writer renumbers them when the session already has events.
 */
export type MappedEvent = NewEvent & { at: string };

/** Bytes an event refers to (an image), written into the session folder before the events. */
export type MappedFile = { area: 'artifacts' | 'uploads'; name: string; data: Buffer };

export type MappedSession = {
  tool: ImportTool;
  /** The source tool's own id of the session (or of the subagent). */
  sourceId: string;
  file: string;
  /** The folder the session worked in, as the source recorded it. */
  project: string | undefined;
  title: string | undefined;
  /** The model as it was first used; undefined when the source never named one. */
  pin: ModelPin | undefined;
  startedAt: string;
  events: MappedEvent[];
  files: MappedFile[];
  /**
   * The source's own session this one belongs under, when the file says so (a Codex subagent's parent thread, the
   * thread a Codex fork started from): the Keel session made from that one is its parent in the list.
   */
  parent?: { sourceId: string; as: 'subagent' | 'fork' };
  /** Subagents, each its own session, listed under this one. */
  children: MappedSession[];
  /** Tool results whose call is not in the file (before a branch point, or cut by the source), dropped. */
  droppedResults: number;
};

/** The content of the result Keel gives a call the source left without one, so nothing runs it again here. */
export const UNANSWERED_AT_IMPORT =
  '{"error":"no result: the imported session ended before this call got one"}';

type OpenCall = { name: string; answered: boolean; assistant: number };

/**
 * Builds a mapped session's events in order and keeps the rules every imported log must keep: a result
 * answers a call made earlier and only once (others are dropped), a compaction replaces earlier events, a
 * rewind goes back to an earlier event.
 */
export class EventBuilder {
  readonly events: MappedEvent[] = [];
  readonly files: MappedFile[] = [];
  droppedResults = 0;
  private readonly calls = new Map<string, OpenCall>();
  /** Images given with the next user message (userImage). */
  private readonly pendingAttachments: UserAttachment[] = [];
  private firstUser: string | undefined;
  private lastCompactionThrough = 1;
  private newestAssistant = -1;

  /** The placeholder seq the next event gets. */
  get nextSeq(): number {
    return this.events.length + 2;
  }

  /** The placeholder seq of the newest event (1: session_created). */
  get lastSeq(): number {
    return this.events.length + 1;
  }

  push(event: MappedEvent): number {
    this.events.push(event);
    return this.lastSeq;
  }

  user(at: string, content: string, messageId?: string): number | undefined {
    const attachments = this.pendingAttachments.splice(0);
    if (content.trim() === '' && attachments.length === 0) return undefined;
    if (content.trim() !== '') this.firstUser ??= content;
    return this.push({
      kind: 'user_message',
      at,
      content,
      ...(messageId ? { messageId } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
    });
  }

  /**
   * An image the user gave with the next message: kept as an artifact named by its hash and carried by that
   * user_message as an attachment (as `keel run --image` keeps one), so a turn continued here sends it again. An
   * image Keel would not send (not PNG, JPEG, GIF or WebP by its bytes, or over the size a prompt may carry) is
   * kept in the session's uploads instead, shown but not sent.
   */
  userImage(at: string, data: Buffer, mediaType: string, messageId?: string): void {
    const mimeType = sniffAttachmentType(data);
    if (mimeType === undefined || mimeType === 'application/pdf' || data.length > MAX_IMAGE_BYTES) {
      this.stagedImage(at, data, mediaType, messageId);
      return;
    }
    const sha256 = createHash('sha256').update(data).digest('hex');
    const handle = `attachments/${sha256}${extensionOf(mimeType)}`;
    if (!this.files.some((file) => file.area === 'artifacts' && file.name === handle))
      this.files.push({ area: 'artifacts', name: handle, data });
    this.pendingAttachments.push({ handle, mimeType, bytes: data.length });
  }

  assistant(message: {
    at: string;
    content: string;
    toolCalls: ToolCall[];
    reasoning: ReasoningPart[];
    usage?: Usage;
    stopReason?: string;
    model?: string;
  }): number | undefined {
    const { at, content, toolCalls, reasoning } = message;
    if (content === '' && toolCalls.length === 0 && reasoning.length === 0) return undefined;
    const seq = this.push({
      kind: 'assistant_message',
      at,
      content,
      toolCalls,
      ...(reasoning.length > 0 ? { reasoning } : {}),
      ...(message.usage ? { usage: message.usage } : {}),
      ...(message.stopReason ? { stopReason: message.stopReason } : {}),
      ...(message.model ? { model: message.model } : {}),
    });
    this.newestAssistant = seq;
    for (const call of toolCalls)
      this.calls.set(call.id, { name: call.name, answered: false, assistant: seq });
    return seq;
  }

  /** The name (Keel's, when mapped) of a call made earlier, or undefined. */
  callName(id: string): string | undefined {
    return this.calls.get(id)?.name;
  }

  /** True when `id` is a call made earlier that has no result yet. */
  isOpen(id: string): boolean {
    const call = this.calls.get(id);
    return call !== undefined && !call.answered;
  }

  result(result: {
    at: string;
    toolCallId: string;
    content: string;
    isError?: boolean;
    images?: ToolImage[];
  }): number | undefined {
    const call = this.calls.get(result.toolCallId);
    if (!call || call.answered) {
      this.droppedResults++;
      return undefined;
    }
    call.answered = true;
    return this.push({
      kind: 'tool_result',
      at: result.at,
      toolCallId: result.toolCallId,
      tool: call.name,
      content: result.content,
      ...(result.isError ? { isError: true } : {}),
      ...(result.images?.length ? { images: result.images } : {}),
    });
  }

  /** A subagent's call answered by its child session: subagent_started then subagent_result. */
  subagent(
    at: string,
    toolCallId: string,
    childId: string,
    task: string,
    content: string,
  ): number | undefined {
    const call = this.calls.get(toolCallId);
    if (!call || call.answered) {
      this.droppedResults++;
      return undefined;
    }
    call.answered = true;
    this.push({ kind: 'subagent_started', at, childId, toolCallId, task, tools: [] });
    return this.push({ kind: 'subagent_result', at, childId, toolCallId, content });
  }

  interrupted(at: string, reason: string): number {
    // An interruption closes the message: its calls will never get a result (as the turn engine records it).
    for (const call of this.calls.values()) if (call.assistant === this.newestAssistant) call.answered = true;
    return this.push({ kind: 'interrupted', at, content: '', toolCalls: [], reason });
  }

  compaction(at: string, summary: string, extra: { tokensBefore?: number } = {}): number {
    const through = this.lastSeq;
    const fromSeq = Math.min(this.lastCompactionThrough + 1, through);
    this.lastCompactionThrough = through;
    return this.push({
      kind: 'compaction',
      at,
      through,
      fromSeq,
      summary,
      pinned: this.firstUser ?? '',
      ...(extra.tokensBefore !== undefined ? { tokensBefore: extra.tokensBefore } : {}),
    });
  }

  /** The conversation goes on from the event at placeholder seq `toSeq` (a branch in the source). */
  rewindTo(at: string, toSeq: number): number | undefined {
    if (toSeq >= this.lastSeq || toSeq < 1) return undefined;
    return this.push({ kind: 'rewound', at, toSeq });
  }

  error(at: string, message: string): number {
    return this.push({ kind: 'error', at, message });
  }

  /** An image the user gave that Keel would not send: kept in the session's uploads and staged with the message. */
  private stagedImage(at: string, data: Buffer, mediaType: string, messageId?: string): number | undefined {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const name = `${sha256.slice(0, 32)}${extensionOf(mediaType)}`;
    this.files.push({ area: 'uploads', name, data });
    return this.push({
      kind: 'file_staged',
      at,
      path: `/session/uploads/${name}`,
      size: data.length,
      sha256,
      mediaType,
      source: 'import',
      ...(messageId ? { messageId } : {}),
    });
  }

  /** An image a tool returned, kept as an artifact; undefined when its bytes are not an image Keel shows. */
  toolImage(data: Buffer): ToolImage | undefined {
    const mimeType = sniffImage(data);
    if (!mimeType) return undefined;
    const sha256 = createHash('sha256').update(data).digest('hex');
    const handle = `imported/${sha256.slice(0, 32)}${extensionOf(mimeType)}`;
    this.files.push({ area: 'artifacts', name: handle, data });
    return { handle, mimeType, bytes: data.length };
  }
}

/** The image type the bytes say (never the source's word), or undefined. */
export function sniffImage(data: Buffer): ImageMimeType | undefined {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

function extensionOf(mediaType: string): string {
  const sub = /^image\/(png|jpeg|gif|webp)$/.exec(mediaType)?.[1];
  return sub === undefined ? '.bin' : sub === 'jpeg' ? '.jpg' : `.${sub}`;
}

/** The placeholder-seq fields of an event, by kind: what the writer renumbers. */
export function seqReferences(event: MappedEvent): ('toSeq' | 'through' | 'fromSeq')[] {
  if (event.kind === 'rewound') return ['toSeq'];
  if (event.kind === 'compaction') return event.fromSeq === undefined ? ['through'] : ['through', 'fromSeq'];
  return [];
}
