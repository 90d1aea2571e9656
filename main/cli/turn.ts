import type { CommandUse } from '../common/customEvents.js';
import type { SessionEvent } from '../common/events.js';
import { clip } from '../common/text.js';
import { PRESENT_PLAN_TOOL, planTextOf } from '../common/planEvents.js';
import {
  allowedScopes,
  type AttachmentInput,
  createHarness,
  type Harness,
  homeStoredKeys,
  type HarnessStreamPart,
  loadSessionState,
  type LocalHarnessSession,
  type ScopeKind,
  SessionNotFoundError,
  streamHarness,
  type TurnOutcome,
  TurnSetupError,
} from '../core/harness/index.js';
import type { CliContext } from './context.js';
import { attentionSequence } from './attention.js';
import { CliError } from './errors.js';
import { ExitCode } from './exitCodes.js';
import { describeCommit } from './format.js';
import { withSessionLog } from './session.js';

/** Shortens text for one line of tool activity on stderr. */
const clipActivity = (text: string) => clip(text, 120);

/**
 * The session API over the CLI's home: the CLI is a host of `keel/core` like the app, so sessions are
 * made with `harness.sessions.getOrCreate` and turns run through `streamHarness` (which resets and commits
 * Persistent Dir checkouts around them). Keys: those `keel serve` keeps in the home's key file (an endpoint's own
 * key included, issue #37), else the process environment; read at every turn.
 */
export function cliHarness(context: CliContext): Harness {
  const home = context.home();
  return createHarness({ home, env: context.io.env, keys: () => homeStoredKeys(home) });
}

/** The session's handle; a SessionNotFoundError (exit 2, "see keel sessions") when there is no such session. */
export async function cliSession(harness: Harness, id: string): Promise<LocalHarnessSession> {
  const session = (await harness.sessions.get(id)) as LocalHarnessSession | undefined;
  if (!session) throw new SessionNotFoundError(id);
  return session;
}

/** How to answer a pending approval, for the terminal. */
export function describeApproval(
  sessionId: string,
  event: Extract<SessionEvent, { kind: 'approval_request' }>,
): string[] {
  if (event.tool === PRESENT_PLAN_TOOL) {
    return [
      `keel: the plan (request ${event.seq}) waits for your decision`,
      `  approve:   keel plan ${sessionId} --approve [--policy ask|auto-edit|full-auto] [--resume]`,
      `  send back: keel plan ${sessionId} --reject "what to change" [--resume]`,
    ];
  }
  const lines = [
    `keel: approval needed (request ${event.seq}): ${event.tool} ${clipActivity(event.arguments)}`,
    ...(event.reason ? [`  why: ${event.reason}`] : []),
  ];
  if (event.diff)
    lines.push(
      ...event.diff
        .trimEnd()
        .split('\n')
        .map((line) => `  ${line}`),
    );
  lines.push(
    `  approve: keel approve ${sessionId} --request ${event.seq} --scope ${scopeHint(event)}`,
    `  deny:    keel deny ${sessionId} --request ${event.seq} [--reason TEXT]`,
  );
  return lines;
}

/** The scopes `keel approve` takes for this request, as its --scope values. */
function scopeHint(event: Extract<SessionEvent, { kind: 'approval_request' }>): string {
  const words: Record<ScopeKind, string> = {
    once: 'once',
    session: 'session',
    tool: 'tool',
    path: 'path:GLOB',
    prefix: 'prefix:CMD',
    domain: 'domain:HOST',
  };
  return allowedScopes(event)
    .map((kind) => words[kind])
    .join('|');
}

/**
 * The exit code of a turn's outcome: 0 completed, 3 awaiting approval, 4 the model declined (or a content filter
 * stopped it), 5 the reply was cut short (output limit, context window, a pause), 6 a spend cap stopped it,
 * 130 interrupted, 1 failed.
 */
export function exitCodeOf(outcome: TurnOutcome): number {
  switch (outcome.status) {
    case 'completed':
      // A hook's continue: false (issue #30) ends the turn as the user's setup asked: exit 0, its reason shown.
      if (outcome.stop === undefined || outcome.stop.kind === 'hook') return ExitCode.ok;
      return outcome.stop.kind === 'refusal' || outcome.stop.kind === 'content_filter'
        ? ExitCode.declined
        : ExitCode.cutShort;
    case 'awaiting_approval':
      return ExitCode.awaitingApproval;
    case 'interrupted':
      return ExitCode.interrupted;
    case 'budget_reached':
      return ExitCode.budgetReached;
    default:
      return ExitCode.failure;
  }
}

/**
 * Runs one turn of a session through `streamHarness` (a new one with `prompt`, else the unfinished one
 * continues), streaming assistant text to stdout and tool activity, approvals, commits and notices to
 * stderr (or JSON lines to stdout with `json`: delta, event, notice, commit, outcome). Ctrl-C aborts the
 * turn through its signal: the partial text is recorded as interrupted and the exit code is 130. Takes the
 * session's writer lease only while the turn runs. Sets the exit code from the outcome.
 */
