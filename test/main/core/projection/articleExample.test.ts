import { describe, expect, it } from 'vitest';
import { SessionEvent } from '../../../../main/common/events.js';
import { projectPayload, validatePayload } from '../../../../main/core/projection/index.js';
import { AT } from './eventFactory.js';

const SYSTEM = 'You are Keel, a coding agent. Work only inside the workspace.';
const GOAL = 'add rate limiting to the api';
const SUMMARY =
  'The user asked for rate limiting; grep found 42 handlers; an edit of src/server.go was requested.';
const PARTIAL = 'I added a token bucket in src/server.go. Next I will wire it into';
const grepCall = { id: 'call_grep', name: 'grep', arguments: '{"pattern":"http.Handle"}' };
const editCall = { id: 'call_edit', name: 'edit_file', arguments: '{"path":"src/server.go"}' };

// The nine events of harness-article.txt, in our event kinds.
const nineEvents = [
  { seq: 1, kind: 'user_message', content: GOAL },
  { seq: 2, kind: 'assistant_message', content: '', toolCalls: [grepCall] },
  { seq: 3, kind: 'tool_result', toolCallId: 'call_grep', content: '42 hits', artifact: '/run/7/grep.json' },
  { seq: 4, kind: 'assistant_message', content: '', toolCalls: [editCall] },
  {
    seq: 5,
    kind: 'approval_request',
    toolCallId: 'call_edit',
    tool: 'edit_file',
    arguments: editCall.arguments,
  },
  { seq: 6, kind: 'approval_granted', requestSeq: 5, scope: 'session' },
  { seq: 7, kind: 'tool_result', toolCallId: 'call_edit', content: 'ok', idempotencyKey: 'ev6-edit' },
  { seq: 8, kind: 'compaction', through: 5, summary: SUMMARY, pinned: GOAL },
  { seq: 9, kind: 'interrupted', content: PARTIAL },
].map((event) => SessionEvent.parse({ ...event, at: AT }));

describe('the nine-event log of harness-article.txt', () => {
  it('projects to the summary, the pinned goal and the cut-off turn, dropping the orphaned edit result', () => {
    const payload = projectPayload(nineEvents, { system: SYSTEM });
    // Event 7 answers a call made in event 4, which the compaction (through 5) replaced: an orphan.
    expect(payload).toEqual({
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'system', content: `Session so far: ${SUMMARY}` },
        { role: 'user', content: GOAL },
        { role: 'assistant', content: `${PARTIAL}\n[interrupted by the user]` },
      ],
    });
    expect(validatePayload(payload)).toEqual({ ok: true });
  });

  it('rebuilds the whole conversation without compaction 8', () => {
    const payload = projectPayload(nineEvents, { system: SYSTEM, withoutCompaction: 8 });
    expect(payload).toEqual({
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: GOAL },
        { role: 'assistant', content: '', toolCalls: [grepCall] },
        { role: 'tool', content: '42 hits', toolCallId: 'call_grep' },
        { role: 'assistant', content: '', toolCalls: [editCall] },
        { role: 'tool', content: 'ok', toolCallId: 'call_edit' },
        { role: 'assistant', content: `${PARTIAL}\n[interrupted by the user]` },
      ],
    });
    expect(validatePayload(payload)).toEqual({ ok: true });
  });

  it('closes the edit call as cancelled while its approval is pending (events 1..5)', () => {
    const payload = projectPayload(nineEvents.slice(0, 5), { system: SYSTEM });
    expect(payload.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', toolCalls: [editCall] },
      { role: 'tool', content: '{"error":"cancelled_by_user"}', toolCallId: 'call_edit' },
    ]);
  });
});
