import { z } from 'zod';
import { EVENT_KINDS, parseSessionEvent, SessionEvent } from '../../common/events.js';
import { HELD_BACK_TOOL } from '../approvals/state.js';
import { writePersistentConfig } from '../persistent/config.js';
import {
  configLineOf,
  importedPersistent,
  isConfigLine,
  SessionConfigLine,
  type SessionConfig,
} from './exportConfig.js';
import { IMPORT_METADATA_KEY } from '../log/imported.js';
import {
  attachmentLinesOf,
  type CarriedAttachment,
  checkAttachmentLine,
  isAttachmentLine,
  writeCarriedAttachments,
} from './exportAttachments.js';
import { isValidSessionId, newSessionId } from '../log/sessionId.js';
import { SessionLog } from '../log/sessionLog.js';

/*
 * The session export format: JSON Lines, one event per line, in seq order, each line exactly the
 * event's fields (camelCase, as in events.ts). Export is canonical (key order: seq, kind, at, then
 * the schema's order), so importing an export with --keep-id and exporting again gives the same bytes.
 * Import validates the whole file before anything is written; the rules are listed in
 * main/cli/README.md ("Session export format") and checked by checkReferences below.
 */

/** One thing wrong with an import file; `line` is the 1-based line number in the file. */
export type ImportProblem = { line: number; message: string };

/** The outcome of parsing an export: every event, or every problem found (never both). */
export type ParsedExport =
  | { ok: true; events: SessionEvent[]; config?: SessionConfig; attachments?: CarriedAttachment[] }
  | { ok: false; problems: ImportProblem[] };

/** Thrown when an import file is invalid; carries every problem found. Nothing was written. */
export class InvalidExportError extends Error {
  constructor(readonly problems: readonly ImportProblem[]) {
    const first = problems[0];
    super(
      first
        ? `line ${first.line}: ${first.message}` +
            (problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : '')
        : 'invalid export',
    );
    this.name = 'InvalidExportError';
  }
}

/** Stop collecting after this many problems: a wrong file should not print a million lines. */
const MAX_PROBLEMS = 50;

const variantByKind = new Map<string, (typeof SessionEvent.options)[number]>(
  SessionEvent.options.map((option) => [option.shape.kind.value, option]),
);

/** Returns the canonical export line (no newline) for one event; throws if the event is not valid. */
export function serializeEvent(event: SessionEvent): string {
  // Re-parsing puts nested objects in schema order and drops anything the schema does not know.
  const parsed = SessionEvent.parse(event) as Record<string, unknown>;
  const { seq, kind, at, ...rest } = parsed;
  if (kind === 'session_created') withoutImportMark(rest);
  return JSON.stringify({ seq, kind, at, ...rest });
}

/**
 * The import mark is this home's verdict on a file, not part of the session: export leaves it out (and a
 * metadata left empty by that), import writes its own. So an export of an imported session is the file.
 */
function withoutImportMark(fields: Record<string, unknown>): void {
  const metadata = fields['metadata'] as Record<string, unknown> | undefined;
  if (!metadata || !(IMPORT_METADATA_KEY in metadata)) return;
  const { [IMPORT_METADATA_KEY]: _mark, ...others } = metadata;
  if (Object.keys(others).length === 0) delete fields['metadata'];
  else fields['metadata'] = others;
}

/** Yields the export lines (each ending in "\n") of events read page by page from `readPage`. */
export function* exportLines(
  readPage: (fromSeq: number, limit: number) => readonly SessionEvent[],
  pageSize = 1000,
): Generator<string> {
  let fromSeq = 1;
  for (;;) {
    const page = readPage(fromSeq, pageSize);
    for (const event of page) yield serializeEvent(event) + '\n';
    const last = page[page.length - 1];
    if (!last || page.length < pageSize) return;
    fromSeq = last.seq + 1;
  }
}

/**
 * Writes a session's export through `write` in chunks of whole lines and returns the number of
 * events. Reads only: it needs no writer lease, so a session that is running can be exported.
 */
