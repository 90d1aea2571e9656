import { createHash } from 'node:crypto';
import path from 'node:path';
import type { HookEventName, HookRan } from '../../common/hookEvents.js';
import type { NewEvent, SessionEvent } from '../../common/events.js';
import { runHookProcess } from '../../runner/hookProcess.js';
import { extraWritablePaths, readOnlyPathsFor } from '../../tools/runCommandTool.js';
import { visibleEvents } from '../projection/rewind.js';
import type { TurnHost } from '../turn/host.js';
import type { SessionState } from '../turn/state.js';
import { matcherPicks, permissionModeOf, type HookDef } from './config.js';
import { homeHookMounts } from './homeScripts.js';
import { readHookRun, type HookVerdict } from './output.js';
import { writeTranscript, type WrittenTranscript } from './transcript.js';

/*
 * Runs the hooks of one event for a turn: each matching command in the session's box (the project as its
 * folder, the session's network policy, never on the host), its input on stdin, its output capped and
 * redacted, each run one `hook_ran` event appended before its decision is acted on. A subject already
 * decided in the log (a resumed turn) is read back from its events, never run again.
 */

/** Kept of each stream a hook prints; the rest is counted and dropped (a 50 MB print costs this). */
export const HOOK_OUTPUT_CAP = 64 * 1024;
/** Of that, what the event keeps (redacted). */
const EVENT_CLIP = 4 * 1024;

/** What running (or replaying) the hooks of one event says, all runs combined. */
export type HookOutcome = {
  /** deny over block over ask over allow over error over none. */
  decision: HookRan['decision'];
  /** The deciding runs' reasons, joined, with the hook's source. */
  reason?: string;
  /** The last `updatedInput` of a run that did not deny. */
  updatedInput?: Record<string, unknown>;
  /** `continue: false` from any run: the turn ends once the hooks ran, over any decision. */
  stop?: boolean;
  /** With `stop`: the runs' `stopReason`s (with each hook's source), for the user. */
  stopReason?: string;
  /** Read back from the log (a resumed turn), not run now. */
  replayed?: true;
  /** The events appended (or read back). */
  runs: HookRan[];
};

/** What running hooks needs of a host: a turn's, or the one a manual compaction builds (harness/hookHost.ts). */
export type HookHost = Pick<TurnHost, 'log' | 'tools' | 'lifecycleHooks' | 'hooks'>;

/** What the hooks runner needs of a turn. */
export type HookScope = {
  host: HookHost;
  state: SessionState;
  append(event: NewEvent): SessionEvent;
  /** The turn's stop: a running hook is killed (its run is then an error). */
  readonly signal?: AbortSignal;
  /**
   * The turn's `beforeChanges` (a hook's command can change files as a tool's can): a `--commit direct` folder's
   * photograph, a view's pending baseline, the redactor's .env walk, all before the command runs.
   */
  beforeChanges?(): Promise<void>;
};

const RANK: Record<HookRan['decision'], number> = { none: 0, error: 1, allow: 2, ask: 3, block: 4, deny: 5 };

/**
 * The hooks of `event` whose matcher picks one of `names` (a tool's names, a SessionStart source…); events
 * without a matcher (UserPromptSubmit, Stop) take every hook of theirs.
 */
export function hooksFor(
  host: Pick<HookHost, 'lifecycleHooks'>,
  event: HookEventName,
  names?: readonly string[],
): HookDef[] {
  return (host.lifecycleHooks ?? []).filter(
    (hook) => hook.event === event && (names === undefined || matcherPicks(hook.matcher, names)),
  );
}

/**
 * Runs (or reads back) the hooks of `event` for `subject` (`call:<id>`, `stop:<seq>`…). `input`: the
 * event's own fields; the common ones (session_id, cwd, hook_event_name…) are added here. `since`: where the
 * log's events about this subject start (read back from there). Undefined when no hook matches.
 */
export async function runHooks(
  scope: HookScope,
  options: {
    event: HookEventName;
    subject: string;
    hooks: readonly HookDef[];
    input: Record<string, unknown>;
    since?: number;
    /** Only read back what the log holds (a started call: its hooks are not run after the fact). */
    replayOnly?: boolean;
    onNotice?: (text: string) => void;
  },
): Promise<HookOutcome | undefined> {
  const { host } = scope;
  if (options.hooks.length === 0) return undefined;
  if (options.since !== undefined) {
    const recorded = host.log
      .read({ fromSeq: options.since, validate: false })
      .filter(
        (e): e is HookRan =>
          e.kind === 'hook_ran' && e.subject === options.subject && e.event === options.event,
      );
    if (recorded.length > 0) return { ...combine(recorded), replayed: true };
  }
  if (options.replayOnly) return undefined;
  const tools = host.tools;
  const cwd = path.resolve(tools.workspace, tools.commandCwd ?? '.');
  const redact = (text: string) => tools.redactor.redact(text);
  // The conversation so far, redacted, in a private folder outside the project and Keel's home (transcript.ts).
  const transcript = writeTranscript(visibleEvents(host.log.read({ validate: false })), {
    sessionId: scope.state.sessionId,
    cwd,
    redact,
  });
  let results;
  try {
    await scope.beforeChanges?.();
    results = await runAll(scope, options, cwd, transcript);
  } finally {
    transcript.remove();
  }
  const runs: HookRan[] = [];
  for (const { hook, result, verdict, inputDigest } of results) {
    // suppressOutput: the hook's stdout is not kept (what it decided still is).
    const printed = [verdict.suppressOutput ? '' : result.stdout, result.stderr]
      .filter((text) => text !== '')
      .join('\n');
    const event = scope.append({
      kind: 'hook_ran',
      source: hook.source,
      sha256: hook.sha256,
      command: hook.command,
      event: options.event,
      subject: options.subject,
      inputDigest,
      ...redactedVerdict(verdict, redact),
      output: redact(printed.slice(0, EVENT_CLIP)),
      bytes: result.bytes,
      exitCode: result.exitCode,
      ...(result.timedOut ? { timedOut: true } : {}),
      durationMs: result.durationMs,
    }) as HookRan;
    runs.push(event);
    if (verdict.decision === 'error')
      options.onNotice?.(
        `${options.event} hook (${hook.source}) failed: ${event.reason ?? ''}; the session goes on`,
      );
    if (event.systemMessage)
      options.onNotice?.(`${options.event} hook (${hook.source}): ${event.systemMessage}`);
  }
  return combine(runs);
}

