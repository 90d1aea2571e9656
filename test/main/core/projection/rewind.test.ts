import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import { projectPayload } from '../../../../main/core/projection/projectPayload.js';
import { rewindPoints, rewindProblem, visibleEvents } from '../../../../main/core/projection/rewind.js';

let seq = 0;
const event = (fields: Record<string, unknown>) =>
  ({ toolCalls: [], ...fields, seq: ++seq, at: '2026-12-01T00:00:00.000Z' }) as unknown as SessionEvent;
const created = () =>
  event({
    kind: 'session_created',
    sessionId: 's',
    projectFolder: '/p',
    provider: 'openai-compatible',
    model: 'm',
    contextWindow: 1000,
    toolMode: 'write',
    policy: 'ask',
  });

/** turn 1 answered; turn 2 made a call, got its result, and a compaction of everything was appended. */
function session(): SessionEvent[] {
  seq = 0;
  return [
    created(),
    event({ kind: 'user_message', content: 'first' }),
    event({ kind: 'assistant_message', content: 'one' }),
    event({ kind: 'user_message', content: 'second' }),
    event({
      kind: 'assistant_message',
      content: '',
      toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{}' }],
    }),
    event({ kind: 'tool_result', toolCallId: 'c1', content: 'file text' }),
    event({ kind: 'compaction', through: 6, summary: 'did two turns', pinned: 'first' }),
  ];
}

describe('rewind in the projection', () => {
  it('projects exactly the conversation up to the rewind point, a compaction in the set-aside part ignored', () => {
    const events = session();
    const upTo3 = events.slice(0, 3);
    const rewound = [...events, event({ kind: 'rewound', toSeq: 3 })];
    expect(projectPayload(rewound, { system: 'S' })).toEqual(projectPayload(upTo3, { system: 'S' }));
    const next = [...rewound, event({ kind: 'user_message', content: 'third' })];
    const messages = projectPayload(next, { system: 'S' }).messages;
    expect(messages.map((m) => m.content)).toEqual(['S', 'first', 'one', 'third']);
  });

  it('a later rewind can go back past an earlier one; visibleEvents keeps the rewinds as facts', () => {
    const events = [...session(), event({ kind: 'rewound', toSeq: 3 })];
    events.push(event({ kind: 'user_message', content: 'third' }), event({ kind: 'rewound', toSeq: 1 }));
    expect(visibleEvents(events).map((e) => e.kind)).toEqual(['session_created', 'rewound']);
    expect(projectPayload(events, { system: 'S' }).messages).toEqual([{ role: 'system', content: 'S' }]);
  });

  it('accepts only the last event before a user message', () => {
    const events = session();
    expect(rewindPoints(events)).toEqual([1, 3]);
    expect(rewindProblem(events, 3)).toBeUndefined();
    expect(rewindProblem(events, 5)).toMatch(/inside a turn.*choose one of 1, 3/);
    expect(rewindProblem(events, 7)).toMatch(/nothing after event 7/);
    expect(rewindProblem([...events, event({ kind: 'rewound', toSeq: 3 })], 5)).toMatch(
      /not in the conversation now/,
    );
  });
});
