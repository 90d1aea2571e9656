import type { SessionEvent } from '../core/log/events.js';
import type { SessionLog } from '../core/log/sessionLog.js';
import { createTurnHost } from '../core/sessions/turnHost.js';
import { readSettings } from '../store/settings.js';
import { runTurn, TurnSetupError, type TurnOutcome } from '../core/turn/engine.js';
import { foldSession } from '../core/turn/state.js';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { ExitCode } from './exitCodes.js';

/** Shortens text for one line of tool activity on stderr. */
function clip(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** How to answer a pending approval, for the terminal. */
export function describeApproval(
  sessionId: string,
  event: Extract<SessionEvent, { kind: 'approval_request' }>,
): string[] {
  const lines = [
    `keel: approval needed (request ${event.seq}): ${event.tool} ${clip(event.arguments)}`,
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
    `  approve: keel approve ${sessionId} --request ${event.seq} --scope once|session|path:GLOB|prefix:CMD`,
    `  deny:    keel deny ${sessionId} --request ${event.seq} [--reason TEXT]`,
  );
  return lines;
}

/** The exit code of a turn's outcome: 0 completed, 3 awaiting approval, 130 interrupted, 1 failed. */
export function exitCodeOf(outcome: TurnOutcome): number {
  switch (outcome.status) {
    case 'completed':
      return ExitCode.ok;
    case 'awaiting_approval':
      return ExitCode.awaitingApproval;
    case 'interrupted':
      return ExitCode.interrupted;
    default:
      return ExitCode.failure;
  }
}

/**
 * Runs one turn of a session open for writing, streaming assistant text to stdout and tool activity to
 * stderr (or JSON lines to stdout with `json`). Ctrl-C stops the turn: the partial text is recorded as
 * interrupted and the exit code is 130. Sets the exit code from the outcome.
 */
export async function driveTurn(
  context: CliContext,
  log: SessionLog,
  input: { prompt?: string },
  options: { json?: boolean; maxSteps?: number },
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
    foldSession(log.read()).openCalls.map((record) => [record.call.id, record.call.arguments]),
  );
  try {
    const host = await createTurnHost(log, {
      env: io.env,
      compaction: readSettings(context.home()).compaction,
      signal: controller.signal,
      ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
      hooks: {
        onDelta: (delta) => {
          if (options.json) return emit({ type: 'delta', delta });
          if (delta.type === 'text') {
            io.stdout(delta.text);
            midLine = !delta.text.endsWith('\n');
          }
        },
        onNotice: (text) => (options.json ? emit({ type: 'notice', text }) : io.stderr(`keel: ${text}\n`)),
        onEvent: (event) => {
          if (options.json) return emit({ type: 'event', event });
          if (event.kind === 'assistant_message') {
            endLine();
            for (const call of event.toolCalls) callArguments.set(call.id, call.arguments);
          } else if (event.kind === 'tool_call_started') {
            io.stderr(`→ ${event.tool} ${clip(callArguments.get(event.toolCallId) ?? '')}\n`);
          } else if (event.kind === 'tool_result') {
            const status = event.isError ? 'error' : 'ok';
            const exit =
              event.exitCode !== undefined && event.exitCode !== null ? ` exit ${event.exitCode}` : '';
            io.stderr(`← ${event.tool ?? 'tool'} ${status}${exit}: ${clip(event.content)}\n`);
          } else if (event.kind === 'approval_request') {
            endLine();
            for (const line of describeApproval(log.id, event)) io.stderr(`${line}\n`);
          } else if (event.kind === 'interrupted') {
            endLine();
            io.stderr(
              `keel: turn interrupted${event.reason ? ` (${event.reason})` : ''}; continue with keel resume ${log.id}\n`,
            );
          } else if (event.kind === 'error') {
            endLine();
            io.stderr(`keel: ${event.message}\n`);
          }
        },
      },
    });
    const outcome = await runTurn(host, input);
    endLine();
    if (options.json) emit({ type: 'outcome', ...outcome });
    else if (outcome.status === 'budget_exhausted')
      io.stderr(`keel: stopped after ${outcome.steps} model requests (the turn's budget)\n`);
    context.setExitCode(exitCodeOf(outcome));
    return outcome;
  } catch (error) {
    if (error instanceof TurnSetupError) throw new CliError(error.message, ExitCode.failure);
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