/**
 * The matching hooks of one event, run together (as the formats run them) in the session's box, each reading
 * the same input on stdin; a user's hook also sees its own scripts, read-only (homeScripts.ts).
 */
async function runAll(
  scope: HookScope,
  options: { event: HookEventName; hooks: readonly HookDef[]; input: Record<string, unknown> },
  cwd: string,
  transcript: WrittenTranscript,
) {
  const { tools } = scope.host;
  const boxRoot = tools.boxRoot ?? tools.workspace;
  const stdin = JSON.stringify({
    session_id: scope.state.sessionId,
    transcript_path: transcript.file,
    cwd,
    permission_mode: permissionModeOf(scope.state.policy, scope.state.planMode),
    hook_event_name: options.event,
    ...options.input,
  });
  const inputDigest = createHash('sha256').update(stdin).digest('hex');
  const writable = extraWritablePaths(boxRoot, tools.areas ?? []);
  const hidden = [...(tools.boxHidden ?? [])];
  return Promise.all(
    options.hooks.map(async (hook) => {
      const home = homeHookMounts(hook, hidden);
      const result = await runHookProcess({
        sandbox: tools.sandbox,
        command: hook.command,
        stdin,
        workspace: boxRoot,
        cwd,
        ...(writable.length > 0 ? { writable } : {}),
        readOnly: [
          ...readOnlyPathsFor(boxRoot),
          ...(tools.boxReadOnly ?? []),
          transcript.folder,
          ...(home?.readOnly ?? []),
        ],
        ...(hidden.length > 0 ? { hidden } : {}),
        ...(home ? { homeVariable: home.homeVariable } : {}),
        network: tools.network ?? 'none',
        env: { CLAUDE_PROJECT_DIR: cwd, KEEL_PROJECT_DIR: cwd, KEEL_HOOK_EVENT: options.event },
        timeoutMs: hook.timeoutMs,
        capBytes: HOOK_OUTPUT_CAP,
        ...(scope.signal ? { signal: scope.signal } : {}),
      });
      const verdict = readHookRun(options.event, { ...result, timeoutMs: hook.timeoutMs });
      return { hook, result, verdict, inputDigest };
    }),
  );
}

function redactedVerdict(
  verdict: HookVerdict,
  redact: (text: string) => string,
): Pick<HookRan, 'decision'> & Partial<HookRan> {
  return {
    decision: verdict.decision,
    ...(verdict.reason !== undefined ? { reason: redact(verdict.reason.slice(0, EVENT_CLIP)) } : {}),
    ...(verdict.context !== undefined ? { context: redact(verdict.context.slice(0, EVENT_CLIP)) } : {}),
    ...(verdict.updatedInput ? { updatedInput: verdict.updatedInput } : {}),
    ...(verdict.stop ? { stop: true } : {}),
    ...(verdict.stopReason !== undefined
      ? { stopReason: redact(verdict.stopReason.slice(0, EVENT_CLIP)) }
      : {}),
    ...(verdict.suppressOutput ? { suppressed: true } : {}),
    ...(verdict.systemMessage !== undefined
      ? { systemMessage: redact(verdict.systemMessage.slice(0, EVENT_CLIP)) }
      : {}),
  };
}

/** The runs of one event taken together (also what a resumed turn reads back). */
export function combine(runs: readonly HookRan[]): HookOutcome {
  let decision: HookRan['decision'] = 'none';
  for (const run of runs) if (RANK[run.decision] > RANK[decision]) decision = run.decision;
  const deciding = runs.filter((run) => run.decision === decision && run.reason);
  const reason = deciding.map((run) => `${run.reason} (${run.event} hook, ${run.source})`).join('; ');
  const stopping = runs.filter((run) => run.stop);
  const stopReason = stopping
    .map((run) => `${run.stopReason ?? 'no reason given'} (${run.event} hook, ${run.source})`)
    .join('; ');
  const updated =
    decision === 'deny' ? undefined : runs.filter((run) => run.updatedInput).at(-1)?.updatedInput;
  return {
    decision,
    ...(reason ? { reason } : {}),
    ...(updated ? { updatedInput: updated } : {}),
    ...(stopping.length > 0 ? { stop: true } : {}),
    ...(stopReason ? { stopReason } : {}),
    runs: [...runs],
  };
}
