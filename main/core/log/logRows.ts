import { z } from 'zod';
import { SessionEvent } from '../../common/events.js';
import type { EventOf } from '../../common/events.js';
import type { IndexUpdate, SessionStatus } from '../../store/sessionIndex.js';
import type { NewSessionRow } from '../../store/indexRows.js';
import { DamagedLogError } from './logErrors.js';

/*
 * Rows of the events and trace tables to values and back, and what the session index learns from events.
 * Pure.
 */

/** One trace record: a stage of a turn, when it started, how long it took, and free-form detail (tokens…). */
export const TraceEntry = z.object({
  turn: z.number().int().nonnegative(),
  stage: z.string().min(1),
  startedAt: z.string().min(1),
  durationMs: z.number().nonnegative().optional(),
  detail: z.unknown().optional(),
});
export type TraceEntry = z.infer<typeof TraceEntry>;

/** A row of the events table. */
export type EventRow = { seq: number; kind: string; at: string; body: string };
/** Longest title taken from the first user message. */
const TITLE_LENGTH = 80;

/** The event of a stored row; throws naming the seq when it does not match its schema (unless `validate` is false). */
export function rowToEvent(sessionId: string, row: EventRow, validate = true): SessionEvent {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(row.body) as Record<string, unknown>;
  } catch (error) {
    const file = `sessions/${sessionId}/events.sqlite`;
    throw new DamagedLogError(sessionId, file, `its body is not JSON: ${(error as Error).message}`, row.seq);
  }
  // Every event was validated when it was appended; hot paths (the turn engine) may skip re-checking. Keys in
  // zod's order (every event schema starts seq, at, kind; the body was stored as zod's output), so an event read
  // either way serializes to the same bytes (a fork's projection snapshot, fork.ts).
  if (!validate) return { seq: row.seq, at: row.at, kind: row.kind, ...body } as SessionEvent;
  const result = SessionEvent.safeParse({ ...body, seq: row.seq, kind: row.kind, at: row.at });
  if (!result.success) {
    throw new Error(
      `session ${sessionId}: stored event ${row.seq} (${row.kind}) does not match its schema: ` +
        z.prettifyError(result.error),
    );
  }
  return result.data;
}

/**
 * The body column of an event: its fields other than seq, at and kind, as JSON. JSON.stringify writes keys in the
 * object's order, so an event that starts seq, at, kind (every appended one: sessionLog.ts's appendRows, and
 * zod's copies) is its body after those three: one stringify, no copy of the event without them.
 */
export function bodyText(event: SessionEvent): string {
  const text = JSON.stringify(event);
  // at and kind go in unquoted by JSON: a value that needs an escape then differs from the text at that escape,
  // so the head matches only where it is the text's own (one stringify per append, #19).
  const head = `{"seq":${event.seq},"at":"${event.at}","kind":"${event.kind}"`;
  if (text.startsWith(head))
    return text.length === head.length + 1 ? '{}' : `{${text.slice(head.length + 1)}`;
  const { seq: _seq, at: _at, kind: _kind, ...body } = event;
  return JSON.stringify(body);
}

/** The text search finds an event by; undefined for events that carry no message text. */
export function searchableText(event: SessionEvent): string | undefined {
  switch (event.kind) {
    case 'user_message':
    case 'assistant_message':
    case 'interrupted':
      return event.content === '' ? undefined : event.content;
    case 'compaction':
      return event.summary;
    default:
      return undefined;
  }
}

function titleFrom(content: string): string | undefined {
  const line = content.trim().split('\n', 1)[0]?.trim() ?? '';
  if (line === '') return undefined;
  return line.length <= TITLE_LENGTH ? line : line.slice(0, TITLE_LENGTH - 1) + '…';
}

/** What the index must learn from `events` (in seq order, non-empty). */
export function toIndexUpdate(events: readonly SessionEvent[], status: SessionStatus): IndexUpdate {
  const last = events[events.length - 1];
  if (!last) throw new Error('toIndexUpdate needs at least one event');
  const update: IndexUpdate = { lastSeq: last.seq, updatedAt: last.at, status, messages: [] };
  const messages: { seq: number; text: string }[] = [];
  for (const event of events) {
    const text = searchableText(event);
    if (text !== undefined) messages.push({ seq: event.seq, text });
    if (event.kind === 'user_message' && update.title === undefined) {
      const title = titleFrom(event.content);
      if (title !== undefined) update.title = title;
    }
    if (event.kind === 'model_changed') {
      update.provider = event.provider;
      update.model = event.model;
    }
    if (event.kind === 'session_renamed') update.renamedTitle = event.title;
  }
  return { ...update, messages };
}

export function toSessionRow(created: EventOf<'session_created'>, id: string): NewSessionRow {
  return {
    id,
    ...(created.title === undefined ? {} : { title: created.title }),
    projectFolder: created.projectFolder,
    provider: created.provider,
    model: created.model,
    // A fork is listed under the session it was forked from, as a subagent's child is under its parent.
    ...(created.parentId === undefined && created.forkedFrom === undefined
      ? {}
      : { parentId: created.parentId ?? created.forkedFrom?.sessionId }),
    createdAt: created.at,
  };
}
