import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, SessionEvent } from '../../../main/common/events.js';

describe('event kinds', () => {
  it('covers every kind the design names', () => {
    for (const kind of [
      'session_created',
      'user_message',
      'assistant_message',
      'tool_call_started',
      'tool_result',
      'approval_request',
      'approval_granted',
      'approval_denied',
      'compaction',
      'interrupted',
      'file_staged',
      'persistent_commit',
      'subagent_started',
      'subagent_result',
      'model_changed',
      'instructions_loaded',
      'error',
    ]) {
      expect(EVENT_KINDS).toContain(kind);
    }
  });

  it('rejects an event with an unknown kind or a malformed scope', () => {
    expect(SessionEvent.safeParse({ seq: 1, at: 'x', kind: 'assistent_message', content: '' }).success).toBe(
      false,
    );
    expect(
      SessionEvent.safeParse({ seq: 2, at: 'x', kind: 'approval_granted', requestSeq: 1, scope: 'forever' })
        .success,
    ).toBe(false);
    expect(
      SessionEvent.safeParse({
        seq: 2,
        at: 'x',
        kind: 'approval_granted',
        requestSeq: 1,
        scope: 'path:src/**',
      }).success,
    ).toBe(true);
  });

  it('defaults toolCalls to an empty list on assistant messages', () => {
    const parsed = SessionEvent.parse({ seq: 3, at: 'x', kind: 'assistant_message', content: 'hi' });
    expect(parsed.kind === 'assistant_message' && parsed.toolCalls).toEqual([]);
  });
});
