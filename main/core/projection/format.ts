import { describeBackgroundEnd } from '../../common/backgroundEvents.js';
import type { EventOf } from '../../common/events.js';

// The fixed strings and formats of the projection: byte-stable renderings of the events that become messages.

/** Prefix of the system message that carries the summary of the compaction in effect. */
export const SUMMARY_PREFIX = 'Session so far: ';

/** Content of the tool message that closes a call which has no result in the payload. */
export const CANCELLED_RESULT = '{"error":"cancelled_by_user"}';

/** Last line of an interrupted assistant turn whose event gives no reason. */
export const INTERRUPTED_MARKER = '[interrupted by the user]';

/** Stands in for the missing first user message when a payload would otherwise open with the assistant. */
export const CONVERSATION_START_NOTE = '[conversation start]';

/** Options of a projection: the system prompt is the only input that is not an event. */
export type ProjectOptions = {
  /** The system prompt; must not contain a clock, counter or id (it heads every request's cached prefix). */
  system: string;
};

/** Renders an interrupted turn so the model can tell it was cut off; byte-stable for the same event. */
export function formatInterrupted(event: EventOf<'interrupted'>): string {
  const marker = event.reason === undefined ? INTERRUPTED_MARKER : `[interrupted: ${event.reason}]`;
  return event.content === '' ? marker : `${event.content}\n${marker}`;
}

/**
 * One line per file attached to a user message, naming its handle (issue #32): what the compaction summary
 * and the pinned goal keep of a prompt's files once their turn is no longer sent whole. Byte-stable.
 */
export function formatAttachmentHandles(
  attachments: readonly { handle: string; mimeType: string; name?: string }[] | undefined,
  verb = 'attached',
): string {
  return (attachments ?? [])
    .map((file) => `\n[${verb}: ${file.handle} (${file.mimeType}${file.name ? `, ${file.name}` : ''})]`)
    .join('');
}

/** Renders a staged file as a short user-role note; byte-stable for the same event. */
export function formatFileStaged(event: EventOf<'file_staged'>): string {
  const type = event.mediaType === undefined ? '' : `, ${event.mediaType}`;
  return `[file staged: ${event.path} (${event.size} bytes${type})]`;
}

/**
 * Renders a person's denial of changes a commit held back (protected files, or a whole commit whose git
 * metadata changed) as a short user-role note, so the model knows its work did not land; byte-stable.
 */
export function formatHeldDenied(
  request: EventOf<'approval_request'>,
  denial: EventOf<'approval_denied'>,
): string {
  const why = denial.reason === undefined ? '' : ` (${denial.reason})`;
  return `[not committed, the user denied it${why}: ${request.reason ?? 'changes held back by the commit'}]`;
}

/** Issue #30: what a hook told the model (its context, a block's reason), as the user turn it arrives in. */
export function formatHookContext(event: EventOf<'hook_ran'>): string {
  return `<hook event="${event.event}" source="${event.source}">\n${event.context ?? ''}\n</hook>`;
}

/**
 * Issue #32: whether the model learns of a background command's end only from a note (nothing told it in a call's
 * result): Keel recorded it outside any call. `keel_ended` and `session_stopped` never come from a tool, also in
 * logs from before `outsideCall`.
 */
export function backgroundEndNeedsNote(event: EventOf<'background_exited'>): boolean {
  return event.outsideCall === true || event.reason === 'keel_ended' || event.reason === 'session_stopped';
}

/** Renders a background command's end the model did not read in a call's result, as a user note; byte-stable. */
export function formatBackgroundEnded(event: EventOf<'background_exited'>): string {
  const command = event.command === undefined ? '' : ` (${event.command})`;
  const lost = event.reason === 'keel_ended' || event.reason === 'session_stopped';
  return (
    `[background command ${event.handle}${command} is not running: ${describeBackgroundEnd(event)}` +
    `${lost ? '; it is never started again by itself' : ''}]`
  );
}

/** Issue 33: a subscribed MCP resource changed on its server, as a user-role note; byte-stable. */
export function formatResourceUpdated(event: EventOf<'mcp_resource_updated'>): string {
  return `[MCP resource updated: ${event.uri} on server "${event.server}" changed since it was read or attached; read it again with read_mcp_resource for its current contents]`;
}
