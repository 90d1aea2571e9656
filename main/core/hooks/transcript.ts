import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SessionEvent } from '../../common/events.js';

/*
 * Issue #30: the `transcript_path` a hook reads. Claude Code hands hooks the conversation as JSONL, one line a
 * message (`type` user / assistant, `message.content` text or blocks: `text`, `tool_use` with `input`,
 * `tool_result` with `tool_use_id`), and hook scripts parse exactly that (the last assistant text, the tool
 * calls). Keel's log is not that file and must never be handed to a hook: it holds unredacted prompts, lives
 * in Keel's home (hidden in the box) and is the session's truth. So each time hooks run, the log's
 * conversation is exported, every string redacted, into a fresh 0700 folder of the host's temp folder, bound
 * read-only into the hook's box at the same path, and removed when the hooks are done: a hook can read it,
 * never write it, and never sees or reaches Keel's home.
 */

/** The export's file name inside its private folder. */
export const TRANSCRIPT_FILE = 'transcript.jsonl';

/** One Claude Code transcript line, as hook scripts read it. */
type TranscriptLine = {
  type: 'user' | 'assistant' | 'system';
  uuid: string;
  parentUuid: string | null;
  sessionId: string;
  timestamp: string;
  cwd: string;
  message?: { role: 'user' | 'assistant'; content: string | Record<string, unknown>[] };
  subtype?: string;
  content?: string;
};

/** The call's arguments as the object the model sent (a string when they do not parse). */
function inputOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Every string of a JSON value passed through `redact` (before serializing, so no secret hides in an escape). */
function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, redact)]));
  return value;
}

/** The transcript lines of a session's events, in order; events that are not conversation are left out. Pure. */
export function transcriptLines(
  events: readonly SessionEvent[],
  context: { sessionId: string; cwd: string },
): TranscriptLine[] {
  const lines: TranscriptLine[] = [];
  const line = (
    event: SessionEvent,
    type: TranscriptLine['type'],
    rest: Partial<TranscriptLine>,
  ): TranscriptLine => ({
    type,
    uuid: `keel-${context.sessionId}-${event.seq}`,
    parentUuid: lines.at(-1)?.uuid ?? null,
    sessionId: context.sessionId,
    timestamp: event.at,
    cwd: context.cwd,
    ...rest,
  });
  for (const event of events) {
    switch (event.kind) {
      case 'user_message':
        lines.push(line(event, 'user', { message: { role: 'user', content: event.content } }));
        break;
      case 'assistant_message':
      case 'interrupted': {
        const blocks: Record<string, unknown>[] = [];
        if (event.content !== '') blocks.push({ type: 'text', text: event.content });
        for (const call of event.toolCalls)
          blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) });
        if (blocks.length > 0)
          lines.push(line(event, 'assistant', { message: { role: 'assistant', content: blocks } }));
        break;
      }
      case 'tool_result':
        lines.push(
          line(event, 'user', {
            message: {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: event.toolCallId,
                  content: event.content,
                  ...(event.isError ? { is_error: true } : {}),
                },
              ],
            },
          }),
        );
        break;
      case 'compaction':
        lines.push(line(event, 'system', { subtype: 'compact_boundary', content: 'Conversation compacted' }));
        break;
      default:
        break;
    }
  }
  return lines;
}

/** A written export: its file (what `transcript_path` says) and its folder (bound read-only into the box). */
export type WrittenTranscript = { file: string; folder: string; remove(): void };

/**
 * Writes the redacted transcript of `events` into a new private folder of the host's temp folder. The caller
 * removes it (`remove`) once the hooks that read it are done.
 */
export function writeTranscript(
  events: readonly SessionEvent[],
  context: { sessionId: string; cwd: string; redact: (text: string) => string },
): WrittenTranscript {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'keel-hook-transcript-'));
  chmodSync(folder, 0o700);
  const file = path.join(folder, TRANSCRIPT_FILE);
  const text = transcriptLines(events, context)
    .map((entry) => JSON.stringify(redactDeep(entry, context.redact)))
    .join('\n');
  writeFileSync(file, text === '' ? '' : `${text}\n`, { mode: 0o400 });
  return { file, folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