export async function driveTurn(
  context: CliContext,
  harness: Harness,
  sessionId: string,
  input: { prompt?: string; command?: CommandUse; attachments?: readonly AttachmentInput[] },
  options: { json?: boolean; maxSteps?: number; showReasoning?: boolean; plan?: boolean },
): Promise<TurnOutcome> {
  const { io } = context;
  const controller = new AbortController();
  const onSigint = () => {
    if (!options.json) io.stderr('\nkeel: stopping…\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  let midLine = false;
  const endLine = () => {
    if (midLine) io.stdout('\n');
    midLine = false;
  };
  const emit = (value: unknown) => io.stdout(`${JSON.stringify(value)}\n`);
  // Calls made before this process started (a resumed turn) are printed with their arguments too.
  const callArguments = new Map<string, string>(
    withSessionLog(harness.home, sessionId, (log) =>
      loadSessionState(log).openCalls.map((record) => [record.call.id, record.call.arguments]),
    ),
  );
  const printEvent = (event: SessionEvent) => {
    if (event.kind === 'assistant_message') {
      endLine();
      for (const call of event.toolCalls) callArguments.set(call.id, call.arguments);
    } else if (event.kind === 'tool_call_started') {
      io.stderr(`→ ${event.tool} ${clipActivity(callArguments.get(event.toolCallId) ?? '')}\n`);
    } else if (event.kind === 'tool_result') {
      const status = event.isError ? 'error' : 'ok';
      const exit = event.exitCode !== undefined && event.exitCode !== null ? ` exit ${event.exitCode}` : '';
      io.stderr(`← ${event.tool ?? 'tool'} ${status}${exit}: ${clipActivity(event.content)}\n`);
    } else if (event.kind === 'approval_request') {
      endLine();
      // A plan (issue #30) is the turn's answer: its markdown goes to stdout, the ways to answer it to stderr.
      const plan = event.tool === PRESENT_PLAN_TOOL ? planTextOf(event.arguments) : undefined;
      if (plan !== undefined) io.stdout(`${plan}\n`);
      for (const line of describeApproval(sessionId, event)) io.stderr(`${line}\n`);
      // The turn now waits on a person: ring the terminal (issue #32).
      const ring = attentionSequence(io.env, io.stderrIsTTY === true, `Keel: ${event.tool} needs approval`);
      if (ring !== '') io.stderr(ring);
    } else if (event.kind === 'interrupted') {
      endLine();
      io.stderr(
        `keel: turn interrupted${event.reason ? ` (${event.reason})` : ''}; continue with keel resume ${sessionId}\n`,
      );
    } else if (event.kind === 'error' || event.kind === 'budget_reached') {
      endLine();
      io.stderr(`keel: ${event.message}\n`);
    }
  };
  let reasoningMidLine = false;
  const print = (part: HarnessStreamPart) => {
    // Reasoning ends on its own line before anything else is printed.
    if (reasoningMidLine && part.type !== 'reasoning') {
      io.stderr('\n');
      reasoningMidLine = false;
    }
    switch (part.type) {
      case 'text':
        if (options.json) return emit({ type: 'delta', delta: part });
        io.stdout(part.text);
        midLine = !part.text.endsWith('\n');
        return;
      case 'reasoning':
        if (options.json) return emit({ type: 'delta', delta: part });
        // Dimmed (SGR 2) on stderr, so stdout stays the answer alone.
        if (options.showReasoning) {
          io.stderr(`\x1b[2m${part.text}\x1b[22m`);
          reasoningMidLine = !part.text.endsWith('\n');
        }
        return;
      case 'tool_call':
        if (options.json) emit({ type: 'delta', delta: part });
        return;
      case 'event':
        return options.json ? emit({ type: 'event', event: part.event }) : printEvent(part.event);
      case 'notice':
        return options.json ? emit({ type: 'notice', text: part.text }) : io.stderr(`keel: ${part.text}\n`);
      case 'commit':
        if (options.json) return emit({ type: 'commit', report: part.report });
        endLine();
        io.stderr(`${describeCommit(part.report)}\n`);
        return;
      // Live command output and subagents' own events stay in their logs (keel show, keel trace).
      case 'started':
      case 'tool_output':
      case 'subagent_event':
      case 'subagent_output':
        return;
    }
  };
  try {
    const stream = streamHarness({
      harness,
      session: sessionId,
      messages:
        input.prompt !== undefined
          ? [
              {
                role: 'user',
                content: input.prompt,
                ...(input.command ? { command: input.command } : {}),
                ...(input.attachments?.length ? { attachments: input.attachments } : {}),
              },
            ]
          : [],
      signal: controller.signal,
      ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
      // Issue #30: `keel run --plan` turns plan mode on before the prompt.
      ...(options.plan && input.prompt !== undefined ? { planMode: true } : {}),
    });
    for await (const part of stream) print(part);
    const { outcome } = await stream.result;
    endLine();
    if (options.json) emit({ type: 'outcome', ...outcome });
    else if (outcome.status === 'completed' && outcome.stop) io.stderr(`keel: ${outcome.stop.message}\n`);
    else if (outcome.status === 'budget_exhausted')
      io.stderr(`keel: stopped after ${outcome.steps} model requests (the turn's budget)\n`);
    context.setExitCode(exitCodeOf(outcome));
    return outcome;
  } catch (error) {
    endLine();
    if (error instanceof TurnSetupError) throw new CliError(error.message, ExitCode.failure);
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
    // Issue #30: the command exits, so the session ends for it (SessionEnd hooks, reason `other`: no prompt
    // input was open), within the end's budget; what failed there is a notice, never the command's exit code.
    await harness.endSessions({
      reason: 'other',
      onNotice: (text) => (options.json ? emit({ type: 'notice', text }) : io.stderr(`keel: ${text}\n`)),
    });
  }
}
