import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ModelPin, SessionEvent } from '../../common/events.js';
import { SUGGESTED_MODEL } from '../../providers/catalogue.js';
import { createRedactor, type Redactor } from '../../sandbox/redact.js';
import { appendJsonlEvent, readJsonlEvents } from '../../store/appendOnlyJsonl.js';
import { mapClaudeSession, pinOf } from '../imports/claudeCode.js';
import { codexPin, mapCodexRollout } from '../imports/codex.js';
import type { FileDigest, LineProblem } from '../imports/jsonl.js';
import { defaultRoot, findSources, type SourceFile } from '../imports/locations.js';
import { closersOf, numbered } from '../imports/numbered.js';
import {
  UNANSWERED_AT_IMPORT,
  type ImportTool,
  type MappedEvent,
  type MappedSession,
} from '../imports/mapped.js';
import { IMPORT_METADATA_KEY, importMarkOf } from '../log/imported.js';
import { openSessionIndex } from '../log/indexRebuild.js';
import { SessionNotFoundError } from '../log/logErrors.js';
import { SessionLog } from '../log/sessionLog.js';
import { FreshLogBatch, type SealedLog } from '../log/freshLogs.js';
import { artifactsDir, sessionAreaDir, sessionDir, sessionsDir } from '../paths.js';
import { syncFolder } from '../../store/freshDatabase.js';
import type { SessionIndex } from '../../store/sessionIndex.js';
import { checkEvents } from './transfer.js';

/*
 * `keel import --from claude-code|codex` and Settings → Import history (issue 35): another tool's sessions
 * as Keel sessions. The readers and mappers are core/imports/; this file decides what is new, writes each
 * session in one transaction (created whole, or its new part appended whole), and reports.
 *
 * An imported session is a record, as `keel import FILE` makes one (log/imported.ts): policy `ask`, no
 * grants, rules, trust or network, and its project folder is used only when the user chose it (`project`).
 * Its tool results are redacted on the way in. Idempotence: a session's Keel id is made from the source's
 * own id, and `<home>/history-imports.jsonl` remembers each file's size, time and hash, so an unchanged file
 * is skipped unread; a file that grew is mapped again, and what the session already holds (compared event
 * by event: kind, time, call) is not written twice.
 */

export type HistoryImportOptions = {
  tool: ImportTool;
  /** Files or folders; empty: the tool's default location. */
  paths?: readonly string[];
  /**
   * The project folder the user chose (a real path). Without `paths`, only the sessions recorded in it are
   * imported; with `paths`, every session read is given it. Its sessions can be continued here.
   */
  project?: string;
  /** Only files changed at or after this time. */
  since?: Date;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The user's home folder (tests), for the default locations. */
  userHome?: string;
  onProgress?: (progress: { done: number; total: number; file: string }) => void;
};

export type ImportedSessionReport = {
  sessionId: string;
  sourceId: string;
  file: string;
  project: string | undefined;
  /** `new`: created; `grown`: its new part appended. */
  status: 'new' | 'grown';
  events: number;
  messages: number;
  subagents: number;
};

export type ProjectReport = {
  project: string;
  sessions: number;
  messages: number;
  new: number;
  grown: number;
  unchanged: number;
  /** Of those already here, imported without this folder chosen: importing the project makes them runnable. */
  records: number;
};

export type HistoryImportReport = {
  tool: ImportTool;
  root: string;
  dryRun: boolean;
  /** True when the user chose the project folder: the sessions can be continued here. */
  chosen: boolean;
  found: number;
  imported: ImportedSessionReport[];
  skipped: { file: string; reason: string }[];
  /** Lines that could not be read (at most MAX_PROBLEMS; `moreProblems` counts the rest). */
  problems: LineProblem[];
  moreProblems: number;
  projects: ProjectReport[];
};

const LEDGER_FILE = 'history-imports.jsonl';
const MAX_PROBLEMS = 200;
/**
 * New sessions named together (log/freshLogs.ts): their fsyncs run at once in the thread pool while the next files
 * are read, and their rows go in one index transaction. Small: what a batch holds until then is its search text.
 */
const SEAL_BATCH = 8;

