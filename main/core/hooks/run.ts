import { createHash } from 'node:crypto';
import path from 'node:path';
import type { HookEventName, HookRan } from '../../common/hookEvents.js';
import type { NewEvent, SessionEvent } from '../../common/events.js';
import { runHookProcess } from '../../runner/hookProcess.js';
import { extraWritablePaths, readOnlyPathsFor } from '../../tools/runCommandTool.js';
import type { TurnHost } from '../turn/host.js';
import type { SessionState } from '../turn/state.js';
import { matcherPicks, type HookDef } from './config.js';
import { readHookRun, type HookVerdict } from './output.js';

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
  /** `continue: false` from any run. */
  stop?: boolean;
  /** The events appended (or read back). */
  runs: HookRan[];
};

/** What the hooks runner needs of a turn. */
export type HookScope = {
  host: TurnHost;
  state: SessionState;
  append(event: NewEvent): SessionEvent;
  /** The turn's stop: a running hook is killed (its run is then an error). */
  readonly signal?: AbortSignal;
};

const RANK: Record<HookRan['decision'], number> = { none: 0, error: 1, allow: 2, ask: 3, block: 4, deny: 5 };

/**
 * The hooks of `event` whose matcher picks one of `names` (a tool's names, a SessionStart source…); events
 * without a matcher (UserPromptSubmit, Stop) take every hook of theirs.
 */
export function hooksFor(host: TurnHost, event: HookEventName, names?: readonly string[]): HookDef[] {
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
    if (recorded.length > 0) return combine(recorded);
  }
  if (options.replayOnly) return undefined;
  const tools = host.tools;
  const boxRoot = tools.boxRoot ?? tools.workspace;
  const cwd = path.resolve(tools.workspace, tools.commandCwd ?? '.');
  const stdin = JSON.stringify({
    session_id: scope.state.sessionId,
    transcript_path: '',
    cwd,
    permission_mode: scope.state.policy,
    hook_event_name: options.event,
    ...options.input,
  });
  const inputDigest = createHash('sha256').update(stdin).digest('hex');
  const writable = extraWritablePaths(boxRoot, tools.areas ?? []);
  // The hooks of one event run together (as the formats run them); their events are appended in order.
  const results = await Promise.all(
    options.hooks.map(async (hook) => {
      const result = await runHookProcess({
        sandbox: tools.sandbox,
        command: hook.command,
        stdin,
        workspace: boxRoot,
        cwd,
        ...(writable.length > 0 ? { writable } : {}),
        readOnly: [...readOnlyPathsFor(boxRoot), ...(tools.boxReadOnly ?? [])],
        ...(tools.boxHidden && tools.boxHidden.length > 0 ? { hidden: [...tools.boxHidden] } : {}),
        network: tools.network ?? 'none',
        env: { CLAUDE_PROJECT_DIR: cwd, KEEL_PROJECT_DIR: cwd, KEEL_HOOK_EVENT: options.event },
        timeoutMs: hook.timeoutMs,
        capBytes: HOOK_OUTPUT_CAP,
        ...(scope.signal ? { signal: scope.signal } : {}),
      });
      return { hook, result, verdict: readHookRun(options.event, { ...result, timeoutMs: hook.timeoutMs }) };
    }),
  );
  const runs: HookRan[] = [];
  for (const { hook, result, verdict } of results) {
    const redact = (text: string) => tools.redactor.redact(text);
    const printed = [result.stdout, result.stderr].filter((text) => text !== '').join('\n');
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
  const updated =
    decision === 'deny' ? undefined : runs.filter((run) => run.updatedInput).at(-1)?.updatedInput;
  return {
    decision,
    ...(reason ? { reason } : {}),
    ...(updated ? { updatedInput: updated } : {}),
    ...(runs.some((run) => run.stop) ? { stop: true } : {}),
    runs: [...runs],
  };
}
