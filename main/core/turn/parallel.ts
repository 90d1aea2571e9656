import { parseToolCall, runParsed, type ParsedToolCall } from '../../tools/execute.js';
import type { ToolOutcome } from '../../tools/types.js';
import { crashPoint } from '../crash.js';
import { decideGate, keyFor } from './gate.js';
import { toolHasHooks } from './hookSteps.js';
import type { TurnOutcome } from './host.js';
import { appendToolResult, stopTurn, toolContextFor, type TurnScope } from './scope.js';
import type { CallRecord } from './state.js';

/** How many calls of one parallel run execute at once; the rest start as these finish, in call order. */
export const PARALLEL_CALLS = 8;

/** One call of a parallel run: its record, its validated arguments and the key its events carry. */
export type RunnableCall = { record: CallRecord; parsed: ParsedToolCall; key: string };

/**
 * The calls at the head of `records` that may run together: consecutive fresh calls (no request, decision,
 * start or result yet) whose tool is `kind: 'read'` with resume rule `rerun` (they change nothing, and one
 * cut off by a crash is simply run again) and that the gate lets run without asking. The first call that is
 * anything else ends the run; it is settled one at a time as before. Decided by kind and resume rule only,
 * never by a tool's name. Appends nothing.
 */
export async function parallelRun(turn: TurnScope, records: readonly CallRecord[]): Promise<RunnableCall[]> {
  const run: RunnableCall[] = [];
  for (const record of records) {
    if (record.request || record.decision || record.started || record.resultSeq !== undefined) break;
    const parsed = parseToolCall(turn.host.registry, record.call);
    if (!parsed.ok) break;
    const { tool } = parsed.call;
    if (tool.kind !== 'read' || tool.resume.rule !== 'rerun') break;
    // A call with PreToolUse or PostToolUse hooks is settled alone, its hooks around it (issue #30).
    if (toolHasHooks(turn, tool.name)) break;
    if ((await decideGate(turn, record, parsed.call)).action !== 'run') break;
    run.push({ record, parsed: parsed.call, key: keyFor(turn.state, record) });
  }
  return run;
}

/**
 * Runs the calls of a parallel run concurrently, at most PARALLEL_CALLS at once, started in call order:
 * each call's `tool_call_started` is appended as it starts, and its `tool_result` in call order (a call that
 * finishes early waits for the ones before it), so the log reads as the sequential engine's would, only with
 * starts moved earlier. A stop reaches every running tool through the turn's signal and starts no more
 * calls: once the started ones are answered the turn ends interrupted, the rest left unanswered as a stop
 * between sequential calls leaves them (the projection closes them as cancelled).
 */
export async function settleParallelRun(
  turn: TurnScope,
  run: readonly RunnableCall[],
): Promise<TurnOutcome | undefined> {
  const results: Promise<ToolOutcome>[] = [];
  let next = 0;
  let failure: Error | undefined;
  const start = (): void => {
    const call = run[next];
    if (call === undefined || turn.signal.aborted) return;
    const index = next++;
    turn.append({
      kind: 'tool_call_started',
      toolCallId: call.record.call.id,
      tool: call.parsed.tool.name,
      idempotencyKey: call.key,
    });
    crashPoint('after_tool_started');
    const begun = Date.now();
    results[index] = runParsed(call.parsed, toolContextFor(turn, call.key, call.record, false)).then(
      (outcome) => {
        turn.record(`tool:${call.parsed.tool.name}`, begun, {
          toolCallId: call.record.call.id,
          isError: outcome.isError,
          parallel: run.length,
        });
        return outcome;
      },
    );
    // The next call starts when one ends (runParsed never rejects), so at most PARALLEL_CALLS run at once.
    // An append that throws there is kept and rethrown below, never left as an unhandled rejection.
    void results[index].then(() => {
      try {
        start();
      } catch (error) {
        failure ??= error instanceof Error ? error : new Error(String(error));
      }
    });
  };
  for (let slot = 0; slot < Math.min(PARALLEL_CALLS, run.length); slot++) start();
  for (let index = 0; index < run.length; index++) {
    // Each call ended before this one starts another, so a missing result means a stop or a failed start.
    const result = results[index];
    if (result === undefined) {
      if (failure !== undefined) throw failure;
      break;
    }
    const outcome = await result;
    const call = run[index] as RunnableCall;
    crashPoint('after_tool_executed_before_result');
    appendToolResult(turn, call.record, outcome, call.key);
  }
  return turn.signal.aborted ? stopTurn(turn) : undefined;
}
