import type { EventOf } from '../../common/events.js';
import { isImportedSeq } from '../log/imported.js';
import { runParsed, type ParsedToolCall } from '../../tools/execute.js';
import type { TurnOutcome } from './host.js';
import { appendToolResult, awaitingApproval, stopTurn, toolContextFor, type TurnScope } from './scope.js';
import type { CallRecord } from './state.js';

/**
 * Settles a call started before a crash whose result was never recorded, the way its tool's resume rule says,
 * without repeating a side effect: a read re-runs; an edit applies at most once by the images its
 * tool_call_started recorded; anything else (a command, an edit without recorded images) becomes an approval
 * request saying the outcome is unknown, and runs again only once that request is granted.
 */
export async function settleUnknownOutcome(
  turn: TurnScope,
  record: CallRecord,
  parsed: ParsedToolCall,
  granted: boolean,
): Promise<TurnOutcome | undefined> {
  const started = record.started as EventOf<'tool_call_started'>;
  const key = started.idempotencyKey;
  const { resume } = parsed.tool;
  if (resume.rule === 'rerun') {
    appendToolResult(turn, record, await runParsed(parsed, toolContextFor(turn, key, record, false)), key);
    return undefined;
  }
  // A start that came from an imported file is a record of someone else's run, not a change approved here:
  // its recorded images do not let it past the gate, so it asks like any call whose outcome is unknown.
  const imported = isImportedSeq(turn.state.imported, started.seq);
  if (resume.rule === 'recorded_images' && started.postImageHash !== undefined && !imported) {
    const outcome = await resume.applyOnce(parsed.args, toolContextFor(turn, key, record, true), {
      preImageHash: started.preImageHash ?? null,
      postImageHash: started.postImageHash,
      ...(started.files ? { files: started.files } : {}),
    });
    appendToolResult(turn, record, outcome, key);
    return undefined;
  }
  // Nothing of the first run may still be running when its outcome is judged or it runs again.
  if (resume.rule === 'ask') await resume.endLeftovers?.(toolContextFor(turn, key, record, false));
  if (granted && record.request?.unknownOutcome) {
    const begun = Date.now();
    const outcome = await runParsed(parsed, toolContextFor(turn, key, record, true));
    turn.record(`tool:${parsed.tool.name}`, begun, { toolCallId: record.call.id, rerun: true });
    appendToolResult(turn, record, outcome, key);
    return turn.signal.aborted ? stopTurn(turn) : undefined;
  }
  turn.append({
    kind: 'approval_request',
    toolCallId: record.call.id,
    tool: parsed.tool.name,
    arguments: turn.host.tools.redactor.redact(record.call.arguments),
    reason: imported
      ? `outcome unknown: this ${parsed.tool.name} (key ${key}) started in the imported session and has no result; nothing of it was applied here. Approve to run it now, or deny to tell the model it did not complete.`
      : `outcome unknown: Keel stopped after starting this ${parsed.tool.name} (key ${key}) and before recording its result. Approve to run it again, or deny to tell the model it did not complete.`,
    unknownOutcome: true,
  });
  return awaitingApproval(turn.state);
}
