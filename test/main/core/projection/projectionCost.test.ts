import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import {
  projectPayload,
  projectView,
  selectView,
  validatePayload,
} from '../../../../main/core/projection/index.js';
import type { ProjectionView } from '../../../../main/core/projection/index.js';
import { AT } from './eventFactory.js';

const system = 'You are a careful coding agent.';
const TOTAL = 100_000;
const THROUGH = TOTAL - 100;

/** A 100k-event session (user, assistant with a call, result, repeated) with a compaction near its end. */
function bigLog(): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let seq = 1; seq <= TOTAL; seq++) {
    const turn = Math.floor((seq - 1) / 3);
    const id = `call_${turn}`;
    if (seq === THROUGH + 10) {
      events.push({
        seq,
        at: AT,
        kind: 'compaction',
        through: THROUGH,
        summary: 'long session',
        pinned: 'goal 0',
      });
    } else if (seq % 3 === 1) {
      events.push({ seq, at: AT, kind: 'user_message', content: `goal ${turn}` });
    } else if (seq % 3 === 2) {
      const toolCalls = [{ id, name: 'grep', arguments: '{}' }];
      events.push({ seq, at: AT, kind: 'assistant_message', content: 'searching', toolCalls });
    } else {
      events.push({ seq, at: AT, kind: 'tool_result', toolCallId: id, content: `hits ${turn}` });
    }
  }
  return events;
}

/** Wraps each tail event so every property read is recorded against that event. */
function countingView(view: ProjectionView): {
  view: ProjectionView;
  touched: Set<number>;
  reads: () => number;
} {
  const touched = new Set<number>();
  let reads = 0;
  const watch = <T extends SessionEvent>(event: T): T =>
    new Proxy(event, {
      get(target, key, receiver) {
        touched.add(target.seq);
        reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  const counted: ProjectionView = { tail: view.tail.map(watch) };
  if (view.compaction !== undefined) counted.compaction = watch(view.compaction);
  if (view.firstUserMessage !== undefined) counted.firstUserMessage = watch(view.firstUserMessage);
  return { view: counted, touched, reads: () => reads };
}

describe('projection cost', () => {
  it('projects a compacted 100k-event session from its ~100-event tail alone', () => {
    const events = bigLog();
    const full = selectView(events);
    expect(full.tail).toHaveLength(TOTAL - THROUGH);

    // The view holds only the compaction, the first user message and the tail: nothing else exists
    // for projectView to touch, and the payload still equals the one projected from every event.
    const { view, touched, reads } = countingView({
      compaction: full.compaction,
      firstUserMessage: full.firstUserMessage,
      tail: [...full.tail],
    });
    const payload = projectView(view, { system });

    expect(payload).toEqual(projectPayload(events, { system }));
    expect(validatePayload(payload)).toEqual({ ok: true });
    expect(payload.messages.slice(0, 3).map((message) => message.content)).toEqual([
      system,
      'Session so far: long session',
      'goal 0',
    ]);
    // Touched: the tail (the compaction event is in it) and the first user message; few reads each.
    expect(touched.size).toBe(TOTAL - THROUGH + 1);
    for (const seq of touched) expect(seq === 1 || seq > THROUGH).toBe(true);
    expect(reads()).toBeLessThan(10 * touched.size);
  });
});