export function exportSession(home: string, id: string, write: (chunk: string) => void): number {
  const log = SessionLog.open(home, id, { write: false });
  try {
    let count = 0;
    // The session folder's own files the projection reads (exportConfig.ts) come first, on one line.
    const config = configLineOf(log.dir);
    let chunk = config === undefined ? '' : `${config}\n`;
    for (const line of exportLines((fromSeq, limit) => log.read({ fromSeq, limit }))) {
      count++;
      chunk += line;
      if (chunk.length >= 64 * 1024) {
        write(chunk);
        chunk = '';
      }
    }
    // The bytes of the prompts' files, after the events (exportAttachments.ts).
    for (const line of attachmentLinesOf(log.dir, log.readKinds(['user_message']))) {
      chunk += `${line}\n`;
      if (chunk.length >= 64 * 1024) {
        write(chunk);
        chunk = '';
      }
    }
    if (chunk !== '') write(chunk);
    return count;
  } finally {
    log.close();
  }
}

/**
 * Validates the whole export, then imports it as one session in one transaction. Throws
 * InvalidExportError (nothing written) on any bad line, SessionExistsError (from sessionLog.ts)
 * with `keepId` when the id is taken. Without `keepId` a new id is minted and session_created.sessionId rewritten to it.
 * The session is marked imported (imported.ts): its grants and endpoint are inactive until confirmed here,
 * and its projectFolder is `project` (a real folder the caller checked) or, without it, the file's, never used.
 */
export function importSession(
  home: string,
  text: string,
  options: { keepId?: boolean; project?: string } = {},
): { id: string; events: number; droppedDirs: string[] } {
  const parsed = parseExport(text);
  if (!parsed.ok) throw new InvalidExportError(parsed.problems);
  const [created, ...rest] = parsed.events;
  if (created?.kind !== 'session_created')
    throw new InvalidExportError([{ line: 1, message: 'no session_created' }]);
  let id = newSessionId();
  if (options.keepId) {
    id = created.sessionId;
    if (!isValidSessionId(id)) {
      throw new InvalidExportError([
        {
          line: 1,
          message:
            `sessionId "${id}" cannot be kept as a session id (use 1 to 128 letters, digits, '.', '_' or '-'); ` +
            'import without --keep-id to get a new id',
        },
      ]);
    }
  }
  const mark = {
    at: new Date().toISOString(),
    through: parsed.events.length,
    projectChosen: !!options.project,
  };
  const marked = {
    ...created,
    sessionId: id,
    ...(options.project ? { projectFolder: options.project } : {}),
    metadata: { ...created.metadata, [IMPORT_METADATA_KEY]: mark },
  };
  const { persistent, dropped } = parsed.config
    ? importedPersistent(parsed.config, options.project)
    : { persistent: undefined, dropped: [] };
  const { attachments } = parsed;
  const imported = SessionLog.importEvents(home, [marked, ...rest], {
    id,
    ...(persistent || attachments
      ? {
          files: (dir: string) => {
            if (persistent) writePersistentConfig(dir, persistent);
            if (attachments) writeCarriedAttachments(dir, attachments);
          },
        }
      : {}),
  });
  return { id: imported, events: parsed.events.length, droppedDirs: dropped };
}

/**
 * Parses and validates a whole export file. Never throws: every problem is returned with its line.
 * Blank lines are ignored; a UTF-8 BOM and CRLF line ends are accepted.
 */
