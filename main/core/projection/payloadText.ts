import type { Payload } from '../../common/payload.js';

/**
 * A payload as a person reads it (`keel payload`, the compaction inspector): each message under
 * `--- role ---` (tool: `--- tool (call id) ---`), its content, then `→ name id arguments` per call.
 */
export function formatPayloadText(payload: Payload): string {
  return payload.messages
    .map((message) => {
      const header =
        message.role === 'tool' ? `--- tool (${message.toolCallId ?? '?'}) ---` : `--- ${message.role} ---`;
      const calls = (message.toolCalls ?? []).map((call) => `→ ${call.name} ${call.id} ${call.arguments}`);
      return [header, ...(message.content === '' ? [] : [message.content]), ...calls].join('\n');
    })
    .join('\n\n');
}
