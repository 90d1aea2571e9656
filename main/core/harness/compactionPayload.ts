import type { SessionLog } from '../log/sessionLog.js';
import { formatPayloadText } from '../projection/payloadText.js';
import { projectView } from '../projection/projectPayload.js';
import type { Payload } from '../../common/payload.js';
import { systemPromptFor } from './workspace.js';
import { HarnessError } from './errors.js';

/**
 * The payload the next turn would send, and the same rebuilt as if compaction `seq` had never been appended,
 * both as text for a diff editor. The system prompt is the one turns send (the session's, plus the workspace
 * description of a checkout session). Reads only. `not_found` when `seq` is not a compaction.
 */
export function comparePayloads(
  log: SessionLog,
  seq: number,
): { current: { text: string; messageCount: number }; without: { text: string; messageCount: number } } {
  const [event] = log.read({ fromSeq: seq, toSeq: seq });
  if (event?.kind !== 'compaction') {
    throw new HarnessError('not_found', `event ${seq} of session ${log.id} is not a compaction`);
  }
  const [created] = log.read({ fromSeq: 1, limit: 1 });
  if (created?.kind !== 'session_created') {
    throw new HarnessError('invalid_state', `session ${log.id} has no session_created event`);
  }
  const system = systemPromptFor(log.dir, created);
  const render = (payload: Payload) => ({
    text: formatPayloadText(payload),
    messageCount: payload.messages.length,
  });
  return {
    current: render(projectView(log.projectionView(), { system })),
    without: render(projectView(log.projectionView({ withoutCompaction: seq }), { system })),
  };
}