export function parseExport(text: string): ParsedExport {
  const problems: ImportProblem[] = [];
  const events: { line: number; event: SessionEvent }[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let expectedSeq = 1;
  let nonBlankLines = 0;
  let config: SessionConfig | undefined;
  let configSeen = false;
  const attachments: CarriedAttachment[] = [];

  for (let index = 0; index < lines.length && problems.length < MAX_PROBLEMS; index++) {
    const raw = lines[index] ?? '';
    const line = index + 1;
    if (raw.trim() === '') continue;
    const isFirst = ++nonBlankLines === 1;
    const report = (message: string): void => void problems.push({ line, message });

    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      report(`invalid JSON (${error instanceof Error ? error.message : String(error)})`);
      expectedSeq++;
      continue;
    }
    // Walked without recursion: a value nested deeper than any event would overflow the stack later.
    if (nestedDeeperThan(value, MAX_NESTING)) {
      report(`nested deeper than ${MAX_NESTING} levels (no event is): not an event`);
      expectedSeq++;
      continue;
    }
    if (isConfigLine(value)) {
      if (configSeen || nonBlankLines > 1 || events.length > 0) {
        report('a sessionConfig line may only be the first line, before session_created');
        continue;
      }
      configSeen = true;
      const parsed = SessionConfigLine.safeParse(value);
      const unknown = parsed.success ? findDroppedKeys(value, parsed.data, '') : [];
      if (!parsed.success) report(`sessionConfig: ${parsed.error.issues.map(describeIssue).join('; ')}`);
      else if (unknown.length > 0) report(`sessionConfig: unknown field ${unknown.join(', ')}`);
      else config = parsed.data.sessionConfig;
      // The events still start with session_created, on the next line.
      nonBlankLines = 0;
      continue;
    }
    if (isAttachmentLine(value)) {
      const checked = checkAttachmentLine(
        value,
        events.map((e) => e.event),
      );
      if ('problem' in checked) report(checked.problem);
      else attachments.push(checked.file);
      continue;
    }
    if (attachments.length > 0) {
      report('an attachment line may only follow the events (the events come first)');
      continue;
    }
    const event = parseEventValue(value, report);
    const seq = isRecord(value) && typeof value.seq === 'number' ? value.seq : undefined;
    if (seq !== undefined && Number.isInteger(seq) && seq !== expectedSeq) {
      report(
        `seq is ${seq} but ${expectedSeq} was expected (seq counts up from 1 with no gaps, one event per line)`,
      );
    }
    expectedSeq = (seq !== undefined && Number.isInteger(seq) ? seq : expectedSeq) + 1;
    if (!event) continue;
    if (isFirst && event.kind !== 'session_created') {
      report(`the first event must be session_created, found ${event.kind}`);
    } else if (!isFirst && event.kind === 'session_created') {
      report('session_created may only be the first event');
    }
    events.push({ line, event });
  }

  if (problems.length === 0 && events.length === 0) {
    problems.push({
      line: 1,
      message: 'the file has no events (an export starts with a session_created line)',
    });
  }
  // References are checked once every line is valid on its own: a line that failed to parse would
  // otherwise make every later reference to it a second, misleading problem.
  if (problems.length === 0) checkReferences(events, problems);
  if (problems.length > 0) {
    problems.sort((a, b) => a.line - b.line);
    return { ok: false, problems: problems.slice(0, MAX_PROBLEMS) };
  }
  return {
    ok: true,
    events: events.map((e) => e.event),
    ...(config ? { config } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  };
}

/**
 * The export rules on events made in memory (another tool's history, mapped: historyImport.ts), with the verdict
 * parseExport gives their export, without writing and re-reading the lines: each event's schema (unknown fields
 * dropped, as serializeEvent drops them), seq 1..n, session_created first and only there, every reference to an
 * earlier event. The events it returns are checked: `SessionLog.importEvents(..., { validated: true })`.
 */
export function checkEvents(values: readonly SessionEvent[]): ParsedExport {
  const problems: ImportProblem[] = [];
  const events: Located[] = [];
  values.forEach((value, index) => {
    const line = index + 1;
    let event: SessionEvent;
    try {
      event = parseSessionEvent(value);
    } catch (error) {
      const issues = error instanceof z.ZodError ? error.issues.map(describeIssue).join('; ') : String(error);
      problems.push({ line, message: `${String(value.kind)}: ${issues}` });
      return;
    }
    if (event.seq !== line) problems.push({ line, message: `seq is ${event.seq} but ${line} was expected` });
    if ((index === 0) !== (event.kind === 'session_created'))
      problems.push({
        line,
        message:
          index === 0
            ? `the first event must be session_created, found ${event.kind}`
            : 'session_created may only be the first event',
      });
    events.push({ line, event });
  });
  if (problems.length === 0 && events.length === 0) problems.push({ line: 1, message: 'no events' });
  if (problems.length === 0) checkReferences(events, problems);
  if (problems.length > 0) return { ok: false, problems: problems.slice(0, MAX_PROBLEMS) };
  return { ok: true, events: events.map((e) => e.event) };
}

/** The deepest nesting an imported line may have; events are a few levels deep. */
const MAX_NESTING = 64;

/** True when `value` has arrays or objects nested more than `limit` deep; iterative, so it cannot overflow. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: { item: unknown; depth: number }[] = [{ item: value, depth: 0 }];
  while (stack.length > 0) {
    const { item, depth } = stack.pop() as { item: unknown; depth: number };
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      stack.push({ item: child, depth: depth + 1 });
    }
  }
  return false;
}

/** Checks one parsed JSON value against its kind's schema, reporting unknown kinds and fields. */
function parseEventValue(value: unknown, report: (message: string) => void): SessionEvent | undefined {
  if (!isRecord(value)) {
    report(`expected a JSON object (one event per line), found ${describeJson(value)}`);
    return undefined;
  }
  const kind = value.kind;
  if (kind === undefined) {
    report('missing "kind" (every event names its kind, e.g. "kind":"user_message")');
    return undefined;
  }
  if (typeof kind !== 'string') {
    report(`"kind" must be a string, found ${describeJson(kind)}`);
    return undefined;
  }
  const variant = variantByKind.get(kind);
  if (!variant) {
    const guess = suggestClosest(kind, EVENT_KINDS);
    report(
      `kind "${kind}" is not an event kind` +
        (guess ? ` (did you mean ${guess}?)` : ` (the kinds are: ${EVENT_KINDS.join(', ')})`),
    );
    return undefined;
  }
  const result = variant.safeParse(value);
  if (!result.success) {
    report(`${kind}: ${result.error.issues.map(describeIssue).join('; ')}`);
    return undefined;
  }
  const dropped = findDroppedKeys(value, result.data, '');
  if (dropped.length > 0) {
    const known = Object.keys(variant.shape);
    report(
      `${kind}: ` +
        dropped
          .map((path) => {
            const guess = path.includes('.') || path.includes('[') ? undefined : suggestClosest(path, known);
            return `unknown field "${path}"` + (guess ? ` (did you mean ${guess}?)` : '');
          })
          .join('; '),
    );
    return undefined;
  }
  return result.data;
}

type Located = { line: number; event: SessionEvent };

/**
 * The cross-line rules: every reference points at something earlier in the file (tool calls, approval requests, grants, compactions, subagents);
 * a tool call gets at most one result and an approval request at most one decision.
 */
function checkReferences(events: readonly Located[], problems: ImportProblem[]): void {
  const bySeq = new Map<number, Located>();
  /** Tool call id -> line of the newest assistant_message/interrupted that made it. */
  const calls = new Map<string, number>();
  /** Tool call id -> line of its result, for calls made since their id was last used. */
  const results = new Map<string, number>();
  const decisions = new Map<number, Located>();
  const children = new Set<string>();

  for (const located of events) {
    const { line, event } = located;
    const report = (message: string): void => void problems.push({ line, message });
    const refersToCall = (toolCallId: string): boolean => {
      if (calls.has(toolCallId)) return true;
      report(`${event.kind} refers to tool call "${toolCallId}" which no earlier assistant_message made`);
      return false;
    };
    const earlier = (seq: number): Located | undefined => (seq < event.seq ? bySeq.get(seq) : undefined);

    switch (event.kind) {
      case 'assistant_message':
      case 'interrupted':
        for (const call of event.toolCalls) {
          calls.set(call.id, line);
          results.delete(call.id);
        }
        break;
      case 'tool_call_started':
        refersToCall(event.toolCallId);
        break;
      case 'approval_request':
        // A commit's held-back protected files are asked for by the commit, not by a model's call.
        if (event.tool !== HELD_BACK_TOOL) refersToCall(event.toolCallId);
        break;
      case 'tool_result': {
        if (!refersToCall(event.toolCallId)) break;
        const previous = results.get(event.toolCallId);
        if (previous !== undefined) {
          report(
            `tool call "${event.toolCallId}" already has a result at line ${previous} (a call gets one result)`,
          );
        } else {
          results.set(event.toolCallId, line);
        }
        break;
      }
      case 'approval_granted':
      case 'approval_denied':
      case 'plan_approved':
      case 'plan_rejected': {
        const request = earlier(event.requestSeq);
        if (!request || request.event.kind !== 'approval_request') {
          report(
            `${event.kind} refers to requestSeq ${event.requestSeq}, which is ` +
              (request ? `a ${request.event.kind}, not an approval_request` : 'not an earlier event'),
          );
          break;
        }
        const decided = decisions.get(event.requestSeq);
        if (decided) {
          report(
            `approval request ${event.requestSeq} was already decided at line ${decided.line} (${decided.event.kind})`,
          );
        } else {
          decisions.set(event.requestSeq, located);
        }
        break;
      }
      case 'approval_revoked': {
        const grant = earlier(event.grantSeq);
        if (!grant || grant.event.kind !== 'approval_granted') {
          report(
            `approval_revoked refers to grantSeq ${event.grantSeq}, which is ` +
              (grant ? `a ${grant.event.kind}, not an approval_granted` : 'not an earlier event'),
          );
        }
        break;
      }
      case 'compaction': {
        if (event.through >= event.seq) {
          report(
            `compaction at seq ${event.seq} replaces through ${event.through}; it can only replace earlier events`,
          );
        }
        if (event.fromSeq !== undefined && event.fromSeq > event.through) {
          report(`compaction fromSeq ${event.fromSeq} is after its through ${event.through}`);
        }
        if (event.supersedes !== undefined) {
          const superseded = earlier(event.supersedes);
          if (!superseded || superseded.event.kind !== 'compaction') {
            report(`compaction supersedes ${event.supersedes}, which is not an earlier compaction`);
          }
        }
        break;
      }
      case 'changes_reverted':
        for (const seq of event.reverts) {
          const change = earlier(seq);
          if (
            !change ||
            (change.event.kind !== 'persistent_commit' && change.event.kind !== 'changes_reverted')
          ) {
            report(
              `changes_reverted reverts ${seq}, which is not an earlier persistent_commit or changes_reverted`,
            );
          }
        }
        break;
      case 'user_snapshot_restored':
        if (earlier(event.snapshotSeq)?.event.kind !== 'user_snapshot')
          report(
            `user_snapshot_restored restores ${event.snapshotSeq}, which is not an earlier user_snapshot`,
          );
        break;
      case 'subagent_started':
        children.add(event.childId);
        break;
      case 'subagent_result':
        if (!children.has(event.childId)) {
          report(
            `subagent_result refers to child "${event.childId}" which no earlier subagent_started started`,
          );
        }
        break;
      default:
        break;
    }
    bySeq.set(event.seq, located);
  }
}

/** Keys present in the input but absent from the parsed output: fields the schema does not know. */
function findDroppedKeys(input: unknown, output: unknown, path: string): string[] {
  if (Array.isArray(input) && Array.isArray(output)) {
    return input.flatMap((item, i) => findDroppedKeys(item, output[i], `${path}[${i}]`));
  }
  if (!isRecord(input) || !isRecord(output)) return [];
  return Object.keys(input).flatMap((key) => {
    const child = path ? `${path}.${key}` : key;
    if (!(key in output)) return input[key] === undefined ? [] : [child];
    return findDroppedKeys(input[key], output[key], child);
  });
}

/** A zod issue as a person reads it: the field, then what is wrong with it. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const field = formatPath(issue.path);
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `missing field "${field}" (${issue.expected})`;
  }
  if (issue.code === 'invalid_union' && field === 'scope') {
    return 'field "scope" must be once, session, path:<glob> or prefix:<command prefix>';
  }
  const message = issue.message.replace(/^Invalid input: /, '');
  return field ? `field "${field}": ${message}` : message;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) =>
      typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key),
    '',
  );
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The closest candidate by edit distance (ignoring case and _ vs camelCase), if it is close enough. */
function suggestClosest(word: string, candidates: readonly string[]): string | undefined {
  const normalize = (text: string): string => text.toLowerCase().replace(/[_\-\s]/g, '');
  const target = normalize(word);
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(target, normalize(candidate));
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(2, Math.floor(target.length / 4)) ? best.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