const LedgerEntry = z.object({
  at: z.string(),
  tool: z.enum(['claude-code', 'codex']),
  file: z.string(),
  size: z.number(),
  mtimeMs: z.number(),
  sha256: z.string(),
  sessionId: z.string(),
  /** The session's folder (chosen, else recorded) and message count: what a later run reports it under. */
  project: z.string().optional(),
  messages: z.number().optional(),
  /** Whether the user chose that folder (the session can run there). */
  chosen: z.boolean().optional(),
});
type LedgerEntry = z.infer<typeof LedgerEntry>;

/** Imports (or, with dryRun, plans) the history of one tool into `home`. Never throws for one bad file. */
export async function importHistory(
  home: string,
  options: HistoryImportOptions,
): Promise<HistoryImportReport> {
  const { tool } = options;
  const root = defaultRoot(tool, options.env ?? process.env, options.userHome);
  const sources = findSources(tool, options.paths ?? [], root);
  const report: HistoryImportReport = {
    tool,
    root,
    dryRun: options.dryRun === true,
    chosen: options.project !== undefined,
    found: sources.length,
    imported: [],
    skipped: [],
    problems: [],
    moreProblems: 0,
    projects: [],
  };
  if ((options.paths ?? []).length === 0 && !fs.existsSync(root)) {
    report.skipped.push({
      file: root,
      reason: `no ${tool === 'codex' ? 'Codex' : 'Claude Code'} history here`,
    });
    return report;
  }
  const ledger = new Map<string, LedgerEntry>();
  for (const entry of readJsonlEvents(home, LEDGER_FILE, LedgerEntry))
    ledger.set(`${entry.tool}:${entry.file}`, entry);
  const projects = new Map<string, ProjectReport>();
  const projectOf = (folder: string): ProjectReport => {
    let found = projects.get(folder);
    if (!found)
      projects.set(
        folder,
        (found = { project: folder, sessions: 0, messages: 0, new: 0, grown: 0, unchanged: 0, records: 0 }),
      );
    return found;
  };
  const problem = (p: LineProblem): void => {
    if (report.problems.length < MAX_PROBLEMS) report.problems.push(p);
    else report.moreProblems++;
  };
  const redactor = createRedactor({ env: options.env ?? process.env });

  // One index connection for the run (a batch's registration is one transaction in it, not an open and a close).
  let index: SessionIndex | undefined;
  const sharedIndex = (): SessionIndex => (index ??= openSessionIndex(home, { synchronous: 'NORMAL' }));
  let batch: FreshLogBatch | undefined;
  const freshLogs = (): FreshLogBatch => (batch ??= new FreshLogBatch(home, sharedIndex()));
  /** Sources whose new sessions wait in the batch: reported and put in the ledger once named. */
  let waiting: Waiting[] = [];
  let sealing: Promise<void> = Promise.resolve();
  /** Starts naming the batch (after the one before it is settled); the caller goes on with the next file. */
  const startSeal = async (): Promise<void> => {
    await sealing;
    if (!batch || batch.size === 0) return;
    const entries = waiting;
    waiting = [];
    // Never rejected: a batch that fails as a whole (its folders could not be cleaned) skips its own sources.
    sealing = batch.seal().then(
      (results) => settle(entries, results),
      (error: unknown) => entries.forEach((entry) => skip(entry.file, error)),
    );
  };
  /** Every session written so far is named (or failed), reported and in the ledger. */
  const sealAll = async (): Promise<void> => {
    await startSeal();
    await sealing;
  };
  const order = new Map(sources.map((source, i) => [source.file, i]));
  let done = 0;
  try {
    for (const source of sources) {
      options.onProgress?.({ done, total: sources.length, file: source.file });
      try {
        await importSource(source);
      } catch (error) {
        // One file's failure (a full disk, a locked session) is its own: the others go on.
        skip(source.file, error);
      }
      done++;
    }
  } finally {
    await sealAll();
    if (index) {
      // Each session's log and its folder's entries were fsync'd when written; their rows and entries here.
      try {
        index.makeDurable();
        syncFolder(sessionsDir(home));
      } finally {
        index.close();
      }
    }
  }
  options.onProgress?.({ done, total: sources.length, file: '' });
  // Sessions of a batch are reported when it is named: back in the order of their files.
  const rank = (file: string) => order.get(file) ?? sources.length;
  report.imported.sort((a, b) => rank(a.file) - rank(b.file));
  report.skipped.sort((a, b) => rank(a.file) - rank(b.file));
  report.projects = [...projects.values()].sort((a, b) => (a.project < b.project ? -1 : 1));
  return report;

  async function importSource(source: SourceFile): Promise<void> {
    const stat = fs.statSync(source.file);
    if (options.since && stat.mtimeMs < options.since.getTime()) {
      report.skipped.push({
        file: source.file,
        reason: `not changed since ${options.since.toISOString().slice(0, 10)}`,
      });
      return;
    }
    const known = ledger.get(`${tool}:${source.file}`);
    const unchanged = (entry: LedgerEntry | undefined): entry is LedgerEntry =>
      entry !== undefined && fs.existsSync(sessionDir(home, entry.sessionId));
    const alreadyHere = (entry: LedgerEntry): void => {
      report.skipped.push({ file: source.file, reason: 'unchanged since it was imported' });
      if (entry.project === undefined) return;
      const summary = projectOf(entry.project);
      summary.sessions++;
      summary.unchanged++;
      if (entry.chosen !== true) summary.records++;
      summary.messages += entry.messages ?? 0;
    };
    // Imported before as a record (no folder chosen) and now for a folder: read on, to make it runnable.
    const recordNowChosen = known !== undefined && known.chosen !== true && options.project !== undefined;
    if (!recordNowChosen && unchanged(known) && known.size === stat.size && known.mtimeMs === stat.mtimeMs) {
      if (options.project === undefined || known.project === options.project) alreadyHere(known);
      else
        report.skipped.push({
          file: source.file,
          reason: `another project (${known.project ?? 'no folder recorded'})`,
        });
      return;
    }
    let digest: FileDigest | undefined;
    const setDigest = (d: FileDigest): void => void (digest = d);
    const mapped =
      tool === 'codex'
        ? await mapCodexRollout(source.file, problem, setDigest, (thread) => keelId('codex', thread))
        : await mapClaudeSession(source, (id, key) => childId(keelId(tool, id), key), problem, setDigest);
    if (!mapped) {
      report.skipped.push({ file: source.file, reason: 'no conversation in it' });
      return;
    }
    const sessionId = keelId(tool, mapped.sourceId);
    const chosen = chosenFolder(mapped);
    if (chosen === null) {
      report.skipped.push({
        file: source.file,
        reason: `another project (${mapped.project ?? 'no folder recorded'})`,
      });
      return;
    }
    if (!recordNowChosen && unchanged(known) && digest && known.sha256 === digest.sha256) {
      alreadyHere(known);
      return;
    }
    const folder = chosen ?? mapped.project ?? '';
    const summary = projectOf(folder);
    const outcome = await writeSession(mapped, sessionId, chosen, undefined);
    summary.sessions++;
    const messages = countMessages(mapped.events);
    summary.messages += messages;
    if (outcome.status === 'unchanged' || outcome.status === 'diverged') summary.unchanged++;
    else summary[outcome.status]++;
    if (outcome.status === 'diverged') {
      report.skipped.push({ file: source.file, reason: outcome.reason });
      return;
    }
    const entry: Waiting = { file: source.file, ids: [], imported: undefined, ledger: undefined };
    if (outcome.status !== 'unchanged') {
      entry.imported = {
        sessionId,
        sourceId: mapped.sourceId,
        file: source.file,
        project: folder || undefined,
        status: outcome.status,
        events: outcome.events,
        messages,
        subagents: mapped.children.length,
      };
    } else {
      report.skipped.push({ file: source.file, reason: 'nothing new since it was imported' });
    }
    // Subagents after their parent, each in its own transaction; a crash between them is caught up next time.
    for (const child of mapped.children) {
      const id = childId(sessionId, child.sourceId.split('/').pop() ?? '');
      if ((await writeSession(child, id, chosen, sessionId)).batched) entry.ids.push(id);
    }
    if (outcome.batched) entry.ids.unshift(sessionId);
    if (!report.dryRun && digest) {
      entry.ledger = {
        tool,
        file: source.file,
        size: digest.bytes,
        mtimeMs: stat.mtimeMs,
        sha256: digest.sha256,
        sessionId,
        project: folder,
        messages,
        chosen: chosen !== undefined,
      };
    }
    if (entry.ids.length === 0) return settle([entry], []);
    waiting.push(entry);
    if (freshLogs().size >= SEAL_BATCH) await startSeal();
  }

  /** A batch named: each waiting source is reported and put in the ledger, or skipped if a session of it failed. */
  function settle(entries: readonly Waiting[], results: readonly SealedLog[]): void {
    const failed = new Map(results.filter((r) => r.error).map((r) => [r.id, r.error]));
    for (const entry of entries) {
      const error = entry.ids.map((id) => failed.get(id)).find((e) => e !== undefined);
      if (error) {
        skip(entry.file, error);
        continue;
      }
      try {
        if (entry.imported) report.imported.push(entry.imported);
        if (entry.ledger) appendJsonlEvent(home, LEDGER_FILE, LedgerEntry, entry.ledger);
      } catch (failure) {
        skip(entry.file, failure);
      }
    }
  }

  function skip(file: string, error: unknown): void {
    report.skipped.push({ file, reason: error instanceof Error ? error.message : String(error) });
  }

  /** The folder chosen for this session: the user's (--project), undefined (none chosen), or null (filtered out). */
  function chosenFolder(mapped: MappedSession): string | undefined | null {
    if (options.project === undefined) return undefined;
    if ((options.paths ?? []).length > 0) return options.project;
    if (mapped.project === undefined) return null;
    let recorded: string;
    try {
      recorded = fs.realpathSync(mapped.project);
    } catch {
      recorded = path.resolve(mapped.project);
    }
    return recorded === options.project ? options.project : null;
  }

  type Outcome =
    | { status: 'new' | 'grown'; events: number; batched?: boolean }
    | { status: 'unchanged'; batched?: undefined }
    | { status: 'diverged'; reason: string; batched?: undefined };

  async function writeSession(
    mapped: MappedSession,
    id: string,
    chosen: string | undefined,
    parentId: string | undefined,
  ): Promise<Outcome> {
    // A session still in the batch (a second file of the same source id) is named first, then read as any other.
    if (batch?.has(id)) await sealAll();
    let log: SessionLog | undefined;
    try {
      log = SessionLog.open(home, id, { write: !report.dryRun });
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
    }
    if (!log) {
      if (!report.dryRun) createSession(mapped, id, chosen, parentId);
      return { status: 'new', events: mapped.events.length + 1, batched: !report.dryRun };
    }
    try {
      const outcome = appendNewPart(log, mapped, chosen);
      if (outcome.status !== 'record') return outcome;
    } finally {
      log.close();
    }
    // A record (imported without a folder, never continued here) now imported for its folder: it holds nothing
    // but the source's events, so it is made again, runnable. A crash in between leaves it absent, not half:
    // the next run makes it from the source.
    if (!report.dryRun) {
      sharedIndex().removeSession(id);
      fs.rmSync(sessionDir(home, id), { recursive: true, force: true });
      createSession(mapped, id, chosen, parentId);
    }
    return { status: 'new', events: mapped.events.length + 1, batched: !report.dryRun };
  }

  function createSession(
    mapped: MappedSession,
    id: string,
    chosen: string | undefined,
    parentId: string | undefined,
  ): void {
    const events = numbered(mapped.events, 2, new Map(), new Set());
    const closers = closersOf(events, events.length + 2);
    const all = [...events, ...closers];
    const pin = mapped.pin ?? fallbackPin(mapped.tool);
    // A Codex subagent or fork names its source thread: listed under the session made from it (imported or not yet).
    const parent = parentId ?? (mapped.parent ? keelId(mapped.tool, mapped.parent.sourceId) : undefined);
    const created: SessionEvent = {
      seq: 1,
      at: mapped.startedAt,
      kind: 'session_created',
      sessionId: id,
      ...(mapped.title ? { title: mapped.title } : {}),
      projectFolder: chosen ?? mapped.project ?? '',
      ...pin,
      toolMode: 'write',
      policy: 'ask',
      pathRoot: 'project',
      ...(parent ? { parentId: parent } : {}),
      metadata: {
        [IMPORT_METADATA_KEY]: {
          at: new Date().toISOString(),
          through: all.length + 1,
          projectChosen: chosen !== undefined,
        },
        history: {
          tool: mapped.tool,
          sourceId: mapped.sourceId,
          file: mapped.file,
          ...(mapped.parent ? { [mapped.parent.as === 'fork' ? 'forkedFrom' : 'spawnedBy']: parent } : {}),
        },
      },
    };
    const redacted = [created, ...all.map((event) => redact(event, redactor))];
    // The same checks `keel import FILE` makes (schemas, seq, every reference to an earlier event), on the lot.
    const checked = checkEvents(redacted);
    if (!checked.ok) {
      const first = checked.problems[0];
      throw new Error(
        `the mapped session does not validate (event ${first?.line}: ${first?.message}); nothing was written`,
      );
    }
    freshLogs().write(id, checked.events, (dir) => writeFiles(dir, mapped));
  }

  function appendNewPart(
    log: SessionLog,
    mapped: MappedSession,
    chosen: string | undefined,
  ): Outcome | { status: 'record' } {
    const existing = log.read({ fromSeq: 2 });
    const closed = new Set<string>();
    const held: SessionEvent[] = [];
    for (const event of existing) {
      if (event.kind === 'tool_result' && event.content === UNANSWERED_AT_IMPORT)
        closed.add(event.toolCallId);
      else held.push(event);
    }
    const seqOf = new Map<number, number>();
    for (let i = 0; i < held.length; i++) {
      const ours = mapped.events[i];
      const theirs = held[i] as SessionEvent;
      if (!ours || keyOf(ours) !== keyOf(theirs)) {
        return {
          status: 'diverged',
          reason:
            `session ${log.id} no longer matches its source at event ${theirs.seq} (continued in Keel, or the ` +
            'source was rewritten): its new part was not imported',
        };
      }
      seqOf.set(i + 2, theirs.seq);
    }
    const created = log.read({ fromSeq: 1, limit: 1 })[0];
    if (
      chosen !== undefined &&
      created?.kind === 'session_created' &&
      importMarkOf(created)?.projectChosen === false
    )
      return { status: 'record' };
    const rest = mapped.events.slice(held.length);
    if (rest.length === 0) return { status: 'unchanged' };
    const last = log.lastSeq();
    const events = numbered(rest, held.length + 2, seqOf, closed, last + 1);
    const all = [...events, ...closersOf([...existing, ...events], last + 1 + events.length)];
    if (report.dryRun) return { status: 'grown', events: all.length };
    writeFiles(log.dir, mapped);
    log.append(
      all.map((event) => {
        const { seq: _seq, ...rest } = redact(event, redactor);
        return rest as never;
      }),
      { expectedLastSeq: last, keepTimes: true },
    );
    return { status: 'grown', events: all.length };
  }
}

/** A source whose new sessions are in the batch: what is reported and put in the ledger once they are named. */
type Waiting = {
  file: string;
  ids: string[];
  imported: ImportedSessionReport | undefined;
  ledger: Omit<LedgerEntry, 'at'> | undefined;
};

/** The Keel id of a source session: the tool and its own id, in the characters a session id may hold. */
export function keelId(tool: ImportTool, sourceId: string): string {
  const safe = sourceId.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${tool === 'codex' ? 'codex' : 'cc'}-${safe}`.slice(0, 100);
}

/** The Keel id of a subagent of session `parent` (its key: `agent-<id>` or `side-<uuid>`). */
function childId(parent: string, key: string): string {
  return `${parent}-${key.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 128);
}

function fallbackPin(tool: ImportTool): ModelPin {
  return tool === 'codex' ? codexPin(SUGGESTED_MODEL.openai) : pinOf(SUGGESTED_MODEL.anthropic);
}

function countMessages(events: readonly MappedEvent[]): number {
  return events.filter((e) => e.kind === 'user_message' || e.kind === 'assistant_message').length;
}

/** What a session's event and a mapped one are compared by: enough to see the same history, cheap. */
function keyOf(event: MappedEvent | SessionEvent): string {
  const call = 'toolCallId' in event && typeof event.toolCallId === 'string' ? event.toolCallId : '';
  return `${event.kind}|${event.at}|${call}`;
}

/** Tool output is redacted on the way in, as Keel redacts its own tools' output where it is captured. */
function redact(event: SessionEvent, redactor: Redactor): SessionEvent {
  if (event.kind === 'tool_result' || event.kind === 'subagent_result') {
    const content = redactor.redact(event.content);
    return content === event.content ? event : { ...event, content };
  }
  return event;
}

function writeFiles(dir: string, mapped: MappedSession): void {
  for (const file of mapped.files) {
    const target =
      file.area === 'artifacts'
        ? path.join(artifactsDir(dir), file.name)
        : path.join(sessionAreaDir(dir), 'uploads', file.name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, file.data);
  }
}
